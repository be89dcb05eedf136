"""The numbers OPA gives the variables it makes for ``some x in xs``.

OPA rewrites ``some x in xs`` to ``x = xs[__localN__]`` and a message about
that ref names the variable (``undefined ref: v[__local4__]``). N counts the
variables OPA's ``RewriteLocalVars`` stage has made before it, over every
module (by file name), rule by rule (``else`` branches after their rule): a
function's arguments, then each variable declared by ``:=``, ``some`` and
``every`` in the order the stage meets them (an assignment's right side and
its comprehensions before its left side), plus, for each ``some x in xs``,
the key it makes and then the variables the expression binds (the key among
them: renamed again, but messages show it by its first name). This module
counts the same way over pyrego's compiled rules.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.compile.safety import term_vars


class LocalVarNumbers:
    """``name(some_in)``: OPA's name for the key of a ``some x in xs`` without a key.

    A query counts on its own, with names ``__localqN__``."""

    def __init__(self, tree: CompiledTree | None = None, query: ast.Body | None = None) -> None:
        self._tree = tree
        self._query = query
        self._numbers: dict[int, int] | None = None
        self._next = 0

    def name(self, stmt: ast.SomeIn) -> str | None:
        if self._numbers is None:
            self._numbers = {}
            if self._query is not None:
                self._body(self._query)
            else:
                self._count()
        n = self._numbers.get(id(stmt))
        if n is None:
            return None
        return f"__localq{n}__" if self._query is not None else f"__local{n}__"

    def _gen(self) -> int:
        n = self._next
        self._next += 1
        return n

    def _count(self) -> None:
        rules: dict[str, list[ast.Rule]] = {}
        assert self._tree is not None
        for node in self._tree.nodes.values():
            for r in node.rules + ([node.default] if node.default is not None else []):
                rules.setdefault(r.module_file, []).append(r)
        for file in sorted(rules):
            for rule in sorted(rules[file], key=lambda r: (r.location.row, r.location.col)):
                seen: set[str] = set()
                for a in rule.head.args or ():
                    self._args(a, seen)
                branch: ast.Rule | None = rule
                while branch is not None:
                    self._head(branch.head)
                    self._body(branch.body)
                    branch = branch.else_

    def _args(self, t: Any, seen: set[str]) -> None:
        tt = type(t)
        if tt is ast.Var:
            if t.name not in seen:
                seen.add(t.name)
                self._gen()
        elif tt is ast.Array:
            for x in t.items:
                self._args(x, seen)
        elif tt is ast.Object:
            for _, v in t.items:
                self._args(v, seen)
        elif tt is ast.Ref:
            self._args(t.head, seen)
            for p in t.path:
                self._args(p, seen)

    def _head(self, head: ast.RuleHead) -> None:
        for t in (*head.ref.path, *(head.args or ()), head.key, head.value):
            if t is not None:
                self._term(t)

    def _body(self, body: ast.Body) -> None:
        for e in body:
            s: Any = e.statement
            st = type(s)
            if st is ast.Assign:
                self._term(s.rhs)
                for w in e.with_mods:
                    self._term(w.value)
                for _ in _pattern_vars(s.lhs):
                    self._gen()
                continue
            if st is ast.SomeVars:
                for _ in s.vars:
                    self._gen()
            elif st is ast.SomeIn:
                bound: set[str] = set()
                if s.key is None:
                    # The key OPA makes; declared again below, but messages
                    # show a rewritten variable by the name it had before.
                    assert self._numbers is not None
                    self._numbers[id(s)] = self._gen()
                    bound.add("__local")
                else:
                    term_vars(s.key, bound)
                term_vars(s.value, bound)
                for _ in bound:
                    self._gen()
                self._term(s.collection)
            elif st is ast.Every:
                self._term(s.domain)
                if s.key is None or not _wildcard(s.key.name):
                    self._gen()  # the key, written or made
                if not _wildcard(s.value.name):
                    self._gen()
                self._body(s.body)
            elif st is ast.Unify:
                self._term(s.lhs)
                self._term(s.rhs)
            else:
                self._term(s)
            for w in e.with_mods:
                self._term(w.value)

    def _term(self, t: Any) -> None:
        tt = type(t)
        if tt is ast.Ref:
            self._term(t.head)
            for p in t.path:
                self._term(p)
        elif tt is ast.Call:
            for a in t.args:
                self._term(a)
        elif tt is ast.Array or tt is ast.SetTerm:
            for x in t.items:
                self._term(x)
        elif tt is ast.Object:
            for k, v in t.items:
                self._term(k)
                self._term(v)
        elif tt is ast.ArrayCompr or tt is ast.SetCompr:
            self._body(t.body)
            self._term(t.term)
        elif tt is ast.ObjectCompr:
            self._body(t.body)
            self._term(t.key)
            self._term(t.value)
        elif tt is ast.TemplateString:
            for p in t.parts:
                if not isinstance(p, str):
                    self._term(p)


def _pattern_vars(t: Any) -> list[str]:
    out: set[str] = set()
    term_vars(t, out)
    return sorted(out)


def _wildcard(name: str) -> bool:
    return name.startswith("$")
