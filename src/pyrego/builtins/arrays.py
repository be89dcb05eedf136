"""Array builtins: array.concat, array.slice, array.reverse, array.flatten."""

from __future__ import annotations

from typing import Any

from pyrego.builtins.registry import builtin
from pyrego.builtins.types import arr_operand, int_operand


@builtin("array.concat", 2)
def array_concat(a: Any, b: Any) -> list[Any]:
    return [*arr_operand(a, 1), *arr_operand(b, 2)]


@builtin("array.slice", 3)
def array_slice(arr: Any, start: Any, stop: Any) -> list[Any]:
    items = arr_operand(arr, 1)
    i = int_operand(start, 2)
    j = int_operand(stop, 3)
    # Indices are clamped to [0, len] and start to at most stop: never an error.
    j = min(max(j, 0), len(items))
    i = min(max(i, 0), j)
    return list(items[i:j])


@builtin("array.reverse", 1)
def array_reverse(arr: Any) -> list[Any]:
    return list(reversed(arr_operand(arr, 1)))


@builtin("array.flatten", 1)
def array_flatten(arr: Any) -> list[Any]:
    """Splice nested arrays one level deep."""
    out: list[Any] = []
    for v in arr_operand(arr, 1):
        t = type(v)
        if t is list or t is tuple:
            out.extend(v)
        else:
            out.append(v)
    return out
