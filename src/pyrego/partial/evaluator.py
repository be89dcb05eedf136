"""The partial evaluator: bodies, expressions, unification and what is saved.

A tree-walking evaluator over the compiler's checked rules (the same
structures :mod:`pyrego.codegen.closures` plans from), written as generators: each
``yield`` is one solution, with the bindings and the saved expressions of
that solution in place; resuming the generator undoes them and looks for the
next (backtracking).

What cannot be evaluated because it reads something unknown is *saved*:
appended, with everything known plugged in, to the query being built
(``self.frames[-1]``). A complete solution's saved expressions are one
residual query. Saving marks the expression's unbound variables unknown, so
later expressions that read them are saved too. This follows OPA's
``topdown`` partial evaluation (save set, save stack, support modules, copy
propagation of the result), so that the residual queries come out as OPA's.

References are evaluated in :mod:`pyrego.partial.refs`, rules and functions
inlined in :mod:`pyrego.partial.rules`, calls and closures in
:mod:`pyrego.partial.calls`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.compile.body_order import reorder_body
from pyrego.compile.safety import stmt_vars, term_vars
from pyrego.partial.base import PartialEvalError
from pyrego.partial.bindings import Env, Scope
from pyrego.partial.calls import CallsMixin
from pyrego.partial.copyprop import copy_propagate
from pyrego.partial.known import KnownDocuments
from pyrego.partial.refs import RefsMixin
from pyrego.partial.rules import RulesMixin
from pyrego.partial.support import Support
from pyrego.partial.terms import Known, collapse, literal
from pyrego.partial.unknowns import Dependencies, UnknownPath
from pyrego.runtime.values import UNDEF, equal, freeze, iter_items


class Evaluator(RefsMixin, RulesMixin, CallsMixin):
    """One partial evaluation (state: bindings, saved expressions, support rules)."""

    def __init__(
        self,
        tree: CompiledTree,
        known: KnownDocuments,
        unknowns: list[UnknownPath],
        *,
        input: Any,
        strict: bool,
        eval_nondeterministic: bool,
        namespace: str = "partial",
    ) -> None:
        self.tree = tree
        self.known = known
        self.unknowns = unknowns
        self.input = input
        self.strict = strict
        self.deps = Dependencies(tree, unknowns, eval_nondeterministic=eval_nondeterministic)
        self.env = Env()
        # The residual query of each open context: the query itself, then one
        # per negation or support rule being evaluated.
        self.frames: list[list[ast.Expr]] = [[]]
        self.support = Support(namespace)
        # The location of the source expression being evaluated (saved
        # expressions carry it, as OPA's do).
        self.where: list[ast.Location] = [ast.NO_LOCATION]
        self._ordered: dict[tuple[int, frozenset[str]], ast.Body] = {}
        self.fresh_id = 0

    # -- helpers ---------------------------------------------------------------------------

    def fresh(self, prefix: str = "__local") -> ast.Var:
        self.fresh_id += 1
        return ast.Var(f"{prefix}{self.fresh_id}__@0")

    def is_bound(self, scope: Scope, name: str) -> bool:
        g = scope.var(name)
        return g in self.env.binds or self.env.is_unknown(g)

    def ordered(self, body: ast.Body, scope: Scope, outer: set[str], required: set[str] | None = None) -> ast.Body:
        """``body`` ordered for safety, given which of its variables are bound now."""
        names: set[str] = set()
        for e in body:
            stmt_vars(e.statement, names, closures=True)
            for w in e.with_mods:
                term_vars(w.value, names, closures=True)
        if required:
            # Head variables bound only by the arguments (`f(v) := v + 1`, no body).
            names |= required
        bound = frozenset(n for n in names if self.is_bound(scope, n))
        key = (id(body), bound)
        got = self._ordered.get(key)
        if got is None:
            visible = set(outer) | set(bound)
            for e in body:
                stmt_vars(e.statement, visible)
            got, _ = reorder_body(body, set(bound), visible, self.tree.arity, required=required)
            self._ordered[key] = got
        return got

    # -- bodies and expressions ------------------------------------------------------------

    def body(self, body: Sequence[ast.Expr], scope: Scope, i: int = 0) -> Iterator[None]:
        if i == len(body):
            yield
            return
        e = body[i]
        self.where.append(e.location)
        try:
            for _ in self.expr(e, scope):
                self.where.append(e.location)
                try:
                    yield from self.body(body, scope, i + 1)
                finally:
                    self.where.pop()
        finally:
            self.where.pop()

    def expr(self, e: ast.Expr, scope: Scope) -> Iterator[None]:
        if e.negated:
            yield from self.negation(e, scope)
            return
        if e.with_mods:
            yield from self.with_expr(e, scope)
            return
        s = e.statement
        t = type(s)
        if t is ast.SomeVars:
            yield
        elif t is ast.Assign or t is ast.Unify:
            yield from self.unify_terms(s.lhs, s.rhs, scope)  # type: ignore[union-attr]
        elif t is ast.SomeIn:
            yield from self.some_in(s, scope)  # type: ignore[arg-type]
        elif t is ast.Every:
            yield from self.every(e, s, scope)  # type: ignore[arg-type]
        elif t is ast.Call and s.op == "equal" and len(s.args) == 2:  # type: ignore[union-attr]
            # OPA's compiler turns `a == b` into `a = b` where it is a whole expression.
            yield from self.unify_terms(s.args[0], s.args[1], scope)  # type: ignore[union-attr]
        elif t is ast.Call and self.tree.arity(s.op) is not None and len(s.args) == (self.tree.arity(s.op) or 0) + 1:  # type: ignore[union-attr]
            # A call with its output captured: `count(xs, n)`.
            call = ast.Call(s.op, s.args[:-1], s.location, s.op_ref)  # type: ignore[union-attr]
            node = self.tree.functions.get(s.op)  # type: ignore[union-attr]
            if node is not None:
                yield from self.function_into(node, call, s.args[-1], scope)  # type: ignore[union-attr]
                return
            for value in self.term(call, scope):
                yield from self.unify_terms_values(value, s.args[-1], scope)  # type: ignore[union-attr]
        else:
            for value in self.term(s, scope):
                if type(value) is Known:
                    if value.value is not False:
                        yield
                else:
                    yield from self.save(ast.Expr(value, False, (), self.where[-1]), (value,))

    def unify_terms(self, a: ast.Term, b: ast.Term, scope: Scope) -> Iterator[None]:
        """``a = b`` for source terms: evaluate the left side, then the right, then unify."""
        for va in self.term(a, scope, against=self.static_hint(b)):
            yield from self.unify_terms_values(va, b, scope)

    def unify_terms_values(self, va: Any, b: ast.Term, scope: Scope) -> Iterator[None]:
        for vb in self.term(b, scope, against=va if type(va) is Known else None):
            yield from self.unify(self.env.plug(va), vb)

    @staticmethod
    def static_hint(t: ast.Term) -> Known | None:
        """The value of ``t`` when it is a literal (what a default rule is compared with)."""
        return literal(t)

    # -- saving ------------------------------------------------------------------------------

    def save(self, expr: ast.Expr, terms: Sequence[Any]) -> Iterator[None]:
        """Save ``expr`` (already plugged) for this solution; its unbound variables become unknown."""
        mark = self.env.mark()
        names: list[str] = []
        for t in terms:
            self.env.unbound_vars(t, names)
        for n in names:
            self.env.mark_unknown(n)
        frame = self.frames[-1]
        frame.append(expr)
        try:
            yield
        finally:
            frame.pop()
            self.env.undo(mark)

    def save_unify(self, a: Any, b: Any) -> Iterator[None]:
        where = self.where[-1]
        for call, out in ((a, b), (b, a)):
            if type(call) is ast.Call and type(out) is Known and self._saved_call(call.op):
                # OPA's compiler makes `f(x) == c` the call `f(x, c)` (its output compared with c);
                # so for a saved call of a user function (with an else) or a support function.
                stmt = ast.Call(call.op, call.args + (out,), call.location, call.op_ref)  # type: ignore[operator]
                yield from self.save(ast.Expr(stmt, False, (), where), (a, b))
                return
        yield from self.save(ast.Expr(ast.Unify(a, b, where), False, (), where), (a, b))

    def _saved_call(self, op: str) -> bool:
        if op in self.tree.functions:
            return True
        if op.startswith(f"data.{self.support.namespace}."):
            return True
        return self.tree.builtin(op) is not None

    # -- unification -------------------------------------------------------------------------

    def unify(self, a: Any, b: Any) -> Iterator[None]:
        """Unify two plugged terms (OPA's ``biunify``), saving where either is unknown."""
        env = self.env
        a = env.resolve(a)
        b = env.resolve(b)
        ta, tb = type(a), type(b)
        if ta is Known and tb is Known:
            if equal(a.value, b.value):
                yield
            return
        if self._saved_side(a) or self._saved_side(b):
            yield from self.save_unify(env.plug(a), env.plug(b))
            return
        if ta is ast.Var and tb is ast.Var:
            if a.name == b.name:
                yield
                return
            yield from self._bind(a.name, b)
            return
        if ta is ast.Var:
            yield from self._bind(a.name, b)
            return
        if tb is ast.Var:
            yield from self._bind(b.name, a)
            return
        yield from self._unify_composite(a, b)

    def _saved_side(self, t: Any) -> bool:
        tt = type(t)
        if tt is ast.Var:
            return self.env.is_unknown(t.name)
        if tt is ast.Ref or tt is ast.Call or tt in (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr):
            return True
        if tt is ast.SetTerm:
            return self.env.contains_unknown(t)
        return False

    def _bind(self, name: str, t: Any) -> Iterator[None]:
        mark = self.env.mark()
        self.env.bind(name, t)
        try:
            yield
        finally:
            self.env.undo(mark)

    def _unify_composite(self, a: Any, b: Any) -> Iterator[None]:
        items_a = _items(a)
        items_b = _items(b)
        if items_a is None or items_b is None or items_a[0] != items_b[0]:
            return
        kind = items_a[0]
        if kind == "array":
            xs, ys = items_a[1], items_b[1]
            if len(xs) != len(ys):
                return
            yield from self._unify_each(list(zip(xs, ys)), 0)
        elif kind == "object":
            xs, ys = items_a[1], items_b[1]
            if len(xs) != len(ys) or set(xs) != set(ys):
                return
            yield from self._unify_each([(xs[k], ys[k]) for k in xs], 0)
        else:
            pa, pb = collapse(self.env.plug(a)), collapse(self.env.plug(b))
            if type(pa) is Known and type(pb) is Known:
                if equal(pa.value, pb.value):
                    yield
            else:
                yield from self.save_unify(pa, pb)

    def _unify_each(self, pairs: list[tuple[Any, Any]], i: int) -> Iterator[None]:
        if i == len(pairs):
            yield
            return
        x, y = pairs[i]
        for _ in self.unify(x, y):
            yield from self._unify_each(pairs, i + 1)

    # -- some ... in, every ----------------------------------------------------------------

    def some_in(self, s: ast.SomeIn, scope: Scope) -> Iterator[None]:
        for coll in self.term(s.collection, scope):
            if type(coll) is Known:
                for k, v in iter_items(coll.value):
                    if s.key is not None:
                        for _ in self.unify_terms_values(Known(k), s.key, scope):
                            yield from self.unify_terms_values(Known(v), s.value, scope)
                    else:
                        yield from self.unify_terms_values(Known(v), s.value, scope)
                continue
            key = self.fresh()
            member = _extend_ref(coll, key)
            if s.key is not None:
                for vk in self.term(s.key, scope):
                    for _ in self.unify(key, vk):
                        for vv in self.term(s.value, scope):
                            yield from self.save_unify(vv, self.env.plug(member))
            else:
                for vv in self.term(s.value, scope):
                    yield from self.save_unify(vv, member)

    def every(self, e: ast.Expr, s: ast.Every, scope: Scope) -> Iterator[None]:
        if self.expr_unknown(e, scope):
            yield from self.save(ast.Expr(self.instantiate(s, scope), False, (), self.where[-1]), ())
            return
        for domain in self.term(s.domain, scope):
            if type(domain) is not Known or type(domain.value) not in (list, tuple, dict, set, frozenset):
                continue
            ok = True
            for k, v in iter_items(domain.value):
                mark = self.env.mark()
                try:
                    if s.key is not None:
                        self.env.bind(scope.var(s.key.name), Known(k))
                    self.env.bind(scope.var(s.value.name), Known(v))
                    body = self.ordered(s.body, scope, set())
                    found = next(iter(self.body(body, scope)), UNDEF) is not UNDEF
                finally:
                    self.env.undo(mark)
                if not found:
                    ok = False
                    break
            if ok:
                yield

    # -- negation -----------------------------------------------------------------------------

    def expr_unknown(self, e: ast.Expr, scope: Scope) -> bool:
        """Whether ``e`` needs saving with the current bindings (OPA's ``unknown(expr)``)."""
        env = self.env

        def var_unknown(name: str) -> bool:
            g = scope.var(name)
            return env.contains_unknown(ast.Var(g)) if (g in env.binds or env.is_unknown(g)) else False

        return self.deps.expr(e, var_unknown)

    def negation(self, e: ast.Expr, scope: Scope) -> Iterator[None]:
        inner = ast.Expr(e.statement, False, e.with_mods, e.location)
        if not self.expr_unknown(inner, scope):
            mark = self.env.mark()
            gen = self.expr(inner, scope)
            found = next(gen, UNDEF) is not UNDEF
            gen.close()  # type: ignore[attr-defined]
            self.env.undo(mark)
            if not found:
                yield
            return
        live = set(self.env.unknown)
        queries: list[list[ast.Expr]] = []
        self.frames.append([])
        try:
            for _ in self.expr(inner, scope):
                queries.append(copy_propagate(list(self.frames[-1]), live, ensure_non_empty=True, arity=self.tree.arity))
        finally:
            self.frames.pop()
        if not queries:
            yield
            return
        if _can_inline_negation(live, queries):
            yield from self._save_complements(queries, 0, [])
            return
        ref = self.support.negation(queries, live, self.where[-1])
        yield from self.save(ref, ())

    def _save_complements(self, queries: list[list[ast.Expr]], i: int, chosen: list[ast.Expr]) -> Iterator[None]:
        if i == len(queries):
            yield from self._save_all(chosen, 0)
            return
        for expr in queries[i]:
            flipped = ast.Expr(expr.statement, not expr.negated, expr.with_mods, expr.location)
            chosen.append(flipped)
            yield from self._save_complements(queries, i + 1, chosen)
            chosen.pop()

    def _save_all(self, exprs: list[ast.Expr], i: int) -> Iterator[None]:
        if i == len(exprs):
            yield
            return
        for _ in self.save(exprs[i], ()):
            yield from self._save_all(exprs, i + 1)

    # -- with ---------------------------------------------------------------------------------

    def with_expr(self, e: ast.Expr, scope: Scope) -> Iterator[None]:
        """``expr with ...``: saved (with its modifiers) when anything in it is unknown;
        otherwise evaluated with the replaced ``input``/``data`` values."""
        if self.expr_unknown(ast.Expr(e.statement, False, (), e.location), scope) or any(
            self.deps.term(w.value) for w in e.with_mods
        ):
            stmt = self.instantiate(e.statement, scope)
            withs = tuple(ast.With(w.target, self.instantiate(w.value, scope), w.location) for w in e.with_mods)
            yield from self.save(ast.Expr(stmt, False, withs, self.where[-1]), ())
            return
        yield from self.with_known(e, scope)


def _items(t: Any) -> tuple[str, Any] | None:
    """A composite's kind and parts: ``("array", [..])``, ``("object", {key: value})``, ``("set", ..)``."""
    tt = type(t)
    if tt is Known:
        v = t.value
        if type(v) in (list, tuple):
            return "array", [Known(x) for x in v]
        if type(v) is dict:
            return "object", {k: Known(x) for k, x in v.items()}
        if type(v) in (set, frozenset):
            return "set", v
        return None
    if tt is ast.Array:
        return "array", list(t.items)
    if tt is ast.Object:
        out: dict[Any, Any] = {}
        for k, v in t.items:
            if type(k) is not Known:
                return None
            out[freeze(k.value)] = v
        return "object", out
    if tt is ast.SetTerm:
        return "set", t.items
    return None


def _extend_ref(base: Any, key: Any) -> ast.Ref:
    if type(base) is ast.Ref:
        return ast.Ref(base.head, base.path + (key,), base.location)
    return ast.Ref(base, (key,), getattr(base, "location", ast.NO_LOCATION))


def _can_inline_negation(safe: set[str], queries: list[list[ast.Expr]]) -> bool:
    """OPA's test: the product of the queries' sizes is at most 16, no
    expression holds a nested ref or call, and positive expressions read only
    safe variables."""
    size = 1
    for query in queries:
        size *= len(query)
        for expr in query:
            if _nested_ref_or_call(expr):
                return False
            if not expr.negated:
                names: set[str] = set()
                _expr_vars(expr, names)
                if names - safe:
                    return False
    return size <= 16


def _expr_vars(expr: ast.Expr, out: set[str]) -> None:
    from pyrego.partial.terms import term_vars as residual_vars

    s = expr.statement
    if isinstance(s, ast.Unify):
        residual_vars(s.lhs, out)
        residual_vars(s.rhs, out)
    elif isinstance(s, ast.Call):
        for a in s.args:
            residual_vars(a, out)
    elif isinstance(s, ast.Ref):
        for p in s.path:
            residual_vars(p, out)
        if isinstance(s.head, ast.Var) and s.head.name not in ("input", "data"):
            out.add(s.head.name)
    else:
        residual_vars(s, out)


def _contains_ref_or_call(t: Any) -> bool:
    tt = type(t)
    if tt in (ast.Ref, ast.Call):
        return True
    if tt in (ast.Array, ast.SetTerm):
        return any(_contains_ref_or_call(x) for x in t.items)
    if tt is ast.Object:
        return any(_contains_ref_or_call(k) or _contains_ref_or_call(v) for k, v in t.items)
    return False


def _nested_ref_or_call(expr: ast.Expr) -> bool:
    s = expr.statement
    if isinstance(s, ast.Unify):
        return any(_nested_in_term(t) for t in (s.lhs, s.rhs))
    if isinstance(s, ast.Call):
        return any(_contains_ref_or_call(a) for a in s.args)
    return _nested_in_term(s)


def _nested_in_term(t: Any) -> bool:
    if type(t) is ast.Ref:
        return any(_contains_ref_or_call(p) for p in t.path)
    return _contains_ref_or_call(t)


__all__ = ["Evaluator", "PartialEvalError"]
