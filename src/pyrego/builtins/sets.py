"""Set builtins: intersection, union (of a set of sets) and the deprecated set_diff."""

from __future__ import annotations

from typing import Any

from pyrego.builtins.registry import builtin
from pyrego.builtins.types import set_operand, type_err
from pyrego.runtime.values import SetKey, thaw


def _member_sets(x: Any) -> list[frozenset[Any]]:
    """The member sets of a set of sets (each member must itself be a set)."""
    out = []
    for k in set_operand(x, 1):
        if type(k) is not SetKey:
            # OPA checks each member as if it were operand 1.
            raise type_err(1, thaw(k), "set")
        out.append(k.items)
    return out


@builtin("intersection", 1)
def intersection(x: Any) -> frozenset[Any]:
    sets = _member_sets(x)
    if not sets:
        return frozenset()
    sets.sort(key=len)
    result = frozenset(sets[0])
    for s in sets[1:]:
        if not result:
            break
        result = result & s
    return result


@builtin("union", 1)
def union(x: Any) -> frozenset[Any]:
    result: set[Any] = set()
    for s in _member_sets(x):
        result.update(s)
    return frozenset(result)


@builtin("set_diff", 2)
def set_diff(a: Any, b: Any) -> frozenset[Any]:
    return frozenset(set_operand(a, 1) - set_operand(b, 2))
