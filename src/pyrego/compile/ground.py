"""Ground terms: terms with no variables, refs, calls or closures, and their
values (what the compile stages, code generation and the engine's
``set_input_term`` share)."""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.runtime.values import freeze


def is_ground(t: ast.Term) -> bool:
    """A term with no variables, refs, calls or closures."""
    node: Any = t
    tt = type(node)  # (exact types, scalars not called for: constant rules' values are long arrays)
    if tt is ast.Array or tt is ast.SetTerm:
        return all(type(x) is ast.Scalar or is_ground(x) for x in node.items)
    if tt is ast.Object:
        return all(is_ground(k) and is_ground(v) for k, v in node.items)
    return tt is ast.Scalar


def ground_value(t: ast.Term) -> Any:
    """The value of a ground term (TypeError for any other)."""
    node: Any = t
    tt = type(node)
    if tt is ast.Scalar:
        return node.value
    if tt is ast.Array:
        return [x.value if type(x) is ast.Scalar else ground_value(x) for x in node.items]
    if tt is ast.SetTerm:
        return frozenset(freeze(ground_value(x)) for x in node.items)
    if tt is ast.Object:
        out: dict[Any, Any] = {}
        for k, v in node.items:
            out[freeze(ground_value(k))] = ground_value(v)
        return out
    raise TypeError("not ground")
