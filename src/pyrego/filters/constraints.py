"""What each filter target and dialect can express (OPA's compile constraints).

=========================  ==================================  ===================================
target / dialect           builtins                            features
=========================  ==================================  ===================================
sql postgresql/mysql/      ``== != < <= > >=``, ``in``,        ``not``, field = field,
sqlserver                  ``startswith endswith contains``    existence (``x := input.t.c``)
sql sqlite                 ``== != < <= > >=``, ``in``         as above
ucast all                  all of the above                    ``not``, field = field
ucast prisma               all of the above                    ``not``, existence
ucast linq                 comparisons, ``in``                 none
ucast (any other dialect)  comparisons                         none
=========================  ==================================  ===================================
"""

from __future__ import annotations

from dataclasses import dataclass

_UCAST_BUILTINS = frozenset({"eq", "neq", "lt", "lte", "gt", "gte"})
_ALL_BUILTINS = _UCAST_BUILTINS | {"internal.member_2", "startswith", "endswith", "contains"}
_SQLITE_BUILTINS = _UCAST_BUILTINS | {"internal.member_2"}
_LINQ_BUILTINS = _UCAST_BUILTINS | {"internal.member_2"}


class ConstraintError(ValueError):
    """A target/dialect pair no filter can be made for."""


@dataclass(frozen=True)
class Constraint:
    target: str
    variant: str
    builtins: frozenset[str]
    features: frozenset[str]

    def __str__(self) -> str:
        return self.target if not self.variant else f"{self.target} ({self.variant})"

    def builtin_error(self, name: str) -> str | None:
        return None if name in self.builtins else f"unsupported for {self}"

    def feature_error(self, feature: str) -> str | None:
        return None if feature in self.features else f'unsupported feature "{feature}" for {self}'


def constraint(target: str, dialect: str) -> Constraint:
    """The constraint of ``target``/``dialect``; raises :class:`ConstraintError` as OPA refuses it."""
    if target == "sql":
        v = dialect.lower()
        if v == "sqlite":
            builtins = _SQLITE_BUILTINS
        elif v in ("mysql", "postgresql", "sqlserver", "sqlite-internal"):
            builtins = _ALL_BUILTINS
        else:
            raise ConstraintError(f"unsupported variant for {target}: {dialect}")
        return Constraint("SQL", dialect, builtins, frozenset({"not", "field-ref", "existence-ref"}))
    if target == "ucast":
        v = dialect.lower()
        if v == "all":
            return Constraint("UCAST", v, _ALL_BUILTINS, frozenset({"not", "field-ref"}))
        if v == "prisma":
            return Constraint("UCAST", v, _ALL_BUILTINS, frozenset({"not", "existence-ref"}))
        if v == "linq":
            return Constraint("UCAST", "LINQ", _LINQ_BUILTINS, frozenset())
        return Constraint("UCAST", "", _UCAST_BUILTINS, frozenset())
    raise ConstraintError(f"unknown target/dialect combination: {target}/{dialect}")
