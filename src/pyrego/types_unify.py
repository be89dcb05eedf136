"""Unification of types: whether values of two types can be equal (OPA's checker rule).

Part of :mod:`pyrego.types`, which re-exports :func:`unifies`.
"""

from __future__ import annotations

from typing import Any

from .types import (
    _RECURSIVE,
    _SCALAR_TYPES,
    AnyType,
    ArrayType,
    FunctionType,
    MaybeType,
    NamedType,
    ObjectType,
    SetType,
    Type,
    _Memo,
    values,
)


def unifies(a: MaybeType, b: MaybeType, memo: _Memo = None) -> bool:
    """Whether values of types ``a`` and ``b`` can be equal (OPA's checker rule).

    ``memo``: the answers for pairs of composite parts met so far in this
    unification (by identity; made when first needed)."""
    if a is b:  # (the same type unifies with itself, whatever it is)
        return a is not None
    if a is None or b is None:
        return False
    ca, cb = a.__class__, b.__class__
    if ca is NamedType:
        a = a.type  # type: ignore[attr-defined]
        ca = a.__class__
    if cb is NamedType:
        b = b.type  # type: ignore[attr-defined]
        cb = b.__class__
    if ca in _SCALAR_TYPES and cb in _SCALAR_TYPES:
        return ca is cb
    if (ca is AnyType and not a.of and cb is not FunctionType) or (cb is AnyType and not b.of and ca is not FunctionType):  # type: ignore[union-attr]
        return True  # any: every value but a function's
    if a is b or (ca in _RECURSIVE and cb in _RECURSIVE and a.ref == b.ref):  # type: ignore[union-attr]
        return True  # (a recursive type unifies with itself: its cycle is not walked)
    if memo is None:
        memo = {}
    else:
        found = memo.get((id(a), id(b)))
        if found is not None:
            return found  # type: ignore[no-any-return]
    ok = _unifies_parts(a, b, memo)  # type: ignore[arg-type]
    memo[(id(a), id(b))] = ok
    return ok


def _unifies_parts(a: Type, b: Type, memo: dict[Any, Any]) -> bool:
    """unifies() of two types, not both scalars, neither ``any`` of everything."""
    any_a = isinstance(a, AnyType)
    any_b = isinstance(b, AnyType)
    if any_a and _unifies_any(a, b, memo):  # type: ignore[arg-type]
        return True
    if any_b and _unifies_any(b, a, memo):  # type: ignore[arg-type]
        return True
    if any_a or any_b:
        return False
    if isinstance(a, ArrayType):
        return isinstance(b, ArrayType) and _unifies_arrays(a, b, memo)
    if isinstance(a, ObjectType):
        return isinstance(b, ObjectType) and _unifies_objects(a, b, memo)
    if isinstance(a, SetType):
        return isinstance(b, SetType) and unifies(values(a), values(b), memo)
    if isinstance(a, FunctionType):
        if not isinstance(b, FunctionType) or len(a.args) != len(b.args):
            return False
        return all(unifies(x, y, memo) for x, y in zip(a.arg_types(), b.arg_types()))
    return type(a) is type(b)


def _unifies_any(a: AnyType, b: Type, memo: dict[Any, Any]) -> bool:
    if isinstance(b, FunctionType):
        return False
    for m in a.of:
        if unifies(m, b, memo):
            return True
    return not a.of


def _unifies_arrays(a: ArrayType, b: ArrayType, memo: dict[Any, Any]) -> bool:
    for i in range(len(a.static)):
        if not unifies(a.select(i), b.select(i), memo):
            return False
    for i in range(len(b.static)):
        if not unifies(b.select(i), a.select(i), memo):
            return False
    return a.dynamic is None or b.dynamic is None or unifies(a.dynamic, b.dynamic, memo)


def _unifies_objects(a: ObjectType, b: ObjectType, memo: dict[Any, Any]) -> bool:
    return (
        _unifies_objects_static(a, b, memo)
        and _unifies_objects_static(b, a, memo)
        and (a.dynamic is None or b.dynamic is None or unifies(a.dynamic[1], b.dynamic[1], memo))
    )


def _unifies_objects_static(a: ObjectType, b: ObjectType, memo: dict[Any, Any]) -> bool:
    for k, _ in a.static:
        other = b.select(k)
        # A key the other object lacks is fine when either has dynamic
        # properties: OPA (as of v1.20.2) leaves those to the dynamic check.
        if other is None and (a.dynamic is not None or b.dynamic is not None):
            continue
        if not unifies(a.select(k), other, memo):
            return False
    return True


__all__ = ["unifies"]
