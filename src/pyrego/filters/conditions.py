"""The condition tree a data filter is made of (target-independent).

A filter is the answer to "which rows may this caller see": a condition on
columns, built from the residual queries of partial evaluation. It is
:data:`ALWAYS` (every row), :data:`NEVER` (none), or a :class:`Condition`:

- :class:`FieldCondition` compares one column (``field``, ``"table.column"``
  after mappings) with a constant or another column. ``operator`` is one of
  ``eq ne gt lt gte lte`` (comparisons), ``in`` (``value`` a list),
  ``startswith endswith contains`` (``value`` a string). ``value`` is a
  JSON-like Python value, :data:`NULL` (SQL ``NULL``: ``eq`` is ``IS NULL``,
  ``ne`` ``IS NOT NULL``) or a :class:`FieldRef` (another column).
- :class:`Compound` combines conditions: ``and``/``or`` over two or more,
  ``not`` over exactly one.

This is the tree OPA's Compile API expresses as UCAST (:mod:`.ucast` writes
it so) and turns into SQL (:mod:`.sql`); adapters for other query builders
(an ORM's filter expressions) are written against it. Walk it with
:func:`walk`; :attr:`FieldCondition.raw` keeps the Rego term a constant came
from (number spellings as written, for exact SQL text).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Iterator, Union

COMPARISONS = ("eq", "ne", "gt", "lt", "gte", "lte")
PATTERNS = ("startswith", "endswith", "contains")


class _Null:
    """The SQL ``NULL`` a condition compares with (``value is NULL``)."""

    _instance: _Null | None = None

    def __new__(cls) -> _Null:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()


@dataclass(frozen=True)
class FieldRef:
    """Another column as a comparison's value (``tickets.assignee = users.id``)."""

    field: str


@dataclass(frozen=True)
class FieldCondition:
    """``field <operator> value``."""

    operator: str
    field: str
    value: Any
    raw: Any = dc_field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Compound:
    """``and`` / ``or`` over ``conditions``; ``not`` over one condition."""

    operator: str
    conditions: tuple[Condition, ...]


Condition = Union[FieldCondition, Compound]


class _Always:
    """The filter that lets every row through (no condition)."""

    def __repr__(self) -> str:
        return "ALWAYS"


#: Every row passes (the policy holds whatever the unknowns are).
ALWAYS = _Always()
#: No row passes (the policy never holds).
NEVER = None

Filter = Union[Condition, _Always, None]


def walk(cond: Condition) -> Iterator[Condition]:
    """``cond`` and every condition inside it, depth first."""
    yield cond
    if isinstance(cond, Compound):
        for c in cond.conditions:
            yield from walk(c)
