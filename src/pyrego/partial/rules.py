"""Rules and functions that depend on the unknowns: inlined, or support rules.

As OPA does it:

- a complete rule is inlined: each rule body is evaluated in turn (in OPA's
  rule index order, :mod:`pyrego.partial.rule_order`) and each solution
  yields the rule's value; a rule with an ``else`` is not evaluated (the ref
  is saved as it is), and one with a ``default`` becomes a support rule
  unless what it is compared with differs from the default value;
- a partial set or object read at a key is inlined the same way, the key
  unified with each rule's head; read whole, it becomes a support rule;
- a function call is inlined (arguments unified with each definition's
  head); with an ``else`` the call is saved, with a ``default`` it becomes a
  support function.

Rules that do not depend on the unknowns are evaluated by the engine
(:mod:`pyrego.partial.known`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    RuleNode,
    child_at,
    key_raw,
    rule_suffix,
)
from pyrego.partial.base import EvalBase
from pyrego.partial.bindings import Scope
from pyrego.partial.copyprop import copy_propagate
from pyrego.partial.rule_order import rule_order
from pyrego.partial.support import SupportRule
from pyrego.partial.terms import Known, literal, term_vars
from pyrego.runtime.values import UNDEF, equal


class RulesMixin(EvalBase):
    """Inlining of rules and functions (mixed into the evaluator)."""

    def ordered_rules(self, node: RuleNode) -> list[ast.Rule]:
        cache: dict[int, list[ast.Rule]] = self.__dict__.setdefault("_rule_orders", {})
        got = cache.get(node.id)
        if got is None:
            order = rule_order(node.rules, self._is_virtual, self.tree.arity)
            got = cache[node.id] = [node.rules[i] for i in order]
        return got

    def _is_virtual(self, key: tuple[Any, ...]) -> bool:
        cur = self.tree.root
        for p in key[1:]:
            if cur.has_rules():
                return True
            child = child_at(cur, p)
            if child is None:
                return False
            cur = child
        return cur.has_rules() or any(n.has_rules() for n in cur.walk())

    def rule_body(self, rule: ast.Rule, scope: Scope, required: set[str] | None) -> Iterator[None]:
        body = self.ordered(rule.body, scope, set(), required=required)
        yield from self.body(body, scope)

    # -- documents ------------------------------------------------------------------------

    def rule_document(self, node: RuleNode, rest: tuple[Any, ...], scope: Scope, against: Any, site: ast.Location) -> Iterator[Any]:
        """``data.<node path><rest>`` where ``node`` holds rules."""
        if not self.deps.node(node):
            value = self.known.document(node.path)
            if value is not UNDEF:
                yield from self.walk_parts(Known(value), rest, 0)
            return
        kind = node.kind
        if kind == FUNCTION:
            return
        if kind == COMPLETE:
            yield from self._complete(node, rest, against, site)
        elif kind in (PARTIAL_SET, PARTIAL_OBJECT):
            yield from self._partial(node, rest, site)

    def _residual_ref(self, path: tuple[Any, ...], rest: tuple[Any, ...], site: ast.Location) -> ast.Ref:
        parts = tuple(ast.Scalar(key_raw(p), site) for p in path)
        return ast.Ref(ast.Var("data", site), parts + tuple(self.env.plug(r) for r in rest), site)

    def _complete(self, node: RuleNode, rest: tuple[Any, ...], against: Any, site: ast.Location) -> Iterator[Any]:
        if any(r.else_ is not None for r in node.rules):
            # OPA does not partially evaluate ordered (else) rules: the ref is saved.
            yield self._residual_ref(node.path, rest, site)
            return
        default = node.default
        if default is not None:
            dv = literal(default.head.value) if default.head.value is not None else None
            other = against if type(against) is Known else None
            if other is None or (dv is not None and equal(dv.value, other.value)):
                yield from self._support_document(node, rest, site)
                return
        for rule in self.ordered_rules(node):
            scope = Scope()
            for _ in self.rule_body(rule, scope, _head_vars(rule)):
                assert rule.head.value is not None
                for value in self.term(rule.head.value, scope):
                    yield from self.walk_parts(value, rest, 0)

    def _partial(self, node: RuleNode, rest: tuple[Any, ...], site: ast.Location) -> Iterator[Any]:
        if not rest:
            yield from self._support_document(node, rest, site)
            return
        key = self.env.plug(rest[0])
        post = self.env.contains_unknown(key)
        for rule in self.ordered_rules(node):
            scope = Scope()
            head = rule.head
            if node.kind == PARTIAL_SET:
                key_terms: list[ast.Term] = [head.key] if head.key is not None else []
            else:
                key_terms = list(rule_suffix(0, rule))
            if len(key_terms) != 1:
                # Multi-level object rules read part way: not inlined.
                yield self._residual_ref(node.path, rest, site)
                return
            key_term = key_terms[0]
            value_term = head.value if node.kind == PARTIAL_OBJECT else key_term
            if post:
                for _ in self.rule_body(rule, scope, _head_vars(rule)):
                    for hk in self.term(key_term, scope):
                        for _ in self.unify(key, hk):
                            for value in self.term(value_term, scope):  # type: ignore[arg-type]
                                yield from self.walk_parts(value, rest, 1)
                continue
            for hk in self.term(key_term, scope):
                for _ in self.unify(key, hk):
                    for _ in self.rule_body(rule, scope, _head_vars(rule)):
                        for value in self.term(value_term, scope):  # type: ignore[arg-type]
                            yield from self.walk_parts(value, rest, 1)

    # -- functions --------------------------------------------------------------------------

    def call_function(self, node: RuleNode, op: str, args: list[Any], statement: bool, location: ast.Location) -> Iterator[Any]:
        """A call of the user function at ``node`` with plugged ``args``."""
        known_args = all(type(a) is Known for a in args)
        if known_args and not self.deps.node(node):
            value = self.known.call_function(node, [a.value for a in args])
            if value is not UNDEF:
                yield Known(value)
            return
        if any(r.else_ is not None for r in node.rules):
            yield ast.Call(op, tuple(args), location)
            return
        default = node.default
        if default is not None:
            dv = literal(default.head.value) if default.head.value is not None else None
            if not statement or dv is None or dv.value is not False:
                path = (self.support.namespace,) + node.path
                self._support_function(node, path)
                if self.support.defined(path):
                    yield ast.Call(".".join(("data",) + path), tuple(args), location)
                return
        produced = False
        for rule in self.ordered_rules(node):
            scope = Scope()
            for _ in self._match_args(rule, args, scope, 0):
                for _ in self.rule_body(rule, scope, _head_vars(rule)):
                    assert rule.head.value is not None
                    for value in self.term(rule.head.value, scope):
                        produced = True
                        yield value
        if default is not None and not produced and default.head.value is not None:
            for value in self.term(default.head.value, Scope()):
                yield value

    def function_into(self, node: RuleNode, call: ast.Call, out: ast.Term, scope: Scope) -> Iterator[None]:
        """A call of the user function at ``node`` with its output captured in
        ``out``: as OPA does, where a definition is inlined, its head's
        constant value meets the output before its body runs; a saved call
        keeps the output as its last argument."""
        for args in self._each(list(call.args), scope, 0, ()):
            plugged = [self.env.plug(a) for a in args]
            for o in self.term(out, scope):
                output = self.env.plug(o)
                if self._inlined(node, plugged):
                    for rule in self.ordered_rules(node):
                        rscope = Scope()
                        for _ in self._match_args(rule, plugged, rscope, 0):
                            assert rule.head.value is not None
                            hv = literal(rule.head.value)
                            if hv is not None:
                                for _ in self.unify(output, hv):
                                    yield from self.rule_body(rule, rscope, _head_vars(rule))
                                continue
                            for _ in self.rule_body(rule, rscope, _head_vars(rule)):
                                for value in self.term(rule.head.value, rscope):
                                    yield from self.unify(self.env.plug(value), output)
                    continue
                for value in self.call_function(node, call.op, plugged, False, call.location):
                    if type(value) is ast.Call and type(output) is not ast.Var and type(output) is not Known:
                        stmt = ast.Call(value.op, value.args + (output,), value.location, value.op_ref)
                        yield from self.save(ast.Expr(stmt, False, (), self.where[-1]), (value, output))
                    else:
                        yield from self.unify(self.env.plug(value), output)

    def _inlined(self, node: RuleNode, args: list[Any]) -> bool:
        """Whether :meth:`call_function` inlines the definitions at ``node`` for ``args``."""
        if all(type(a) is Known for a in args) and not self.deps.node(node):
            return False
        return not any(r.else_ is not None for r in node.rules) and node.default is None

    def _match_args(self, rule: ast.Rule, args: list[Any], scope: Scope, i: int) -> Iterator[None]:
        patterns = rule.head.args or ()
        if i == len(args) or i == len(patterns):
            yield
            return
        for pattern in self.term(patterns[i], scope):
            for _ in self.unify(args[i], pattern):
                yield from self._match_args(rule, args, scope, i + 1)

    # -- support rules ----------------------------------------------------------------------

    def _support_document(self, node: RuleNode, rest: tuple[Any, ...], site: ast.Location) -> Iterator[Any]:
        path = (self.support.namespace,) + node.path
        if not self.support.exists(path):
            self.support.reserve(path)
            rules = list(node.rules) + ([node.default] if node.default is not None else [])
            for rule in rules:
                self._support_rule(node, rule, path)
        if not self.support.defined(path):
            if rest:
                return
            empty: Any = frozenset() if node.kind == PARTIAL_SET else {}
            if node.kind == COMPLETE:
                return
            yield Known(empty)
            return
        yield self._residual_ref(path, rest, site)

    def _support_rule(self, node: RuleNode, rule: ast.Rule, path: tuple[str, ...]) -> None:
        scope = Scope()
        self.frames.append([])
        try:
            for _ in self.rule_body(rule, scope, _head_vars(rule)):
                head = rule.head
                key = None
                if node.kind == PARTIAL_SET:
                    key = self._first(head.key, scope)
                    value = None
                elif node.kind == PARTIAL_OBJECT:
                    key = self._first(rule_suffix(0, rule)[0], scope)
                    value = self._first(head.value, scope)
                else:
                    value = self._first(head.value, scope)
                live: set[str] = set()
                for t in (key, value):
                    if t is not None:
                        term_vars(t, live)
                body = copy_propagate(list(self.frames[-1]), live, ensure_non_empty=True, arity=self.tree.arity)
                self.support.add(SupportRule(path, value, body, rule.default, key))
        finally:
            self.frames.pop()

    def _support_function(self, node: RuleNode, path: tuple[str, ...]) -> None:
        if self.support.exists(path):
            return
        self.support.reserve(path)
        rules = list(node.rules) + ([node.default] if node.default is not None else [])
        for rule in rules:
            scope = Scope()
            self.frames.append([])
            mark = self.env.mark()
            try:
                # The arguments are unknown while the definition is evaluated.
                arg_terms = [self._first(a, scope) for a in (rule.head.args or ())]
                for t in arg_terms:
                    for name in sorted(term_vars(t, set())):
                        self.env.mark_unknown(name)
                for _ in self.rule_body(rule, scope, _head_vars(rule)):
                    value = self._first(rule.head.value, scope) if rule.head.value is not None else Known(True)
                    live: set[str] = set()
                    for t in [value, *arg_terms]:
                        term_vars(t, live)
                    body = copy_propagate(list(self.frames[-1]), live, ensure_non_empty=True, arity=self.tree.arity)
                    self.support.add(SupportRule(path, value, body, rule.default, args=tuple(self.env.plug(a) for a in arg_terms)))
            finally:
                self.env.undo(mark)
                self.frames.pop()

    def _first(self, t: ast.Term | None, scope: Scope) -> Any:
        if t is None:
            return None
        for v in self.term(t, scope):
            return self.env.plug(v)
        return None


def _head_vars(rule: ast.Rule) -> set[str]:
    from pyrego.compile.safety import term_vars as ast_vars

    head = rule.head
    required: set[str] = set()
    for t in [head.key, head.value, *rule_suffix(0, rule)]:
        if t is not None:
            ast_vars(t, required)
    return required
