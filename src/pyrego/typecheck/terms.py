"""Type errors and the typing of terms against a type (OPA's ``unify1``).

Kept below :mod:`.check` (expressions) and :mod:`.refs` (refs), which both
use them: neither imports the other for these.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast.nodes import Scalar, Var
from pyrego.errors import Location
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import TypeEnv, is_constant, select_constant, to_json
from pyrego.typecheck.ir import IArray, ICompr, IObject, IRef, ISet, Term
from pyrego.typecheck.types_json import loses_keys
from pyrego.typecheck.unify import unifies


class TypeErr:
    """One type error: a message, detail lines, and whether an unknown type caused it."""

    __slots__ = ("location", "message", "details", "nil_cause")

    def __init__(self, location: Location, message: str, details: list[str] | None = None, nil_cause: bool = False) -> None:
        self.location = location
        self.message = message
        self.details = details or []
        self.nil_cause = nil_cause

    def text(self) -> str:
        """The message with its detail lines, as OPA prints them after the code."""
        return self.message + "".join("\n\t" + line for line in self.details)

    def __repr__(self) -> str:
        return f"{self.location}: {self.text()}"


def unify1(env: TypeEnv, term: Any, tpe: T.MaybeType, union: bool) -> bool:
    """Whether ``term`` can have type ``tpe``; types the variables in it on the way."""
    tt = type(term)
    if tt is Var:
        if not union:
            exist = env.get_by_value(term)
            if exist is not None:
                return unifies(exist, tpe)
            env.tree.put_one(("v", term.name), term, tpe)
        else:
            exist = env.get_by_value(term)
            env.tree.put_one(("v", term.name), term, T.or_(exist, tpe))
            if exist is not None:
                return unifies(exist, tpe)
        return True
    if tt is Scalar:
        return unifies(env.get_by_value(term), tpe)
    if tt is IRef or tt is ICompr:
        return unifies(env.get_by_value(term), tpe)
    tpe = T.unwrap(tpe)
    if tt is IArray:
        if isinstance(tpe, T.ArrayType):
            return _unify1_array(env, term, tpe, union)
        if isinstance(tpe, T.AnyType):
            if not tpe.of:
                for x in term.items:
                    unify1(env, x, T.ANY, True)
                return True
            return _unify1_members(env, term, tpe)
        return False
    if tt is IObject:
        if isinstance(tpe, T.ObjectType):
            return _unify1_object(env, term, tpe, union)
        if isinstance(tpe, T.AnyType):
            if not tpe.of:
                for k, v in term.items:
                    unify1(env, k, T.ANY, True)
                    unify1(env, v, T.ANY, True)
                return True
            return _unify1_members(env, term, tpe)
        return False
    if tt is ISet:
        if isinstance(tpe, T.SetType):
            of = T.values(tpe)
            return all(unify1(env, x, of, union) for x in term.items)
        if isinstance(tpe, T.AnyType):
            if not tpe.of:
                for x in term.items:
                    unify1(env, x, T.ANY, True)
                return True
            return _unify1_members(env, term, tpe)
        return False
    return False


def _unify1_members(env: TypeEnv, term: Term, tpe: T.AnyType) -> bool:
    ok = False
    for m in tpe.of:
        ok = unify1(env, term, m, True) or ok
    return ok


def _unify1_array(env: TypeEnv, val: IArray, tpe: T.ArrayType, union: bool) -> bool:
    if len(val.items) != len(tpe.static) and tpe.dynamic is None:
        return False
    for i, x in enumerate(val.items):
        if not unify1(env, x, tpe.select(i), union):
            return False
    return True


def _unify1_object(env: TypeEnv, val: IObject, tpe: T.ObjectType, union: bool) -> bool:
    if len(val.items) != len(tpe.static) and tpe.dynamic_value is None:
        return False
    if _loses_keys(val):  # (OPA v1.20.2 then fails, whatever tpe is: see types_json)
        return False
    for k, v in val.items:
        if is_constant(k):
            child = select_constant(tpe, k)
            if child is None or not unify1(env, v, child, union):
                return False
        else:
            unify1(env, v, T.ANY, union)
    return True


def _loses_keys(val: IObject) -> bool:
    keys = []
    for k, _ in val.items:
        if type(k) is Scalar:
            keys.append(to_json(k))
        elif is_constant(k):
            try:
                keys.append(to_json(k))
            except ValueError:
                pass
    return loses_keys(keys)


__all__ = ["TypeErr", "unify1"]
