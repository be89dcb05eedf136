"""Object builtins: object.get, object.keys, object.remove, object.filter,
object.union, object.union_n, object.subset.

Objects hold frozen keys (see :mod:`pyrego.runtime.values`), so every key
that comes from an argument is frozen before it is looked up. Results are new
dicts; arguments are never changed (nested values may be shared).

``object.union_n`` and ``object.subset`` (whose array case compares every
offset) stop at the evaluation's deadline.
"""

from __future__ import annotations

from typing import Any

from pyrego.builtins.limits import TICK, Deadline
from pyrego.builtins.registry import builtin
from pyrego.builtins.types import arr_operand, elem_err, obj_operand, type_err
from pyrego.runtime.builtin_errors import OperandTypeError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import check_plain, equal, freeze

_MISSING = object()


@builtin("object.get", 3)
def object_get(obj: Any, key: Any, default: Any) -> Any:
    """``obj[key]``, or the value at a path when key is an array, else ``default``."""
    o = obj_operand(obj, 1)
    tk = type(key)
    if tk is not list and tk is not tuple:
        found = o.get(key if tk is str else freeze(key), _MISSING)
        return default if found is _MISSING else found
    if not key:
        return o
    cur: Any = o
    for step in key:
        t = type(cur)
        if t is dict:
            cur = cur.get(freeze(step), _MISSING)
            if cur is _MISSING:
                return default
        elif t is list or t is tuple:
            ts = type(step)
            if ts is float and step.is_integer():
                step = int(step)
            elif ts is not int:
                check_plain(step)
                return default
            if not 0 <= step < len(cur):
                return default
            cur = cur[step]
        elif t is frozenset or t is set:
            # A set "contains" its members: the path goes on from the member itself.
            if freeze(step) not in cur:
                return default
            cur = step
        else:
            check_plain(cur)  # (a caller's object of no Rego type: an error, not a miss)
            return default
    return cur


@builtin("object.keys", 1)
def object_keys(obj: Any) -> frozenset[Any]:
    # Keys are already frozen, which is exactly what a set holds.
    return frozenset(obj_operand(obj, 1))


def _key_set(keys: Any) -> Any:
    """The frozen keys named by an array, set or object (operand 2)."""
    t = type(keys)
    if t is frozenset or t is set:
        return keys
    if t is dict:
        return keys.keys()
    if t is list or t is tuple:
        return {freeze(k) for k in keys}
    raise type_err(2, keys, "object", "set", "array")


@builtin("object.remove", 2)
def object_remove(obj: Any, keys: Any) -> dict[Any, Any]:
    o = obj_operand(obj, 1)
    drop = _key_set(keys)
    return {k: v for k, v in o.items() if k not in drop}


@builtin("object.filter", 2)
def object_filter(obj: Any, keys: Any) -> dict[Any, Any]:
    o = obj_operand(obj, 1)
    keep = _key_set(keys)
    if len(keep) < len(o):
        return {k: o[k] for k in keep if k in o}
    return {k: v for k, v in o.items() if k in keep}


def _merge(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
    """``b`` over ``a``; where both values are objects they are merged in turn."""
    out = dict(a)
    for k, v in b.items():
        old = out.get(k, _MISSING)
        if type(old) is dict and type(v) is dict:
            out[k] = _merge(old, v)
        else:
            out[k] = v
    return out


@builtin("object.union", 2)
def object_union(a: Any, b: Any) -> dict[Any, Any]:
    return _merge(obj_operand(a, 1), obj_operand(b, 2))


def _merge_into(out: dict[Any, Any], b: dict[Any, Any], owned: dict[int, Any], deadline: Deadline | None) -> None:
    """:func:`_merge` in place: ``out`` and the nested objects in ``owned``
    were made here and may change; any other object is copied first."""
    if deadline is not None:
        deadline.tick(len(b) + 1)
    for k, v in b.items():
        old = out.get(k, _MISSING)
        if type(old) is dict and type(v) is dict:
            if id(old) not in owned:
                old = out[k] = dict(old)
                owned[id(old)] = old
            _merge_into(old, v, owned, deadline)
        else:
            out[k] = v


@builtin("object.union_n", 1, cancellable=True)
def object_union_n(ctx: EvalContext, objs: Any) -> dict[Any, Any]:
    arr = arr_operand(objs, 1)
    for o in arr:
        if type(o) is not dict:
            raise elem_err(1, arr, o, "object")
    if len(arr) <= 64:
        result: dict[Any, Any] = {}
        for o in arr:
            result = _merge(result, o)
        return result
    # One result merged in place: a new object per step would be quadratic.
    result = {}
    owned: dict[int, Any] = {}
    deadline = Deadline(ctx) if len(arr) > 64 else None
    for o in arr:
        _merge_into(result, o, owned, deadline)
    return result


# ---------------------------------------------------------------- object.subset


def _array_subset(sup: Any, sub: Any, ctx: EvalContext) -> bool:
    """``sub`` appears as a contiguous run inside ``sup``."""
    n, m = len(sup), len(sub)
    if m > n:
        return False
    deadline = Deadline(ctx) if (n - m) * m > TICK else None
    for start in range(n - m + 1):
        if deadline is not None:
            deadline.tick(m)
        for j in range(m):
            if not equal(sup[start + j], sub[j]):
                break
        else:
            return True
    return False


def _object_subset(sup: dict[Any, Any], sub: dict[Any, Any], ctx: EvalContext) -> bool:
    for k, sv in sub.items():
        pv = sup.get(k, _MISSING)
        if pv is _MISSING:
            return False
        if equal(pv, sv):
            continue
        tp, ts = type(pv), type(sv)
        if tp is dict and ts is dict:
            if not _object_subset(pv, sv, ctx):
                return False
        elif (tp is frozenset or tp is set) and (ts is frozenset or ts is set):
            if not sv <= pv:
                return False
        elif (tp is list or tp is tuple) and (ts is list or ts is tuple):
            if not _array_subset(pv, sv, ctx):
                return False
        else:
            return False
    return True


def _array_set_subset(sup: Any, sub: Any) -> bool:
    """OPA's count of matches: each array element found in the set counts
    one, duplicates again, and the answer is true once the count reaches the
    set's size, checked after each element. So ``[1, 2, 1]`` holds ``{1, 2,
    3}`` and ``[]`` does not hold ``set()`` in OPA v1.20.2; the same answers
    here, since a policy's decision must not depend on the engine."""
    unmatched = len(sub)
    for v in sup:
        if freeze(v) in sub:
            unmatched -= 1
        if unmatched == 0:
            return True
    return False


@builtin("object.subset", 2, cancellable=True)
def object_subset(ctx: EvalContext, sup: Any, sub: Any) -> bool:
    """Whether ``sub`` is contained in ``sup``: recursively for objects, as a
    subset for sets, as a contiguous run for arrays, and for an array and a
    set, as OPA counts it (see _array_set_subset)."""
    tp, ts = type(sup), type(sub)
    if tp is dict and ts is dict:
        return _object_subset(sup, sub, ctx)
    sup_set = tp is frozenset or tp is set
    sub_set = ts is frozenset or ts is set
    if sup_set and sub_set:
        return sub <= sup  # type: ignore[no-any-return]
    sup_arr = tp is list or tp is tuple
    if sup_arr and (ts is list or ts is tuple):
        return _array_subset(sup, sub, ctx)
    if sup_arr and sub_set:
        return _array_set_subset(sup, sub)
    raise OperandTypeError("both arguments object.subset must be of the same type or array and set")
