"""What the builtin differential tests share: Rego literals for Python values,
calls of one builtin in both engines, and comparison of results in JSON form
(the ``oracle`` fixture is in tests/conftest.py)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from opa_oracle import Oracle
from pyrego.builtins.registry import BuiltinError, lookup
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import to_json_value
from pyrego.runtime.values import UNDEF, thaw

Outcome = tuple[str, Any]


def rego(value: Any) -> str:
    """A value as a Rego literal."""
    t = type(value)
    if t is str:
        return json.dumps(value)
    if t is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if t is int:
        return str(value)
    if t is float:
        return repr(value)
    if t is list:
        return "[" + ", ".join(rego(v) for v in value) + "]"
    if t is dict:
        return "{" + ", ".join(f"{rego(thaw(k))}: {rego(v)}" for k, v in value.items()) + "}"
    if t is frozenset:
        return "{" + ", ".join(rego(thaw(k)) for k in value) + "}" if value else "set()"
    raise TypeError(t)


def plain(value: Any) -> Any:
    """JSON-like value with numbers normalised (1.0 == 1)."""
    if isinstance(value, (Decimal, float)) and not isinstance(value, bool):
        d = Decimal(str(value))
        return int(d) if d == d.to_integral_value() else d
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def same(a: Any, b: Any) -> bool:
    """Equal, numbers up to float precision (OPA computes with 64-bit mantissas)."""
    number = (int, Decimal)
    if isinstance(a, number) and isinstance(b, number) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or math.isclose(float(a), float(b), rel_tol=1e-15)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def ours(name: str, args: list[Any]) -> Outcome:
    """pyrego's builtin ``name`` called directly on ``args``."""
    b = lookup(name)
    assert b is not None, name
    try:
        result = b.fn(EvalContext(), *args) if b.needs_context else b.fn(*args)
    except BuiltinError as exc:
        return "error", (exc.code, f"{name}: {exc}")
    if result is UNDEF:
        return "undefined", None
    return "value", plain(to_json_value(result))


def theirs(oracle: Oracle, name: str, args: list[Any]) -> Outcome:
    """OPA's builtin ``name`` on ``args`` (passed through input, out of the type checker's sight)."""
    operands = ", ".join(f'object.get({{"v": {rego(a)}}}, input.k, null)' for a in args)
    got = oracle.evaluate({}, f"x := {name}({operands})", input={"k": "v"})
    if got.is_error:
        return "error", (got.error_code, got.error_message)
    if not got.bindings:
        return "undefined", None
    return "value", plain(got.bindings[0]["x"])
