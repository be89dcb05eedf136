"""``walk(x)``: every ``[path, value]`` pair of a document, as a relation.

The document itself comes first (path ``[]``), then each child in turn,
depth first: array elements by index, object members in key order (OPA's
order), set members in sorted order with the member itself as the path step.

Each pair's path is a new array, so the output grows with the document's
size times its depth: the walk counts every path step against the
evaluation's deadline.

A caller's input may contain itself (it is read by reference), and a walk
through such a cycle would never end: once paths grow past ``DEEP`` steps
(deeper than real documents go), the walked value is searched for a cycle
once, and one found ends the evaluation with an error
that names it (see :mod:`pyrego.runtime.input_faults`).
"""

from __future__ import annotations

from typing import Any, Iterator

from pyrego.builtins.limits import TICK, check
from pyrego.builtins.registry import builtin
from pyrego.errors import EvalTypeError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.input_faults import cycle_error, cycle_message
from pyrego.runtime.values import check_plain, sort_key, thaw

DEEP = 256


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
    check_plain(value)  # (a caller's object of no Rego type is an error, not a leaf)
    return None


def walk_pairs(value: Any, ctx: EvalContext | None = None) -> Iterator[list[Any]]:
    """Yield ``[path, value]`` for ``value`` and everything inside it."""
    # An explicit stack keeps deep documents clear of Python's recursion limit.
    stack: list[tuple[list[Any], Any]] = [([], value)]
    work = 0  # path steps made since the deadline was last checked
    searched = False  # (for a cycle, once)
    while stack:
        path, node = stack.pop()
        work += len(path) + 1
        if work > TICK:
            # (Deep paths add up to TICK soon: a cycle is looked for here, not per node.)
            work = 0
            if ctx is not None:
                check(ctx)
            if len(path) > DEEP and not searched:
                searched = True
                _refuse_cycle(value, ctx)
        yield [path, node]
        children = _children(node)
        if children:
            if len(children) > TICK and ctx is not None:
                # a wide node: check the deadline as its paths are made too
                for i in range(len(children) - 1, -1, -1):
                    if not i % TICK:
                        check(ctx)
                    step, child = children[i]
                    stack.append(([*path, step], child))
                continue
            for step, child in reversed(children):
                stack.append(([*path, step], child))


def _refuse_cycle(value: Any, ctx: EvalContext | None) -> None:
    """Raise the error for a walk of ``value`` that contains itself: named in
    terms of the input where the cycle is the input's (it always is, unless a
    custom builtin made it)."""
    where = cycle_message(value, "walk's operand")
    if where is None:
        return
    err = cycle_error(ctx.input) if ctx is not None else None
    raise err or EvalTypeError(f"walk: its operand contains itself ({where}): a cyclic value is not a Rego value")


@builtin("walk", 1, cancellable=True)
def walk(ctx: EvalContext, x: Any) -> Iterator[list[Any]]:
    return walk_pairs(x, ctx)
