"""The functions that ``with`` replaces, which the code generator makes replaceable.

A rule or builtin named as a ``with`` target anywhere in the rules (bodies
and heads: a head's value or key may hold a comprehension with a ``with``)
is called through a table that ``with`` swaps (``mockable`` in
:func:`pyrego.codegen.generator.generate_program`).
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree, data_function_name, rule_terms

__all__ = ["body_with_function_targets", "with_function_targets"]


def with_function_targets(tree: CompiledTree) -> frozenset[str]:
    """The functions that ``with`` replaces anywhere in the rules: bodies and
    heads (a head's value or key may hold a comprehension with a ``with``)."""
    finder = _WithTargets(tree)
    for node in tree.nodes.values():
        for rule in node.rules + ([node.default] if node.default else []):
            r: ast.Rule | None = rule
            while r is not None:
                finder.visit_body(r.body)
                for term in rule_terms(r):
                    finder.visit_term(term)
                r = r.else_
    return frozenset(finder.out)


def body_with_function_targets(body: ast.Body, tree: CompiledTree) -> frozenset[str]:
    finder = _WithTargets(tree)
    finder.visit_body(body)
    return frozenset(finder.out)


class _WithTargets:
    """The functions (rules or builtins) that ``with`` replaces in a body.

    Methods rather than nested recursive closures, which would be reference
    cycles left for the cyclic garbage collector."""

    def __init__(self, tree: CompiledTree) -> None:
        self.tree = tree
        self.out: set[str] = set()

    def visit_body(self, b: ast.Body) -> None:
        for e in b:
            for w in e.with_mods:
                t = w.target
                if isinstance(t.head, ast.Var) and t.head.name != "input":
                    name = ".".join([t.head.name] + [str(p.value) for p in t.path if isinstance(p, ast.Scalar)])
                    if t.head.name == "data":
                        name = data_function_name(t.path) or name  # (a[1].x: named as its calls are)
                    if name in self.tree.functions or (t.head.name != "data" and self.tree.builtin(name) is not None):
                        self.out.add(name)
                self.visit_term(w.value)
            s = e.statement
            if isinstance(s, ast.Every):
                self.visit_body(s.body)
            for term in _terms(s):
                self.visit_term(term)

    def visit_term(self, t: Any) -> None:
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr)):
            self.visit_body(t.body)
            self.visit_term(t.term)
        elif isinstance(t, ast.ObjectCompr):
            self.visit_body(t.body)
            self.visit_term(t.key)
            self.visit_term(t.value)
        elif isinstance(t, ast.Call):
            for a in t.args:
                self.visit_term(a)
        elif isinstance(t, (ast.Array, ast.SetTerm)):
            for x in t.items:
                self.visit_term(x)
        elif isinstance(t, ast.Object):
            for k, v in t.items:
                self.visit_term(k)
                self.visit_term(v)
        elif isinstance(t, ast.Ref):
            self.visit_term(t.head)
            for p in t.path:
                self.visit_term(p)
        elif isinstance(t, ast.TemplateString):
            # ``{f(1) with f as g}`` is a comprehension among the parts.
            for part in t.parts:
                if not isinstance(part, str):
                    self.visit_term(part)


def _terms(s: ast.Statement) -> list[Any]:
    if isinstance(s, (ast.Assign, ast.Unify)):
        return [s.lhs, s.rhs]
    if isinstance(s, ast.SomeIn):
        return [s.key, s.value, s.collection]
    if isinstance(s, ast.Every):
        return [s.domain]
    if isinstance(s, ast.SomeVars):
        return []
    return [s]
