"""``walk(x)``: every ``[path, value]`` pair of a document, as a relation.

The document itself comes first (path ``[]``), then each child in turn,
depth first: array elements by index, object members in key order (OPA's
order), set members in sorted order with the member itself as the path step.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..runtime.values import sort_key, thaw
from .registry import builtin


def _children(value: Any) -> list[tuple[Any, Any]] | None:
    """(path step, child) pairs of a composite, in OPA's order; None for scalars."""
    t = type(value)
    if t is list or t is tuple:
        return list(enumerate(value))
    if t is dict:
        if all(type(k) is str for k in value):
            return sorted(value.items())
        keys = sorted(value, key=lambda k: sort_key(thaw(k)))
        return [(thaw(k), value[k]) for k in keys]
    if t is frozenset or t is set:
        members = sorted((thaw(k) for k in value), key=sort_key)
        return [(m, m) for m in members]
    return None


def walk_pairs(value: Any) -> Iterator[list[Any]]:
    """Yield ``[path, value]`` for ``value`` and everything inside it."""
    # An explicit stack keeps deep documents clear of Python's recursion limit.
    stack: list[tuple[list[Any], Any]] = [([], value)]
    while stack:
        path, node = stack.pop()
        yield [path, node]
        children = _children(node)
        if children:
            for step, child in reversed(children):
                stack.append(([*path, step], child))


@builtin("walk", 1, relation=True)
def walk(x: Any) -> Iterator[list[Any]]:
    return walk_pairs(x)
