"""Variable bindings of one partial evaluation, with undo.

Every evaluation of a body (the query, each inlined rule or function call)
gets a :class:`Scope`: its variables (the compiler's unique names, ``x#3``)
become *global* names (``x#3@7``) so that two calls of the same function, or
two branches of one rule, never share a variable. The :class:`Env` maps
global names to terms and records each change on a trail; the evaluator
takes a mark before a choice and undoes to it afterwards (backtracking).

A variable is *unknown* when a saved expression binds it to something
unknown (``x = input.tickets.a``): it is never bound afterwards, and every
expression that reads it is saved too (OPA's save set of variables).
"""

from __future__ import annotations

import itertools
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.partial.terms import Known, collapse

ROOTS = ("input", "data")


class Scope:
    """The variables of one evaluation of a body (its global names end in ``@<id>``)."""

    __slots__ = ("id", "names")

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.id = next(Scope._ids)
        self.names: dict[str, str] = {}

    def var(self, name: str) -> str:
        """The global name of the local variable ``name``."""
        g = self.names.get(name)
        if g is None:
            g = self.names[name] = f"{name}@{self.id}"
        return g


class Env:
    """Bindings and unknown variables, with a trail for undo."""

    __slots__ = ("binds", "unknown", "trail")

    def __init__(self) -> None:
        self.binds: dict[str, Any] = {}
        self.unknown: dict[str, int] = {}
        self.trail: list[tuple[str, str]] = []

    def mark(self) -> int:
        return len(self.trail)

    def undo(self, mark: int) -> None:
        trail = self.trail
        while len(trail) > mark:
            kind, name = trail.pop()
            if kind == "b":
                del self.binds[name]
            else:
                n = self.unknown[name] - 1
                if n:
                    self.unknown[name] = n
                else:
                    del self.unknown[name]

    def bind(self, name: str, term: Any) -> None:
        self.binds[name] = term
        self.trail.append(("b", name))

    def mark_unknown(self, name: str) -> None:
        self.unknown[name] = self.unknown.get(name, 0) + 1
        self.trail.append(("u", name))

    def is_unknown(self, name: str) -> bool:
        return name in self.unknown

    def resolve(self, t: Any) -> Any:
        """``t`` with a chain of variable bindings followed (one level of terms)."""
        while type(t) is ast.Var:
            b = self.binds.get(t.name)
            if b is None:
                return t
            t = b
        return t

    def plug(self, t: Any) -> Any:
        """``t`` with every bound variable replaced by its value, at any depth."""
        tt = type(t)
        if tt is Known:
            return t
        if tt is ast.Var:
            b = self.binds.get(t.name)
            return t if b is None else self.plug(b)
        if tt is ast.Array:
            return collapse(ast.Array(tuple([self.plug(x) for x in t.items]), t.location))
        if tt is ast.SetTerm:
            return collapse(ast.SetTerm(tuple([self.plug(x) for x in t.items]), t.location))
        if tt is ast.Object:
            return collapse(ast.Object(tuple([(self.plug(k), self.plug(v)) for k, v in t.items]), t.location))
        if tt is ast.Ref:
            return ast.Ref(self.plug(t.head), tuple([self.plug(p) for p in t.path]), t.location)
        if tt is ast.Call:
            return ast.Call(t.op, tuple([self.plug(a) for a in t.args]), t.location, t.op_ref)
        return t

    def contains_unknown(self, t: Any) -> bool:
        """Whether the plugged term ``t`` holds anything unknown (OPA's ``ContainsRecursive``)."""
        tt = type(t)
        if tt is Known:
            return False
        if tt is ast.Var:
            if t.name in ROOTS:
                return True
            b = self.binds.get(t.name)
            if b is not None:
                return self.contains_unknown(b)
            return t.name in self.unknown
        if tt in (ast.Ref, ast.Call) or tt in (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr):
            return True
        if tt in (ast.Array, ast.SetTerm):
            return any(self.contains_unknown(x) for x in t.items)
        if tt is ast.Object:
            return any(self.contains_unknown(k) or self.contains_unknown(v) for k, v in t.items)
        return False

    def unbound_vars(self, t: Any, out: list[str]) -> list[str]:
        """Unbound, not unknown, variables in the plugged term ``t`` (refs' heads skipped)."""
        tt = type(t)
        if tt is ast.Var:
            if t.name not in ROOTS and t.name not in self.binds and t.name not in self.unknown and t.name not in out:
                out.append(t.name)
        elif tt is ast.Ref:
            for p in t.path:
                self.unbound_vars(p, out)
        elif tt is ast.Call:
            for a in t.args:
                self.unbound_vars(a, out)
        elif tt in (ast.Array, ast.SetTerm):
            for x in t.items:
                self.unbound_vars(x, out)
        elif tt is ast.Object:
            for k, v in t.items:
                self.unbound_vars(k, out)
                self.unbound_vars(v, out)
        return out
