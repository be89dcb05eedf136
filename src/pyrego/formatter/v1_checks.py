"""The checks OPA makes before writing v0 code as v1 (``opa fmt --v0-v1``):
no rule may be named after a v1 keyword, and no deprecated builtin may be
called (they do not exist in v1)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from .. import ast
from ..errors import Location, RegoError, RegoParseError, RegoTypeError

__all__ = ["check_v1_compatible", "DEPRECATED_BUILTINS"]

#: Builtins that Rego v1 no longer has.
DEPRECATED_BUILTINS = frozenset(
    {
        "any",
        "all",
        "re_match",
        "net.cidr_overlap",
        "set_diff",
        "cast_array",
        "cast_set",
        "cast_string",
        "cast_boolean",
        "cast_null",
        "cast_object",
    }
)
_V1_ONLY_KEYWORDS = ("if", "contains", "in", "every")


def check_v1_compatible(module: ast.Module, text: str) -> list[RegoError]:
    """The problems that keep a v0 module from being written as v1."""
    lines = text.split("\n")

    def line(loc: Location) -> str | None:
        return lines[loc.row - 1].rstrip("\r") if 0 < loc.row <= len(lines) else None

    errors: list[RegoError] = []
    for rule in module.rules:
        head = rule.head
        name = head.ref.head.name if isinstance(head.ref.head, ast.Var) else ""
        if not head.ref.path and name in _V1_ONLY_KEYWORDS:
            msg = f"{name} keyword cannot be used for rule name"
            errors.append(RegoParseError(msg, rule.location, source_line=line(rule.location)))
    calls: list[ast.Call] = []
    for rule in module.rules:
        calls.extend(_deprecated_calls(rule))
    calls.sort(key=lambda c: (c.location.row, c.location.col))
    for call in calls:
        msg = f"deprecated built-in function calls in expression: {call.op}"
        errors.append(RegoTypeError(msg, call.location, source_line=line(call.location)))
    return errors


def _deprecated_calls(rule: ast.Rule) -> Iterator[ast.Call]:
    r: ast.Rule | None = rule
    while r is not None:
        h = r.head
        nodes: list[object] = [h.ref, h.key, h.value, *(h.args or ()), *r.body]
        for node in nodes:
            for call in _calls(node):
                if call.op in DEPRECATED_BUILTINS and call.op_ref is not None:
                    yield call
        r = r.else_


def _calls(node: object) -> Iterator[ast.Call]:
    """Every call in a node (terms, expressions, bodies), depth first."""
    stack = [node]
    while stack:
        x = stack.pop()
        if x is None or isinstance(x, (str, int, float, bool, Decimal, Location)):
            continue
        if isinstance(x, ast.Call):
            yield x
            stack.extend(reversed(x.args))
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif isinstance(x, ast.Expr):
            stack.extend(reversed([x.statement, *x.with_mods]))
        elif hasattr(x, "__slots__"):
            stack.extend(reversed([getattr(x, f) for f in x.__slots__ if f != "location"]))  # type: ignore[attr-defined]
