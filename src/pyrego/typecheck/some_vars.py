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

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.compile.safety import shown_name, term_vars


class LocalVarNumbers:
    """``name(some_in)``: OPA's name for the key of a ``some x in xs`` without a key.

    A query counts on its own, with names ``__localqN__``."""

    def __init__(self, tree: CompiledTree | None = None, query: ast.Body | None = None) -> None:
        self._tree = tree
        self._query = query
        self._numbers: dict[int, int] | None = None
        # Each declared variable (by its unique name) -> its number.
        self._vars: dict[str, int] = {}
        # A ``some x in xs`` without key -> the number its key is renamed to.
        self._renamed: dict[int, int] = {}
        # A template string's part (by id) -> its variable's number; the
        # rules in the order counted.
        self._templates: dict[int, int] = {}
        self._rules: list[ast.Rule] = []
        self._next = 0

    def name(self, stmt: ast.SomeIn) -> str | None:
        numbers = self._counted()
        n = numbers.get(id(stmt))
        if n is None:
            return None
        return self._local(n)

    def var_name(self, name: str) -> str | None:
        """OPA's name for a declared variable (by its unique name), if counted."""
        self._counted()
        n = self._vars.get(name)
        if n is None:
            return None
        return self._local(n)

    def renamed_key(self, stmt: ast.SomeIn) -> str | None:
        """OPA's name for the key of a ``some x in xs`` without key once it is
        renamed (as the rewritten body shows it), if counted."""
        self._counted()
        n = self._renamed.get(id(stmt))
        if n is None:
            return None
        return self._local(n)

    def shown_name(self, name: str) -> str:
        """A variable (by its unique name) as OPA's messages show it: its
        ``__localN__`` where OPA renamed it, else as written."""
        return self.var_name(name) or shown_name(name)

    def made_after(self) -> str:
        """The name of the first variable OPA's later stages make (for the
        calls, comprehensions and refs an expression holds): numbered after
        every one counted here."""
        self._counted()
        return self._local(self._next)

    def _local(self, n: int) -> str:
        return f"__localq{n}__" if self._query is not None else f"__local{n}__"

    def template_part_by_id(self, part_id: int) -> str | None:
        """OPA's name for the variable of a template string's part (by its id)
        that is not a constant (``{__local3__ | __local3__ = input.x}``):
        numbered after every variable the rules declare, in rule order."""
        self._counted()
        n = self._templates.get(part_id)
        return None if n is None else f"__local{n}__"

    def _counted(self) -> dict[int, int]:
        if self._numbers is None:
            self._numbers = {}
            if self._query is not None:
                self._body(self._query)
            else:
                self._count()
                for rule in self._rules:
                    _template_parts(rule, self._templates, self._gen)
        return self._numbers

    def _gen(self, name: str | None = None) -> int:
        n = self._next
        self._next += 1
        if name is not None and not _wildcard(name):
            self._vars.setdefault(name, n)
        return n

    def _count(self) -> None:
        rules: dict[str, list[ast.Rule]] = {}
        assert self._tree is not None
        for node in self._tree.nodes.values():
            for r in node.rules + ([node.default] if node.default is not None else []):
                rules.setdefault(r.module_file, []).append(r)
        for file in sorted(rules):
            for rule in sorted(rules[file], key=lambda r: (r.location.row, r.location.col)):
                self._rules.append(rule)
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
                self._gen(t.name)
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
                for name in _pattern_vars(s.lhs):
                    self._gen(name)
                continue
            if st is ast.SomeVars:
                for v in s.vars:
                    self._gen(v.name)
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
                if "__local" in bound:  # (the made key renamed again first)
                    bound.discard("__local")
                    self._renamed[id(s)] = self._gen()
                # (the key's variables first, then the value's, as written)
                for name in _ordered_vars(s.key) + _ordered_vars(s.value):
                    if name in bound:
                        bound.discard(name)
                        self._gen(name)
                for _ in bound:
                    self._gen()
                self._term(s.collection)
            elif st is ast.Every:
                self._term(s.domain)
                if s.key is None or not _wildcard(s.key.name):
                    self._gen(s.key.name if s.key is not None else None)  # the key, written or made
                if not _wildcard(s.value.name):
                    self._gen(s.value.name)
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


def _template_parts(rule: ast.Rule, out: dict[int, int], gen: Callable[[], int]) -> None:
    """Numbers the parts of the template strings of ``rule`` (its head, then
    its body, then its else branches) that are not constants."""
    stack: list[Any] = [rule]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is ast.TemplateString:
            for p in x.parts:
                if not isinstance(p, (str, ast.Scalar)):
                    out[id(p)] = gen()
            stack.extend(reversed([p for p in x.parts if not isinstance(p, str)]))
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif x is not None and not isinstance(x, (str, int, float, bool)) and hasattr(type(x), "__slots__"):
            stack.extend(reversed([getattr(x, f) for f in type(x).__slots__ if f not in ("location", "module_file")]))


def _ordered_vars(t: Any) -> list[str]:
    """The variables of a pattern in the order they are written."""
    out: list[str] = []
    stack = [t]
    while stack:
        x = stack.pop()
        tx = type(x)
        if tx is ast.Var:
            if x.name not in out:
                out.append(x.name)
        elif tx is ast.Array:
            stack.extend(reversed(x.items))
        elif tx is ast.Object:
            for _, v in reversed(x.items):
                stack.append(v)
        elif tx is ast.Ref:
            stack.extend(reversed((x.head, *x.path)))
    return out


def _wildcard(name: str) -> bool:
    return name.startswith("$")
