"""Condition trees as SQL ``WHERE`` clauses, per dialect, as OPA writes them.

OPA builds the clause with go-sqlbuilder and interpolates the values into
the text; this module writes the same text:

- ``field = v``, ``<>``, ``>``, ``<``, ``>=``, ``<=``; ``field IN (v, ...)``
  (an empty list is ``0 = 1``); ``field LIKE 'pre%'`` for startswith
  (``%pat``, ``%pat%`` for endswith, contains; ``\\``, ``_`` and ``%``
  escaped with a backslash); ``IS NULL`` / ``IS NOT NULL``;
- ``(a AND b)``, ``(a OR b)``, ``NOT a``; the whole prefixed with ``WHERE``;
- strings quoted per dialect: PostgreSQL ``E'...'``, SQL Server
  ``N'...'``, MySQL ``'...'``, each with backslash escapes (``\\'``,
  ``\\n``, ...); SQLite ``'...'`` with ``''`` for a quote and nothing else
  escaped; numbers as quoted strings of their Rego spelling (``E'1.0'``),
  booleans ``TRUE``/``FALSE``.

Values OPA cannot write raise :class:`SQLError` with its message.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.filters.conditions import ALWAYS, NULL, Compound, FieldCondition, FieldRef, Filter
from pyrego.partial.terms import number_text

_OPS = {"eq": "=", "ne": "<>", "gt": ">", "lt": "<", "gte": ">=", "ge": ">=", "lte": "<=", "le": "<="}
_NUMBERS = (int, float, Decimal)


class SQLError(ValueError):
    """A condition go-sqlbuilder cannot write (the message is OPA's)."""


def to_sql(f: Filter, dialect: str) -> str | None:
    """The ``WHERE`` clause of filter ``f`` (``""`` for ALWAYS, None for NEVER)."""
    if f is None:
        return None
    if f is ALWAYS:
        return ""
    return "WHERE " + condition_sql(f, dialect)  # type: ignore[arg-type]


def condition_sql(c: FieldCondition | Compound, dialect: str) -> str:
    if isinstance(c, Compound):
        parts = [condition_sql(x, dialect) for x in c.conditions]
        if c.operator == "not":
            if len(parts) != 1:
                raise SQLError("compound expression 'not' requires exactly one value")
            return "NOT " + parts[0]
        if not parts:
            return ""
        joiner = " AND " if c.operator == "and" else " OR "
        return "(" + joiner.join(parts) + ")"
    return _field(c, dialect)


def _field(c: FieldCondition, dialect: str) -> str:
    op, field, value = c.operator, c.field, c.value
    if value is NULL:
        if op == "eq":
            return f"{field} IS NULL"
        if op == "ne":
            return f"{field} IS NOT NULL"
        raise SQLError("null value can only be used with 'eq' or 'ne' operators")
    raw = c.raw
    if op in _OPS:
        return f"{field} {_OPS[op]} {_value(value, raw, dialect)}"
    if op == "in":
        if type(value) is not list:
            raise SQLError("field operator 'in' requires collection argument")
        items = raw.items if isinstance(raw, (ast.Array, ast.SetTerm)) else [None] * len(value)
        if not value:
            return "0 = 1"
        return f"{field} IN (" + ", ".join(_value(v, r, dialect) for v, r in zip(value, items)) + ")"
    if op in ("startswith", "endswith", "contains"):
        if type(value) is not str:
            raise SQLError(f"'{op}' pattern requires string argument, got {_go_value(value, raw)} {_go_type(value)}")
        pattern = _escaped(value)
        pattern = {"startswith": pattern + "%", "endswith": "%" + pattern, "contains": "%" + pattern + "%"}[op]
        return f"{field} LIKE {_quote(pattern, dialect)}"
    raise SQLError(f"unrecognized operator: {op}")


def _value(v: Any, raw: Any, dialect: str) -> str:
    if isinstance(v, FieldRef):
        return v.field
    if v is None or v is NULL:
        return "NULL"
    t = type(v)
    if t is bool:
        return "TRUE" if v else "FALSE"
    if t in _NUMBERS:
        text = raw.text if isinstance(raw, ast.Scalar) and raw.text is not None else number_text(v)
        return _quote(text, dialect)
    if t is str:
        return _quote(v, dialect)
    if t is list:
        raise SQLError("go-sqlbuilder: unsupported args when interpolating: only byte slices are supported")
    raise SQLError("go-sqlbuilder: unsupported args when interpolating: ")


def _escaped(p: str) -> str:
    return p.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")


_ESCAPES = {"\x00": "\\0", "\b": "\\b", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1a": "\\Z", "'": "\\'", '"': '\\"', "\\": "\\\\"}


def _quote(s: str, dialect: str) -> str:
    d = dialect.lower()
    if d in ("sqlite", "sqlite-internal"):
        return "'" + "".join("'||char(0)||'" if ch == "\x00" else "''" if ch == "'" else ch for ch in s) + "'"
    prefix = "E" if d in ("postgresql", "postgres") else "N" if d == "sqlserver" else ""
    return prefix + "'" + "".join(_ESCAPES.get(ch, ch) for ch in s) + "'"


def _go_type(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t in _NUMBERS:
        return "json.Number"
    if t is list:
        return "[]interface {}"
    if t is dict:
        return "map[string]interface {}"
    return "string"


def _go_value(v: Any, raw: Any) -> str:
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t in _NUMBERS:
        return raw.text if isinstance(raw, ast.Scalar) and raw.text is not None else number_text(v)
    if t is list:
        return "[" + " ".join(_go_value(x, None) for x in v) + "]"
    if t is dict:
        return "map[" + " ".join(f"{k}:{_go_value(x, None)}" for k, x in sorted(v.items())) + "]"
    return str(v)
