"""Filters as negation-free predicates for query builders, with Rego's null semantics.

A filter's condition tree (:mod:`.conditions`) says what the policy says of a
row; a database reads it with SQL's three-valued logic, where ``NULL``
compared with anything is unknown and ``NOT unknown`` is unknown too. The two
disagree on rows with ``NULL`` columns: in Rego ``null != "bob"`` holds,
``null < 3`` holds (null sorts before every other value), ``not x == "bob"``
holds for a null ``x``, and ``null == null`` holds. OPA's own SQL (``WHERE
assignee <> 'bob'``) drops such rows.

:func:`predicates` rewrites a filter so that a database selects exactly the
rows Rego's evaluation would, a SQL ``NULL`` being a JSON ``null``: ``not``
is pushed down to the comparisons and each comparison (or its complement)
becomes plain SQL tests with their ``IS NULL`` cases spelled out, so the
result has no ``NOT`` over anything that could be unknown. A test on a
column the schema declares ``NOT NULL`` needs no ``IS NULL`` case: adapters
pass ``nullable`` to leave those out. Where the column's type is known
(``kind``: ``"string"``, ``"number"``, ``"integer"`` or ``"boolean"``), a
value of another type is decided as Rego decides it (``3 == "3"`` is false,
every string is above every number) rather than left to the database's
conversions, and a whole-number column is never compared with a fraction
(drivers and ORMs round or truncate ``2.5`` to the column's type: ``x ==
2.5`` is false, ``x < 2.5`` is ``x < 3``).

The result is built from :class:`Compare`, :class:`IsNull`, :class:`InList`,
:class:`Match`, :class:`AllOf` and :class:`AnyOf` (:data:`TRUE` is an empty
:class:`AllOf`, :data:`FALSE` an empty :class:`AnyOf`); each has plain SQL
meaning, with ``NULL`` operands making a test false. The SQLAlchemy and
Django adapters translate these one to one.

:func:`as_filter` accepts what adapters are given: a filter, the pair
:func:`~.policy_condition.policy_condition` (or
:func:`~pyrego.filters.compile_condition`) returns, or a UCAST condition (from
``compile_filters(target="ucast")`` or OPA's Compile API itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Union

from pyrego.filters.conditions import ALWAYS, COMPARISONS, NULL, PATTERNS, Compound, FieldCondition, FieldRef, Filter
from pyrego.filters.errors import FilterError

#: The value types a column can be compared with.
SCALARS = (bool, int, float, Decimal, str)
SQL_OPERATORS = {"eq": "=", "ne": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
# The complement of each comparison when null sorts first (Rego's order).
_COMPLEMENT = {"eq": "ne", "ne": "eq", "lt": "gte", "gte": "lt", "lte": "gt", "gt": "lte"}


@dataclass(frozen=True)
class Compare:
    """``field <op> value`` in SQL (``op`` one of ``= <> < <= > >=``); ``value``
    a scalar or a :class:`~.conditions.FieldRef`, never null."""

    op: str
    field: str
    value: Any


@dataclass(frozen=True)
class IsNull:
    """``field IS NULL`` (``null`` true) or ``field IS NOT NULL``."""

    field: str
    null: bool


@dataclass(frozen=True)
class InList:
    """``field IN (values)`` or, ``negated``, ``field NOT IN (values)``; ``values``
    non-empty, scalars only."""

    field: str
    values: tuple[Any, ...]
    negated: bool = False


@dataclass(frozen=True)
class Match:
    """A string test, case-sensitive: ``kind`` ``startswith``, ``endswith`` or
    ``contains`` of ``text`` (literal, no wildcards); ``negated`` for NOT."""

    kind: str
    field: str
    text: str
    negated: bool = False


@dataclass(frozen=True)
class AllOf:
    """Every item holds (``TRUE`` when empty)."""

    items: tuple[Predicate, ...]


@dataclass(frozen=True)
class AnyOf:
    """Some item holds (``FALSE`` when empty)."""

    items: tuple[Predicate, ...]


Predicate = Union[Compare, IsNull, InList, Match, AllOf, AnyOf]
TRUE = AllOf(())
FALSE = AnyOf(())


def adapter_error(message: str) -> Exception:
    """The error adapters raise for what they cannot express (``code`` ``adapter_error``)."""
    return FilterError("adapter_error", message)


def as_filter(obj: Any) -> Filter:
    """A filter from what an adapter is given: a :data:`~.conditions.Filter`,
    ``(filter, partial_result)`` as :func:`~.policy_condition.policy_condition`
    returns it, a UCAST condition (``{}`` every row, None none), or a Compile
    API response ``{"query": <UCAST>, ...}``. A SQL text is refused: it
    cannot be turned back into an expression."""
    if obj is None or obj is ALWAYS or isinstance(obj, (FieldCondition, Compound)):
        return obj  # type: ignore[no-any-return]
    if isinstance(obj, tuple) and len(obj) == 2:
        return as_filter(obj[0])
    if isinstance(obj, dict):
        if "query" in obj and "type" not in obj:
            return as_filter(obj["query"])
        return from_ucast(obj)
    if isinstance(obj, str):
        raise adapter_error(
            "a SQL text cannot be turned into an expression: use policy_condition or compile_filters(target='ucast')"
        )
    raise adapter_error(f"not a filter: {type(obj).__name__}")


def from_ucast(node: dict[str, Any] | None) -> Filter:
    """A UCAST condition (OPA's Compile API, ``target="ucast"``) as a filter."""
    if node is None:
        return None
    if node == {}:
        return ALWAYS
    return _ucast_node(node)


def _ucast_node(node: Any) -> FieldCondition | Compound:
    if not isinstance(node, dict):
        raise adapter_error(f"UCAST: not a condition: {node!r}")
    kind, op, value = node.get("type"), node.get("operator"), node.get("value")
    if kind == "compound" and op in ("and", "or", "not") and isinstance(value, list):
        return Compound(op, tuple(_ucast_node(x) for x in value))
    if kind == "field" and isinstance(node.get("field"), str) and isinstance(op, str):
        if isinstance(value, dict) and set(value) == {"field"}:
            value = FieldRef(value["field"])
        elif value is None:
            value = NULL
        return FieldCondition(op, node["field"], value)
    raise adapter_error(f"UCAST: not a condition: {node!r}")


def predicates(
    f: Filter,
    nullable: Callable[[str], bool] = lambda field: True,
    kind: Callable[[str], str | None] = lambda field: None,
) -> Predicate:
    """``f`` as a negation-free predicate that holds for exactly the rows the
    policy accepts (``NULL`` read as Rego's ``null``). ``nullable(field)``:
    whether the column can be ``NULL`` (default: every column can);
    ``kind(field)``: the JSON type of its values (``"string"``, ``"number"``,
    ``"integer"`` for whole numbers only, ``"boolean"``) or None where unknown.

    Raises :class:`~pyrego.filters.FilterError` (``adapter_error``) for
    operators and values no column comparison can express."""
    if f is None:
        return FALSE
    if f is ALWAYS:
        return TRUE
    return _node(f, False, _Columns(nullable, kind))  # type: ignore[arg-type]


# The order of Rego's values of different types (null first).
_RANKS = {"boolean": 1, "number": 2, "integer": 2, "string": 3}


def value_kind(v: Any) -> str | None:
    """The JSON type of a scalar (``"boolean"``, ``"number"``, ``"string"``)."""
    if type(v) is bool:
        return "boolean"
    if isinstance(v, (int, float, Decimal)):
        return "number"
    if isinstance(v, str):
        return "string"
    return None


class _Columns:
    """What the adapter knows of the columns: whether each can be NULL, its type."""

    def __init__(self, nullable: Callable[[str], bool], kind: Callable[[str], str | None]) -> None:
        self.nullable = nullable
        self.kind = kind

    def other_kind(self, field: str, value: Any) -> int | None:
        """How the column's type orders against ``value``'s (-1 below, 1 above)
        where they differ and both are known; None otherwise."""
        column = _RANKS.get(self.kind(field) or "")
        other = _RANKS.get(value_kind(value) or "")
        if column is None or other is None or column == other:
            return None
        return -1 if column < other else 1


def _node(c: FieldCondition | Compound, negated: bool, rw: _Columns) -> Predicate:
    if isinstance(c, Compound):
        if c.operator == "not":
            if len(c.conditions) != 1:
                raise adapter_error("compound 'not' needs exactly one condition")
            return _node(c.conditions[0], not negated, rw)
        if c.operator not in ("and", "or"):
            raise adapter_error(f"unknown compound operator {c.operator!r}")
        items = tuple(_node(x, negated, rw) for x in c.conditions)
        # De Morgan: under a negation, and becomes or.
        return _all(items) if (c.operator == "and") != negated else _any(items)
    return _field(c, negated, rw)


def _field(c: FieldCondition, negated: bool, rw: _Columns) -> Predicate:
    op, field, value = c.operator, c.field, c.value
    nullable = rw.nullable
    if op in COMPARISONS:
        if negated:
            op = _COMPLEMENT[op]
        if value is NULL or value is None:
            return _versus_null(op, field)
        if isinstance(value, FieldRef):
            return _versus_column(op, field, value, nullable)
        _check_scalar(op, field, value)
        order = rw.other_kind(field, value)
        if order is not None:
            return _across_types(op, field, order)
        if rw.kind(field) == "integer" and type(value) is not bool:
            if not _integral(value):
                op, value = _whole(op, value)
                if op in ("eq", "ne"):
                    return FALSE if op == "eq" else TRUE  # no whole number equals 2.5
            value = int(value)
        test = Compare(SQL_OPERATORS[op], field, value)
        # null is unequal to every value and sorts before it.
        if op in ("ne", "lt", "lte") and nullable(field):
            return _any((test, IsNull(field, True)))
        return test
    if op == "in":
        return _membership(field, value, negated, rw)
    if op in PATTERNS:
        if type(value) is not str:
            raise adapter_error(f"{op}: {field} can only be tested against a string, not {value!r}")
        if rw.kind(field) not in (None, "string"):
            return TRUE if negated else FALSE  # a type error in Rego: undefined
        if not negated:
            return Match(op, field, value)  # not a string (null): false
        unmatched = Match(op, field, value, negated=True)
        return _any((unmatched, IsNull(field, True))) if nullable(field) else unmatched
    raise adapter_error(f"unknown operator {op!r} on {field}")


def _across_types(op: str, field: str, order: int) -> Predicate:
    """A column compared with a value of another type: decided by the types'
    order (``order`` -1: the column's type is below), null below both."""
    if op == "eq":
        return FALSE
    if op == "ne":
        return TRUE
    if op in ("lt", "lte"):
        return TRUE if order < 0 else IsNull(field, True)
    return IsNull(field, False) if order > 0 else FALSE


def _versus_null(op: str, field: str) -> Predicate:
    # null is the least value: nothing is below it, everything at or above.
    cases: dict[str, Predicate] = {
        "eq": IsNull(field, True),
        "lte": IsNull(field, True),
        "ne": IsNull(field, False),
        "gt": IsNull(field, False),
        "lt": FALSE,
        "gte": TRUE,
    }
    return cases[op]


def _versus_column(op: str, field: str, other: FieldRef, nullable: Callable[[str], bool]) -> Predicate:
    test = Compare(SQL_OPERATORS[op], field, other)
    a_null, b_null = nullable(field), nullable(other.field)
    extra: list[Predicate] = []
    # The cases where one side or both are null, in Rego's order (null first).
    if op == "eq" and a_null and b_null:
        extra.append(_all((IsNull(field, True), IsNull(other.field, True))))
    elif op == "ne":
        if a_null:
            extra.append(_all((IsNull(field, True), IsNull(other.field, False))) if b_null else IsNull(field, True))
        if b_null:
            extra.append(_all((IsNull(field, False), IsNull(other.field, True))) if a_null else IsNull(other.field, True))
    elif op == "lt" and a_null:
        extra.append(_all((IsNull(field, True), IsNull(other.field, False))) if b_null else IsNull(field, True))
    elif op == "lte" and a_null:
        extra.append(IsNull(field, True))
    elif op == "gt" and b_null:
        extra.append(_all((IsNull(field, False), IsNull(other.field, True))) if a_null else IsNull(other.field, True))
    elif op == "gte" and b_null:
        extra.append(IsNull(other.field, True))
    return _any((test, *extra)) if extra else test


def _membership(field: str, value: Any, negated: bool, rw: _Columns) -> Predicate:
    if not isinstance(value, (list, tuple)):
        raise adapter_error(f"in: {field} needs a list of values, not {value!r}")
    has_null = any(v is None or v is NULL for v in value)
    values: list[Any] = []
    for v in value:
        if v is None or v is NULL:
            continue
        _check_scalar("in", field, v)
        if rw.other_kind(field, v) is not None or (rw.kind(field) == "integer" and not _integral(v)):
            continue  # never equal to the column's values
        if rw.kind(field) == "integer":
            v = int(v)
        if not any(type(x) is type(v) and x == v for x in values):  # true and 1 stay apart
            values.append(v)
    if not negated:
        parts: list[Predicate] = [InList(field, tuple(values))] if values else []
        if has_null:
            parts.append(IsNull(field, True))
        return _any(tuple(parts))
    if has_null:
        return _all((InList(field, tuple(values), negated=True), IsNull(field, False))) if values else IsNull(field, False)
    if not values:
        return TRUE
    test = InList(field, tuple(values), negated=True)
    return _any((test, IsNull(field, True))) if rw.nullable(field) else test


def _integral(v: Any) -> bool:
    return type(v) is int or (isinstance(v, (float, Decimal)) and v == int(v))


def _whole(op: str, v: Any) -> tuple[str, Any]:
    """A comparison of a whole-number column with a fractional ``v`` as one with
    a whole number (databases and ORMs would round or truncate ``v``)."""
    import math

    if op in ("lt", "gte"):
        return op, math.ceil(v)  # x < 2.5: x < 3
    if op in ("lte", "gt"):
        return op, math.floor(v)  # x <= 2.5: x <= 2
    return op, v


def _check_scalar(op: str, field: str, value: Any) -> None:
    if not isinstance(value, SCALARS):
        raise adapter_error(f"{op}: {field} cannot be compared with {value!r} (only strings, numbers and booleans)")


def _all(items: tuple[Predicate, ...]) -> Predicate:
    out: list[Predicate] = []
    for item in items:
        if item == FALSE:
            return FALSE
        out.extend(item.items if isinstance(item, AllOf) else (item,))
    return out[0] if len(out) == 1 else AllOf(tuple(out))


def _any(items: tuple[Predicate, ...]) -> Predicate:
    out: list[Predicate] = []
    for item in items:
        if item == TRUE:
            return TRUE
        out.extend(item.items if isinstance(item, AnyOf) else (item,))
    return out[0] if len(out) == 1 else AnyOf(tuple(out))


def like_pattern(kind: str, text: str) -> str:
    """A ``LIKE ... ESCAPE '/'`` pattern matching ``text`` literally (``[`` too, for SQL Server)."""
    escaped = "".join("/" + ch if ch in "/%_[" else ch for ch in text)
    return {"startswith": escaped + "%", "endswith": "%" + escaped, "contains": "%" + escaped + "%"}[kind]


def glob_pattern(kind: str, text: str) -> str:
    """A SQLite ``GLOB`` pattern (case-sensitive) matching ``text`` literally."""
    escaped = "".join("[" + ch + "]" if ch in "*?[" else ch for ch in text)
    return {"startswith": escaped + "*", "endswith": "*" + escaped, "contains": "*" + escaped + "*"}[kind]


def fields_of(p: Predicate) -> set[str]:
    """Every column ``p`` reads (``"table.column"``)."""
    if isinstance(p, (AllOf, AnyOf)):
        out: set[str] = set()
        for item in p.items:
            out |= fields_of(item)
        return out
    found = {p.field}
    if isinstance(p, Compare) and isinstance(p.value, FieldRef):
        found.add(p.value.field)
    return found
