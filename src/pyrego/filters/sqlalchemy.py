"""Data filters as SQLAlchemy 2.x expressions (``pip install 'pyrego[sqlalchemy]'``).

:func:`to_sqlalchemy` turns a filter (the condition tree of
:func:`~pyrego.filters.policy_condition.policy_condition`, or a UCAST
condition) into a
boolean SQLAlchemy expression over the columns it is given, for
``select(...).where(...)``. Values are always bound parameters; nothing is
written into the SQL text. :func:`filter_select` does the whole round: the
policy's filter for one caller, as ``select(model).where(...)``.

The expression selects exactly the rows the policy accepts, evaluated row
by row with a SQL ``NULL`` as Rego's ``null`` (see
:mod:`~pyrego.filters.predicates`): ``status != "closed"`` keeps rows with a
NULL status, as Rego does, where OPA's SQL text (``status <> 'closed'``)
drops them. String tests are case-sensitive on every database: ``LIKE`` with
``/`` escapes, ``GLOB`` on SQLite (whose ``LIKE`` ignores case). On MySQL and
MariaDB, give string columns a binary collation (``utf8mb4_bin``, or
MariaDB's ``utf8mb4_nopad_bin`` where trailing spaces matter): with the
default ``_ci`` collations the database compares strings ignoring case.

Joins: conditions on two tables (``input.tickets.assignee ==
input.users.id``) compare the two tables' columns; select from both (or
join them) and pass both tables' columns. Columns of a table reached
through an outer join can be NULL whatever the schema says: name the table
in ``outer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence

from sqlalchemy import Boolean, ColumnElement, String, and_, false, inspect, literal, or_, select, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

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
    from sqlalchemy import Select

    from pyrego.engine import Engine

__all__ = ["filter_select", "to_sqlalchemy"]


def to_sqlalchemy(condition: Any, columns: Mapping[str, Any], *, outer: Collection[str] = ()) -> ColumnElement[bool]:
    """The filter ``condition`` as a SQLAlchemy boolean expression.

    ``condition``: a filter from
    :func:`~pyrego.filters.policy_condition.policy_condition`
    (:data:`~pyrego.filters.ALWAYS` gives ``true()``, :data:`~pyrego.filters.NEVER`
    ``false()``), the pair it returns, or a UCAST condition. (The trees of
    ``compile_condition`` and OPA's UCAST keep OPA's quirk of negating
    ``<value> < <column>`` comparisons instead of mirroring them.)
    ``columns``: the filter's fields (``"tickets.status"``) to columns or
    mapped attributes (``Ticket.status``), or a table's name to a mapped
    class, ``Table`` or alias whose columns have the fields' names
    (``{"tickets": Ticket}``). ``outer``: tables whose columns can be NULL
    although the schema says NOT NULL (the outer side of an outer join).

    Raises :class:`~pyrego.filters.FilterError` (``adapter_error``) for a
    field with no column and for values no column can be compared with."""
    resolve = _Columns(columns, outer)
    pred = predicates(as_filter(condition), resolve.nullable, resolve.kind)
    return _expression(pred, resolve)


def filter_select(
    engine: Engine,
    query: str,
    model: Any,
    *,
    input: Any = None,
    name: str | None = None,
    unknowns: Sequence[str] | None = None,
    columns: Mapping[str, Any] | None = None,
    mappings: dict[str, Any] | None = None,
) -> Select[Any]:
    """``select(model).where(<the filter of query for this input>)``.

    ``model``: a mapped class or ``Table``; ``name``: the table's name in
    the policy (``input.<name>.<column>``; default the table's own name).
    ``unknowns`` default to ``["input.<name>"]``; ``columns`` adds other
    tables' columns for joins (join them to the select yourself, e.g.
    ``filter_select(...).join(User, ...)``, and list theirs in
    ``unknowns``). Raises :class:`~pyrego.filters.FilterError` where the
    policy cannot be expressed as a filter."""
    from pyrego.filters.policy_condition import policy_condition

    table = _table_name(model)
    name = name or table
    cond, _ = policy_condition(engine, query, input, unknowns=[f"input.{name}"] if unknowns is None else unknowns, mappings=mappings)
    all_columns: dict[str, Any] = {name: model}
    all_columns.update(columns or {})
    return select(model).where(to_sqlalchemy(cond, all_columns))


def _table_name(model: Any) -> str:
    table = getattr(model, "__table__", model)
    name = getattr(table, "name", None)
    if not isinstance(name, str):
        raise adapter_error(f"not a mapped class or table: {model!r}")
    return name


class _Columns:
    """The filter's fields resolved to SQLAlchemy columns."""

    def __init__(self, columns: Mapping[str, Any], outer: Collection[str]) -> None:
        self.columns = columns
        self.outer = frozenset(outer)
        self.cache: dict[str, Any] = {}

    def __call__(self, field: str) -> Any:
        found = self.cache.get(field)
        if found is None:
            found = self.cache[field] = self._find(field)
        return found

    def _find(self, field: str) -> Any:
        if field in self.columns:
            return self.columns[field]
        table, _, name = field.rpartition(".")
        source = self.columns.get(table)
        if source is not None and name:
            column = _column_of(source, name)
            if column is not None:
                return column
        raise adapter_error(f"no column for field {field!r}: add it to the columns given (or its table)")

    def nullable(self, field: str) -> bool:
        if field.rpartition(".")[0] in self.outer:
            return True
        column = _underlying(self(field))
        return column is None or bool(getattr(column, "nullable", True))

    def kind(self, field: str) -> str | None:
        column = self(field)
        try:
            python_type = column.type.python_type
        except (AttributeError, NotImplementedError):
            return None
        if python_type is bool:
            return "boolean"
        if python_type is str:
            return "string"
        if python_type is int:
            return "integer"
        if python_type is float or python_type.__name__ == "Decimal":
            return "number"
        return None


def _column_of(source: Any, name: str) -> Any:
    """Column ``name`` of a mapped class (attribute or column name), Table or alias."""
    attribute = getattr(source, name, None)
    if attribute is not None and hasattr(attribute, "property") and hasattr(attribute, "expression"):
        return attribute
    c = getattr(source, "c", None)
    if c is None:
        try:
            c = inspect(source).columns
        except Exception:
            return None
    return c[name] if name in c else None


def _underlying(column: Any) -> Any:
    """The ``Column`` behind a mapped attribute (None for other expressions)."""
    prop = getattr(column, "property", None)
    cols = getattr(prop, "columns", None)
    if cols:
        return cols[0]
    return column if hasattr(column, "nullable") else None


_COMPARE = {
    "=": lambda c, v: c == v,
    "<>": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


def _expression(p: Predicate, column: _Columns) -> ColumnElement[bool]:
    if isinstance(p, AllOf):
        return and_(*(_expression(x, column) for x in p.items)) if p.items else true()
    if isinstance(p, AnyOf):
        return or_(*(_expression(x, column) for x in p.items)) if p.items else false()
    col = column(p.field)
    if isinstance(p, Compare):
        value = column(p.value.field) if isinstance(p.value, FieldRef) else p.value
        return _COMPARE[p.op](col, value)  # type: ignore[no-any-return]
    if isinstance(p, IsNull):
        return col.is_(None) if p.null else col.is_not(None)  # type: ignore[no-any-return]
    if isinstance(p, InList):
        return col.not_in(p.values) if p.negated else col.in_(p.values)  # type: ignore[no-any-return]
    if isinstance(p, Match):
        cls = _NotMatch if p.negated else _Match
        return cls(col, literal(like_pattern(p.kind, p.text), String()), literal(glob_pattern(p.kind, p.text), String()))
    raise adapter_error(f"unknown predicate {p!r}")


class _Match(FunctionElement[bool]):
    """``column LIKE pattern ESCAPE '/'`` (SQLite: ``column GLOB pattern``).

    Both patterns are bound; each dialect writes the one it uses."""

    type = Boolean()
    name = "pyrego_match"
    inherit_cache = True
    # A comparison: MySQL must not get "= 1" appended as for a boolean value.
    _is_implicitly_boolean = True


class _NotMatch(_Match):
    """The negation of :class:`_Match` (``NOT LIKE``, ``NOT GLOB``)."""

    name = "pyrego_not_match"
    inherit_cache = True


def _parts(element: _Match, compiler: Any, **kw: Any) -> tuple[str, Any, Any]:
    column, like, glob = element.clauses.clauses
    return compiler.process(column, **kw), like, glob


@compiles(_Match)
def _compile_like(element: _Match, compiler: Any, **kw: Any) -> str:
    column, like, _ = _parts(element, compiler, **kw)
    word = "NOT LIKE" if isinstance(element, _NotMatch) else "LIKE"
    return f"{column} {word} {compiler.process(like, **kw)} ESCAPE '/'"


@compiles(_Match, "sqlite")
def _compile_glob(element: _Match, compiler: Any, **kw: Any) -> str:
    column, _, glob = _parts(element, compiler, **kw)
    word = "NOT GLOB" if isinstance(element, _NotMatch) else "GLOB"
    return f"{column} {word} {compiler.process(glob, **kw)}"
