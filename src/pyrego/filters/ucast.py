"""Condition trees as UCAST objects, as OPA's Compile API returns them.

``{"type": "field", "operator": "eq", "field": "tickets.a", "value": 1}``,
``{"type": "compound", "operator": "and", "value": [...]}``; another column
as ``{"field": "users.id"}``, NULL as ``None``. :data:`ALWAYS` is ``{}``,
:data:`NEVER` ``None``.

Numbers come out as a JSON decoder reads OPA's output, which carries them
as 64-bit floats: whole numbers below 1e21 as ``int``, others as ``float``
(``1.0`` is ``1``, ``10**23`` is ``1e+23``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pyrego.filters.conditions import ALWAYS, NULL, Compound, FieldCondition, FieldRef, Filter


def to_ucast(f: Filter) -> dict[str, Any] | None:
    if f is None:
        return None
    if f is ALWAYS:
        return {}
    return _node(f)  # type: ignore[arg-type]


def _node(c: FieldCondition | Compound) -> dict[str, Any]:
    if isinstance(c, Compound):
        return {"type": "compound", "operator": c.operator, "value": [_node(x) for x in c.conditions]}
    return {"type": "field", "operator": c.operator, "field": c.field, "value": json_value(c.value)}


def json_value(v: Any) -> Any:
    """A condition's value as it reads back from OPA's JSON."""
    if v is NULL or v is None:
        return None
    if isinstance(v, FieldRef):
        return {"field": v.field}
    t = type(v)
    if t is bool or t is str:
        return v
    if t in (int, float, Decimal):
        return go_float(v)
    if t is list or t is tuple:
        return [json_value(x) for x in v]
    if t is dict:
        return {k: json_value(x) for k, x in v.items()}
    return v


def go_float(v: Any) -> Any:
    """A number as a float64 written by Go's JSON encoder and read back by Python's."""
    try:
        f = float(v)
    except OverflowError:
        return v
    if f != f or f in (float("inf"), float("-inf")):
        return v
    if f.is_integer() and abs(f) < 1e21:
        return int(Decimal(repr(f)))
    return f
