"""Unification of types: whether values of two types can be equal (OPA's checker rule).

Kept beside :mod:`pyrego.typecheck.static_types` (the type model it reads), which it imports:
the checker calls :func:`unifies` from here.
"""

from __future__ import annotations

from typing import Any

from pyrego.typecheck.static_types import (
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
    if a is b:  # (the same type unifies with itself, whatever it is, unless it loses its own keys)
        return a is not None and not (a.__class__ is ObjectType and a.lost)  # type: ignore[attr-defined]
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
    key = (id(a), id(b))
    if memo is None:
        memo = {}
    else:
        found = memo.get(key)
        if found is not None:
            return found  # type: ignore[no-any-return]
    # (one frame per level of the types where it can be: deep types are met)
    any_a = ca is AnyType or isinstance(a, AnyType)
    any_b = cb is AnyType or isinstance(b, AnyType)
    ok: bool
    if any_a or any_b:
        ok = (any_a and _unifies_any(a, b, memo)) or (any_b and _unifies_any(b, a, memo))  # type: ignore[arg-type]
    elif isinstance(a, ArrayType):
        ok = isinstance(b, ArrayType)
        if ok:  # (each position both ways, then the dynamic parts; in place: deep types are met)
            assert isinstance(b, ArrayType)
            for i in range(len(a.static)):
                if not unifies(a.select(i), b.select(i), memo):
                    ok = False
                    break
            if ok:
                for i in range(len(b.static)):
                    if not unifies(b.select(i), a.select(i), memo):
                        ok = False
                        break
            ok = ok and (a.dynamic is None or b.dynamic is None or unifies(a.dynamic, b.dynamic, memo))
    elif isinstance(a, ObjectType):
        ok = isinstance(b, ObjectType) and (
            _unifies_objects_static(a, b, memo)
            and _unifies_objects_static(b, a, memo)
            and (a.dynamic is None or b.dynamic is None or unifies(a.dynamic[1], b.dynamic[1], memo))
        )
    elif isinstance(a, SetType):
        ok = isinstance(b, SetType) and unifies(values(a), values(b), memo)
    elif isinstance(a, FunctionType):
        ok = isinstance(b, FunctionType) and len(a.args) == len(b.args) and all(unifies(x, y, memo) for x, y in zip(a.arg_types(), b.arg_types()))
    else:
        ok = type(a) is type(b)
    memo[key] = ok
    return ok


def _unifies_any(a: AnyType, b: Type, memo: dict[Any, Any]) -> bool:
    if isinstance(b, FunctionType):
        return False
    for m in a.of:
        if unifies(m, b, memo):
            return True
    return not a.of


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
