"""Faults of a caller's input that only show where an evaluation reads them.

``input`` is read by reference (nothing is converted or copied per
evaluation), so a Python caller can pass what JSON cannot hold:

- a value that contains itself (``d = {}; d["a"] = d``). An evaluation that
  only looks into it answers as for any other; one that goes through the
  cycle would never end (``walk``) or would run into Python's recursion
  limit (equality of two such values, ``json.marshal``, converting a
  result). Those end with an error that names where the value holds itself
  (``input.a is input``) instead.
- a ``Decimal`` NaN. Python's ``Decimal`` refuses to order a NaN (and to
  compare or hash a signaling one): an evaluation that tries ends with an
  error naming it, as an ``OrderedDict`` in input does, never with an
  internal error. (A float NaN orders as Python orders it: every ordering
  comparison with it is false.)

The searches run only once an evaluation has failed that way (or ``walk``
has gone deeper than any real document does), so evaluations that succeed
pay nothing. Each visits an object once (shared parts are not walked again)
and uses no recursion.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from pyrego.errors import EvalRecursionError, EvalTypeError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def find_cycle(value: Any) -> tuple[list[Any], list[Any]] | None:
    """``(inner, outer)`` where ``value`` holds itself: the path steps of a
    place inside ``value`` that is the very object at the shorter path
    ``outer`` (a prefix of ``inner``); None for a value without a cycle.
    Objects, arrays and tuples are searched; set members and object keys are
    hashable, so they are never cyclic."""
    t = type(value)
    if t is not dict and t is not list and t is not tuple:
        return None
    # id -> (parent's id, step): each object's path, as first reached.
    parent: dict[int, tuple[int, Any] | None] = {id(value): None}
    on_path = {id(value)}
    done: set[int] = set()
    stack: list[tuple[Any, Any]] = [(value, _steps(value))]
    while stack:
        node, steps = stack[-1]
        for step, child in steps:
            ct = type(child)
            if ct is not dict and ct is not list and ct is not tuple:
                continue
            key = id(child)
            if key in on_path:
                return [*_path(parent, id(node)), step], _path(parent, key)
            if key in done:
                continue  # (shared, not cyclic: already searched)
            parent[key] = (id(node), step)
            on_path.add(key)
            stack.append((child, _steps(child)))
            break
        else:
            stack.pop()
            on_path.discard(id(node))
            done.add(id(node))
    return None


def _steps(node: Any) -> Any:
    return iter(node.items()) if type(node) is dict else enumerate(node)


def _path(parent: dict[int, tuple[int, Any] | None], key: int) -> list[Any]:
    steps = []
    link = parent[key]
    while link is not None:
        key, step = link
        steps.append(step)
        link = parent[key]
    steps.reverse()
    return steps


def show_path(root: str, steps: list[Any]) -> str:
    """``input.a[0]["b c"]``: a ref to the place at ``steps`` under ``root``."""
    out = [root]
    for step in steps:
        if type(step) is str and _IDENTIFIER.fullmatch(step):
            out.append(f".{step}")
        elif type(step) is str or type(step) is int:
            out.append(f"[{json.dumps(step)}]")
        else:
            out.append(f"[{step!r}]")
    return "".join(out)


def cycle_message(value: Any, root: str = "input") -> str | None:
    """``input.a is input (input contains itself)`` for a cyclic ``value``
    named ``root``; None where it has no cycle."""
    found = find_cycle(value)
    if found is None:
        return None
    inner, outer = found
    return f"{show_path(root, inner)} is {show_path(root, outer)}"


def cycle_error(value: Any, root: str = "input") -> EvalTypeError | None:
    """The error of an evaluation that went through a cycle of ``value`` (the
    input, where ``root`` is ``input``); None where it has none."""
    where = cycle_message(value, root)
    if where is None:
        return None
    return EvalTypeError(
        f"{root} contains itself ({where}): a cyclic value is not a Rego value (pass {root} without cycles)"
    )


def find_nan(value: Any) -> list[Any] | None:
    """The path steps of a ``Decimal`` NaN inside ``value`` (``[]``: ``value``
    itself); None where it holds none."""
    seen: set[int] = set()
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        t = type(node)
        if t is Decimal:
            if node.is_nan():
                return path
        elif t is dict or t is list or t is tuple or t is set or t is frozenset:
            if id(node) in seen:
                continue
            seen.add(id(node))
            # (reversed: the first one in the value's order is found first)
            if t is dict:
                stack.extend(reversed([(v, [*path, k]) for k, v in node.items()]))
            elif t is set or t is frozenset:
                stack.extend((m, [*path, m]) for m in node)
            else:
                stack.extend(reversed([(v, [*path, i]) for i, v in enumerate(node)]))
    return None


def input_fault(exc: BaseException, input: Any) -> EvalTypeError | None:
    """For an evaluation of ``input`` that ended with ``exc``: the error that
    names the fault of ``input`` that caused it (a cycle where ``exc`` is a
    recursion too deep, a ``Decimal`` NaN where ``exc`` is ``Decimal``'s
    refusal of it); else None."""
    t = type(exc)
    if t is RecursionError or t is EvalRecursionError:
        return cycle_error(input)
    if isinstance(exc, InvalidOperation) or ((t is TypeError or t is ValueError) and "NaN" in str(exc)):
        path = find_nan(input)
        if path is not None:
            return EvalTypeError(f"{show_path('input', path)} is a Decimal NaN, which is not a Rego value: pass numbers that JSON can hold")
    return None


__all__ = ["cycle_error", "cycle_message", "find_cycle", "find_nan", "input_fault", "show_path"]
