"""Data filters as Django ``Q`` objects (``pip install 'pyrego[django]'``).

:func:`to_q` turns a filter (the condition tree of
:func:`~pyrego.filters.policy_condition.policy_condition`, or a UCAST
condition) into a
``Q`` for ``Model.objects.filter(...)``: field lookups (``status__in``,
``prio__lt``, ``assignee__isnull``) where Django has one, and small lookup
expressions where it has none (``<>``, ``NOT IN``, case-sensitive
``startswith``/``endswith``/``contains``: Django's own are case-insensitive
on SQLite). Values are always query parameters. :func:`filter_queryset`
does the whole round for one caller.

The ``Q`` selects exactly the rows the policy accepts, evaluated row by row
with a SQL ``NULL`` as Rego's ``null`` (see
:mod:`~pyrego.filters.predicates`). Fields of another table are reached
through a relation (``users.team`` -> ``assignee__team``): each row is
judged with its related row, or with NULLs where it has none. On MySQL and
MariaDB, string columns need a binary collation (``utf8mb4_bin``) for
case-sensitive comparisons, as in Rego.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from django.core.exceptions import FieldDoesNotExist
from django.db.models import F, Lookup, Q

from pyrego.filters.conditions import FieldRef
from pyrego.filters.predicates import (
    AllOf,
    AnyOf,
    Compare,
    InList,
    IsNull,
    Match,
    Predicate,
    adapter_error,
    as_filter,
    glob_pattern,
    like_pattern,
    predicates,
)

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from pyrego.engine import Engine

__all__ = ["filter_queryset", "to_q"]

_LOOKUPS = {"=": "exact", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}


def to_q(condition: Any, fields: Mapping[str, str], *, model: Any = None) -> Q:
    """The filter ``condition`` as a Django ``Q``.

    ``condition``: a filter from
    :func:`~pyrego.filters.policy_condition.policy_condition`
    (:data:`~pyrego.filters.ALWAYS` gives ``Q()``, :data:`~pyrego.filters.NEVER`
    ``Q(pk__in=[])``), the pair it returns, or a UCAST condition. (The trees of
    ``compile_condition`` and OPA's UCAST keep OPA's quirk of negating
    ``<value> < <column>`` comparisons instead of mirroring them.)
    ``fields``: the filter's fields (``"tickets.status"``) to field paths
    (``"status"``, ``"assignee__team"``), or a table's name to the path
    prefix of its fields (``{"tickets": "", "users": "assignee"}``).
    ``model``: the queried model; with it, columns that cannot be NULL need
    no ``IS NULL`` cases and values of another type than the column's are
    decided as Rego does, and paths through to-many relations are refused.

    Raises :class:`~pyrego.filters.FilterError` (``adapter_error``) for a
    field with no path and for what a ``Q`` cannot express."""
    paths = _Paths(fields, model)
    pred = predicates(as_filter(condition), paths.nullable, paths.kind)
    if pred == AllOf(()):
        return Q()
    return _q(pred, paths)


def filter_queryset(
    engine: Engine,
    query: str,
    queryset: QuerySet[Any],
    *,
    input: Any = None,
    name: str | None = None,
    unknowns: Sequence[str] | None = None,
    fields: Mapping[str, str] | None = None,
    mappings: dict[str, Any] | None = None,
) -> QuerySet[Any]:
    """``queryset.filter(<the filter of query for this input>)``.

    ``name``: the model's table in the policy (``input.<name>.<column>``;
    default its ``db_table``), whose fields are the model's own; ``fields``
    adds other tables' (``{"users": "assignee"}``), whose unknowns go in
    ``unknowns`` (default ``["input.<name>"]``). Raises
    :class:`~pyrego.filters.FilterError` where the policy cannot be expressed
    as a filter."""
    from pyrego.filters.policy_condition import policy_condition

    model = queryset.model
    name = name or model._meta.db_table
    cond, _ = policy_condition(engine, query, input, unknowns=[f"input.{name}"] if unknowns is None else unknowns, mappings=mappings)
    all_fields: dict[str, str] = {name: ""}
    all_fields.update(fields or {})
    return queryset.filter(to_q(cond, all_fields, model=model))


class _Paths:
    """The filter's fields resolved to Django field paths (and what the model says of them)."""

    def __init__(self, fields: Mapping[str, str], model: Any) -> None:
        self.fields = fields
        self.model = model
        self.info: dict[str, tuple[bool, str | None]] = {}

    def __call__(self, field: str) -> str:
        if field in self.fields:
            return self.fields[field]
        table, _, name = field.rpartition(".")
        prefix = self.fields.get(table)
        if prefix is None or not name:
            raise adapter_error(f"no field path for {field!r}: add it (or its table's prefix) to the fields given")
        return f"{prefix}__{name}" if prefix else name

    def nullable(self, field: str) -> bool:
        return self._info(field)[0]

    def kind(self, field: str) -> str | None:
        return self._info(field)[1]

    def _info(self, field: str) -> tuple[bool, str | None]:
        found = self.info.get(field)
        if found is None:
            path = self(field)
            found = self.info[field] = _path_info(self.model, path) if self.model is not None else (True, None)
        return found


def _path_info(model: Any, path: str) -> tuple[bool, str | None]:
    """Whether the column at ``path`` can be NULL, and its values' JSON type."""
    parts = path.split("__")
    nullable = False
    for i, part in enumerate(parts):
        try:
            f = model._meta.get_field(part)
        except FieldDoesNotExist:
            return True, None  # a transform or an annotation: nothing known
        last = i == len(parts) - 1
        if not f.is_relation:
            return (nullable or bool(f.null), _kind(f)) if last else (True, None)
        if not (f.many_to_one or f.one_to_one):
            raise adapter_error(f"{path}: {part} is a to-many relation; a filter compares one row with one related row")
        # A reverse one-to-one may have no row; a nullable key may point at none.
        nullable = nullable or bool(f.null) or not f.concrete
        if last:
            return nullable, _kind(f.target_field) if f.concrete else None
        model = f.related_model
    return True, None


_STRINGS = {"CharField", "TextField", "SlugField", "EmailField", "URLField"}
_INTEGERS = {
    "AutoField",
    "BigAutoField",
    "SmallAutoField",
    "IntegerField",
    "BigIntegerField",
    "SmallIntegerField",
    "PositiveIntegerField",
    "PositiveBigIntegerField",
    "PositiveSmallIntegerField",
}


def _kind(f: Any) -> str | None:
    internal = f.get_internal_type()
    if internal in _STRINGS:
        return "string"
    if internal in _INTEGERS:
        return "integer"
    if internal in ("FloatField", "DecimalField"):
        return "number"
    if internal in ("BooleanField", "NullBooleanField"):
        return "boolean"
    return None


def _never() -> Q:
    return Q(pk__in=[])


def _q(p: Predicate, path: _Paths) -> Q:
    if isinstance(p, (AllOf, AnyOf)):
        if not p.items:
            return ~_never() if isinstance(p, AllOf) else _never()
        out = _q(p.items[0], path)
        for item in p.items[1:]:
            out = out & _q(item, path) if isinstance(p, AllOf) else out | _q(item, path)
        return out
    lhs = path(p.field)
    if isinstance(p, Compare):
        value: Any = F(path(p.value.field)) if isinstance(p.value, FieldRef) else p.value
        if p.op == "<>":
            return Q(NotEqual(F(lhs), value))
        return Q(**{f"{lhs}__{_LOOKUPS[p.op]}": value})
    if isinstance(p, IsNull):
        return Q(**{f"{lhs}__isnull": p.null})
    if isinstance(p, InList):
        if p.negated:
            return Q(NotIn(F(lhs), list(p.values)))
        return Q(**{f"{lhs}__in": list(p.values)})
    if isinstance(p, Match):
        cls = NotMatches if p.negated else Matches
        return Q(cls(F(lhs), (p.kind, p.text)))
    raise adapter_error(f"unknown predicate {p!r}")


class NotEqual(Lookup):  # type: ignore[type-arg]
    """``lhs <> rhs`` (false where either is NULL)."""

    lookup_name = "pyrego_ne"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} <> {rhs}", [*lhs_params, *rhs_params]


class NotIn(Lookup):  # type: ignore[type-arg]
    """``lhs NOT IN (values)`` (false where lhs is NULL); ``values`` non-empty."""

    lookup_name = "pyrego_not_in"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        marks = ", ".join(["%s"] * len(self.rhs))
        return f"{lhs} NOT IN ({marks})", [*lhs_params, *self.rhs]


class Matches(Lookup):  # type: ignore[type-arg]
    """A case-sensitive ``startswith``/``endswith``/``contains`` (rhs ``(kind, text)``):
    ``LIKE ... ESCAPE '/'``, ``GLOB`` on SQLite."""

    lookup_name = "pyrego_matches"
    prepare_rhs = False
    negated = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        kind, text = self.rhs
        word = "NOT LIKE" if self.negated else "LIKE"
        return f"{lhs} {word} %s ESCAPE '/'", [*lhs_params, like_pattern(kind, text)]

    def as_sqlite(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        kind, text = self.rhs
        word = "NOT GLOB" if self.negated else "GLOB"
        return f"{lhs} {word} %s", [*lhs_params, glob_pattern(kind, text)]


class NotMatches(Matches):
    """The negation of :class:`Matches` (false where lhs is NULL)."""

    lookup_name = "pyrego_not_matches"
    negated = True
