"""Rule bodies as OPA's compiler hands them to its type checker.

OPA checks types after rewriting each rule (``v1/ast/compile.go``); the
rewrites decide which expression an error belongs to and what a variable's
type is, so they are made here, in OPA's order, on the compiler's resolved
rules (:mod:`pyrego.compile.pipeline`, bodies ordered by :func:`pyrego.compile.body_order.reorder_body`):

1. ``RewriteLocalVars``: ``x := e`` is ``x = e``; ``some k, v in xs`` is
   ``v = xs[k]``; ``some x`` declarations go.
2. ``RewriteTemplateStrings`` / ``RewritePrintCalls``: ``$"a{x}"`` is
   ``internal.template_string(["a", {v | v = x}])``, ``print(a)`` is
   ``internal.print([{v | v = a}])``.
3. ``RewriteExprTerms``: each call nested in an operand becomes an
   expression of its own with an output variable, placed before it
   (innermost first); a ref whose head is a composite value reads a variable
   bound to it; ``every``'s domain is bound to a variable.
4. ``RewriteComprehensionTerms`` / ``RewriteRefsInHead``: a comprehension's
   term and a rule head's key, value and arguments that hold refs or
   comprehensions are bound to variables at the end of the body.
5. ``RewriteWithValues``: a ``with`` value holding refs is bound first.
6. ``RewriteEquals`` (modules only): ``a == b`` as an expression is ``a = b``.
7. ``RewriteDynamicTerms``: refs and comprehensions among a call's operands,
   and those nested in a ref's keys or in composite terms, are bound to
   variables right before the expression.

Variables the rewrites make are named ``__localN__`` (N counts per check, so
a message naming one can differ from OPA's number).
"""

from __future__ import annotations

from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Array,
    ArrayCompr,
    Assign,
    Call,
    Every,
    Object,
    ObjectCompr,
    Ref,
    Scalar,
    SetCompr,
    SetTerm,
    SomeIn,
    SomeVars,
    TemplateString,
    Unify,
    Var,
)
from pyrego.compile.base import FuncRef, data_function_name
from pyrego.compile.body_order import reorder_body, with_head_in_body
from pyrego.compile.ground import in_build_order
from pyrego.compile.safety import stmt_vars, term_vars
from pyrego.errors import RegoCompileError, RegoTypeError, RegoUnsafeVarError
from pyrego.typecheck.ir import (
    CALL,
    EVERY,
    TERM,
    IArray,
    ICompr,
    IExpr,
    IObject,
    IRef,
    ISet,
    IWith,
    Term,
    display_name,
    eq_expr,
    term_text,
)
from pyrego.typecheck.signatures import builtin_type
from pyrego.typecheck.some_vars import LocalVarNumbers

_PRINT_CALLS = frozenset({"print", "internal.print"})


def _void(op: str) -> bool:
    """A builtin that returns nothing (``internal.test_case``): OPA's query compiler does not capture it."""
    fn = builtin_type(op)
    return fn is not None and fn.result is None

ArityFn = Callable[[str], "int | None"]

# Calls OPA replaces by the rule's annotations before checking types: their
# value is typed by what it holds (see ``Lowerer.metadata``).
_METADATA_CALLS = frozenset({"rego.metadata.chain", "rego.metadata.rule"})

#: The value of ``rego.metadata.chain()`` / ``rule()`` (the op) inside a rule.
MetadataFn = Callable[[str, ast.Rule], Any]


def _constant_term(value: Any, location: ast.Location) -> Term:
    """A JSON value (annotations as the metadata calls return them) as a term."""
    if isinstance(value, list):
        return IArray(tuple([_constant_term(x, location) for x in value]), location)
    if isinstance(value, dict):
        return IObject(tuple([(Scalar(k, location), _constant_term(v, location)) for k, v in value.items()]), location)
    return Scalar(value, location)


def _requires_eval(t: Any) -> bool:
    """Whether ``t`` holds a ref or a comprehension (OPA's ``requiresEval``)."""
    if t is None:
        return False
    tt = type(t)
    if tt is IRef or tt is ICompr:
        return True
    if tt is IArray or tt is ISet:
        return any(_requires_eval(x) for x in t.items)
    if tt is IObject:
        return any(_requires_eval(k) or _requires_eval(v) for k, v in t.items)
    return False


def _hoisted(t: Any) -> bool:
    """A variable pyrego.compile.rewrite made for a call inside a negation."""
    return type(t) is Var and t.name.startswith("__local") and "@" in t.name


class LoweredRule:
    """A rule ready for checking: its body and head terms, lowered."""

    __slots__ = ("rule", "body", "args", "key", "value", "path")

    def __init__(self, rule: ast.Rule, body: list[IExpr], args: list[Term] | None, key: Term | None, value: Term | None, path: list[Term]) -> None:
        self.rule = rule
        self.body = body
        self.args = args
        self.key = key
        self.value = value
        self.path = path  # the head ref below the package (the rule's name first)


class Lowerer:
    """Lowers the rules and queries of one program (one counter for fresh variables)."""

    def __init__(
        self,
        arity: ArityFn,
        is_function: Callable[[str], bool],
        *,
        rewrite_equals: bool = True,
        function_paths: dict[str, tuple[str, ...]] | None = None,
        local_numbers: LocalVarNumbers | None = None,
        metadata: MetadataFn | None = None,
    ) -> None:
        self.arity = arity
        # What a rule's metadata calls return (OPA checks the constants it puts
        # in their place); without it they are of any type.
        self.metadata = metadata
        self.current: ast.Rule | None = None  # the rule being lowered
        self.is_function = is_function
        # A function rule's name as a call writes it -> its path under data.
        self.function_paths = function_paths or {}
        # How OPA numbers the keys it makes for `some x in xs` (for messages).
        self.local_numbers = local_numbers
        self.rewrite_equals = rewrite_equals
        self.counter = 0
        self.shown: dict[str, tuple[Any, ...]] = {}
        self.comprehensions = 0  # how many were made: tells which expressions hold one

    def fresh(self, location: ast.Location, shown: tuple[Any, ...] | None = None) -> Var:
        """A new variable; ``shown`` says what messages call it (see :meth:`show`)."""
        name = f"__local{self.counter}__"
        self.counter += 1
        if shown is not None:
            self.shown[name] = shown
        return Var(name, location)

    def show(self, name: str) -> str:
        """A variable as OPA's messages name it: one made for a call's output or a
        ref's composite head is the term it stands for (``count(x).foo``,
        ``[1].a``); the key made for ``some x in xs`` has OPA's number."""
        spec = self.shown.get(name)
        if spec is None:
            return display_name(name)
        if spec[0] == "call":
            return f"{spec[1]}(" + ", ".join([term_text(a, self.show) for a in spec[2]]) + ")"
        if spec[0] == "term":
            return term_text(spec[1], self.show)
        numbered = self.local_numbers.name(spec[1]) if self.local_numbers is not None else None
        return numbered if numbered is not None else display_name(name)

    # -- rules -------------------------------------------------------------------

    def rule(self, rule: ast.Rule, args: tuple[ast.Term, ...] | None) -> LoweredRule:
        """``rule`` (one branch of an else chain: ``args`` are the chain's arguments)."""
        self.current = rule
        try:
            return self._rule(rule, args)
        finally:
            self.current = None

    def _rule(self, rule: ast.Rule, args: tuple[ast.Term, ...] | None) -> LoweredRule:
        head = rule.head
        bound: set[str] = set()
        for a in args or ():
            term_vars(a, bound)
        body, now = self.body(rule.body, bound, set(), rule.location)
        tail: list[IExpr] = []
        made = self.comprehensions
        # RewriteRuleHeadRefs: composite keys in the head's ref are bound first.
        name = head.ref.head.name if isinstance(head.ref.head, Var) else ""
        path: list[Term] = [Scalar(name, head.ref.location)]
        for p in head.ref.path:
            lowered: Term = self.expand(p, tail, now, set(), ())
            if type(lowered) not in (Var, Scalar):
                v = self.fresh(p.location)
                tail.append(eq_expr(v, lowered, p.location))
                lowered = v
            path.append(lowered)
        # RewriteExprTerms in the head: calls become expressions at the end.
        largs = [self.expand(a, tail, now, set(), ()) for a in args] if args is not None else None
        key = self.expand(head.key, tail, now, set(), ()) if head.key is not None else None
        value_term = head.value if head.value is not None or head.key is not None else Scalar(True, head.location)
        value: Term | None = self.expand(value_term, tail, now, set(), ()) if value_term is not None else None
        # RewriteRefsInHead: refs and comprehensions too.
        if _requires_eval(key):
            assert key is not None
            v = self.fresh(key.location)
            tail.append(eq_expr(v, key, key.location))
            key = v
        if _requires_eval(value):
            assert value is not None
            v = self.fresh(value.location)
            tail.append(eq_expr(v, value, value.location))
            value = v
        if largs is not None:
            for i, arg in enumerate(largs):
                if _requires_eval(arg):
                    v = self.fresh(arg.location)
                    tail.append(eq_expr(v, arg, arg.location))
                    largs[i] = v
        body.extend(self._flagged(self.finish(tail), made))
        return LoweredRule(rule, body, largs, key, value, path)

    # -- bodies ------------------------------------------------------------------

    def body(
        self, stmts: ast.Body, bound: set[str], outer: set[str], location: ast.Location | None, *, capture: bool = False
    ) -> tuple[list[IExpr], set[str]]:
        """``stmts`` ordered as for evaluation and lowered, and the variables bound
        after them; raises RegoUnsafeVarError when they cannot be ordered.

        ``capture``: a query's own calls get a variable for their value (OPA's
        rego package adds one to report each expression's value)."""
        outer = outer | bound
        for e in stmts:
            stmt_vars(e.statement, outer)
        ordered, after = reorder_body(stmts, set(bound), outer, self.arity, location=location, bind_operands=False)
        out: list[IExpr] = []
        now = set(bound)  # what is bound before each expression (for its comprehensions)
        for e in ordered:
            made = self.comprehensions
            out.extend(self._flagged(self.finish(self.stmt(e, now, outer, capture)), made))
            stmt_vars(e.statement, now)
        if not out:
            out.append(IExpr(TERM, location or ast.NO_LOCATION, term=Scalar(True, location or ast.NO_LOCATION)))
        return out, after

    def stmt(self, e: ast.Expr, bound: set[str], outer: set[str], capture: bool = False) -> list[IExpr]:
        """One expression, rewritten (stages 1-5); several expressions come out."""
        s: Any = e.statement
        loc = e.location
        with_support: list[IExpr] = []
        withs = tuple(self.with_mod(w, with_support, bound, outer) for w in e.with_mods)
        support: list[IExpr] = []
        main: IExpr | None
        st = type(s)
        if st is SomeVars:
            return []
        if st is Unify and _hoisted(s.lhs) and type(s.rhs) is Call and s.rhs.op not in _METADATA_CALLS:
            # A call the ordering took out of a negation (pyrego.compile.rewrite):
            # OPA's own rewrite gives it the variable as its output.
            args = tuple([self.expand(a, support, bound, outer, withs) for a in s.rhs.args])
            main = IExpr(CALL, s.rhs.location, op=s.rhs.op, operands=args + (s.lhs,), withs=withs, generated=True)
            main.op_path = self.function_paths.get(s.rhs.op)
        elif st is Assign or st is Unify:
            if _hoisted(s.lhs) and type(s.rhs) is Call:
                self.shown[s.lhs.name] = ("call", s.rhs.op, ())  # (OPA's messages show the metadata call)
            lhs = self.expand(s.lhs, support, bound, outer, withs)
            rhs = self.expand(s.rhs, support, bound, outer, withs)
            main = IExpr(CALL, loc, op="eq", operands=(lhs, rhs), negated=e.negated, withs=withs)
        elif st is SomeIn:
            key: ast.Term = s.key if s.key is not None else self.some_key(s)
            coll = s.collection
            ref = Ref(coll.head, coll.path + (key,), coll.location) if type(coll) is Ref else Ref(coll, (key,), coll.location)
            value = self.expand(s.value, support, bound, outer, withs)
            rhs = self.expand(ref, support, bound, outer, withs)
            main = IExpr(CALL, loc, op="eq", operands=(value, rhs), negated=e.negated, withs=withs)
        elif st is Every:
            return with_support + self.every(e, s, withs, bound, outer)
        elif st is Call and s.op == "print":
            arg = IArray(tuple(self.capture(a, bound, outer) for a in s.args), loc)
            main = IExpr(CALL, loc, op="internal.print", operands=(arg,), negated=e.negated, withs=withs)
        elif st is Call and s.op not in _METADATA_CALLS:
            operands = tuple(self.expand(a, support, bound, outer, withs) for a in s.args)
            if capture and not e.negated and self.arity(s.op) == len(operands) and not _void(s.op):
                operands += (self.fresh(loc),)  # (a void builtin's call has no value to capture)
            main = IExpr(CALL, loc, op=s.op, operands=operands, negated=e.negated, withs=withs)
            main.op_path = self.function_paths.get(s.op)
        else:
            term = self.expand(s, support, bound, outer, withs)
            if capture and not e.negated:
                # A query's term is unified with a variable that reports its
                # value: a term of no type (``data.p.a.x[1]`` where the set
                # at a.x holds no number) does not unify with it.
                main = IExpr(CALL, loc, op="eq", operands=(term, self.fresh(loc)), withs=withs)
            else:
                main = IExpr(TERM, loc, term=term, negated=e.negated, withs=withs)
        # RewriteWithValues: a value with refs is bound right before.
        bind_withs: list[IExpr] = []
        if withs:
            new_withs = []
            for w in withs:
                if _requires_eval(w.value) and not self.function_value(w):
                    v = self.fresh(w.value.location)
                    bind_withs.append(eq_expr(v, w.value, w.value.location))
                    w = IWith(w.target, v, w.location)
                new_withs.append(w)
            main.withs = tuple(new_withs)
        return with_support + support + bind_withs + [main]

    def some_key(self, s: SomeIn) -> Var:
        """The key variable of ``some x in xs``, shown with the number OPA gives it."""
        return self.fresh(s.location, ("some", s))

    def function_value(self, w: IWith) -> bool:
        """A ``with`` value naming a function (not rewritten: it replaces a function)."""
        v = w.value
        if type(v) is not IRef:
            return False
        parts = []
        terms = v.terms()
        for t in terms:
            if type(t) is Var:
                parts.append(t.name)
            elif type(t) is Scalar and isinstance(t.value, str):
                parts.append(t.value)
            elif type(t) is Scalar and type(terms[0]) is Var and terms[0].name == "data":
                # (a[1].x: a function named as its calls are)
                return self.is_function(data_function_name(tuple(terms[1:])) or "")  # type: ignore[arg-type]
            else:
                return False
        return self.is_function(".".join(parts))

    def with_mod(self, w: ast.With, support: list[IExpr], bound: set[str], outer: set[str]) -> IWith:
        target = self.plain_ref(w.target)
        value_src = w.value
        if isinstance(value_src, FuncRef):
            head, *rest = value_src.name.split(".")
            value: Term = IRef(Var(head, value_src.location), tuple(Scalar(p, value_src.location) for p in rest), value_src.location)
        else:
            value = self.expand(value_src, support, bound, outer, ())
        return IWith(target, value, w.location)

    def plain_ref(self, r: ast.Ref) -> Term:
        head = r.head
        h: Term = head if isinstance(head, Var) else Var("", r.location)
        path: list[Term] = [p if isinstance(p, (Scalar, Var)) else Scalar("", r.location) for p in r.path]
        return IRef(h, tuple(path), r.location)

    def every(self, e: ast.Expr, s: Every, withs: tuple[IWith, ...], bound: set[str], outer: set[str]) -> list[IExpr]:
        made = self.comprehensions
        support: list[IExpr] = []
        domain = self.expand(s.domain, support, bound, outer, withs)
        d = self.fresh(s.domain.location)
        bind = eq_expr(d, domain, s.domain.location, withs)
        inner_bound = set(bound) | {s.value.name}
        if s.key is not None:
            inner_bound.add(s.key.name)
        body, _ = self.body(s.body, inner_bound, outer, s.location)
        expr = IExpr(EVERY, e.location, term=d, negated=e.negated, withs=withs)
        expr.every_key = s.key if s.key is not None else self.fresh(s.location)
        expr.every_value = s.value
        expr.body = body
        return self._flagged(support + [bind, expr], made)

    def capture(self, t: ast.Term, bound: set[str], outer: set[str]) -> ICompr:
        """``{v | v = t}``: how print and template strings read a term that may be undefined."""
        v = self.fresh(t.location)
        support: list[IExpr] = []
        made = self.comprehensions
        lowered = self.expand(t, support, bound, outer, ())
        body = self._flagged(self.finish(support + [eq_expr(v, lowered, t.location)]), made)
        self.comprehensions += 1
        return ICompr("set", None, v, body, t.location)

    # -- terms -------------------------------------------------------------------

    def expand(self, t: Any, support: list[IExpr], bound: set[str], outer: set[str], withs: tuple[IWith, ...]) -> Term:
        """``t`` with its calls made expressions of their own (appended to ``support``)."""
        tt = type(t)
        if tt is Scalar or tt is Var:
            return t
        if tt is Ref:
            head = t.head
            for p in t.path:
                if type(p) is not Scalar and type(p) is not Var:
                    break
            else:
                if type(head) is Var:
                    return IRef(head, t.path, t.location)  # the common case: nothing to rewrite
            head = self.expand(head, support, bound, outer, withs)
            path = tuple([self.expand(p, support, bound, outer, withs) for p in t.path])
            if type(head) in (IArray, IObject, ISet, ICompr):
                v = self.fresh(head.location, ("term", head))
                bind = eq_expr(v, head, head.location)
                bind.withs = withs
                support.append(bind)
                head = v
            return IRef(head, path, t.location)
        if tt is Call:
            op = t.op
            if op in _METADATA_CALLS:
                v = self.fresh(t.location, ("call", op, ()))
                if self.metadata is not None and self.current is not None and not t.args:
                    try:
                        value = self.metadata(op, self.current)
                    except RegoCompileError:
                        return v  # (refused when the rule is compiled)
                    bind = eq_expr(v, _constant_term(value, t.location), t.location)
                    bind.withs = withs
                    support.append(bind)
                return v
            args = tuple([self.expand(a, support, bound, outer, withs) for a in t.args])
            if op in _PRINT_CALLS:
                # (OPA's print rewriting: a print call is an expression of its own, never an operand)
                raise RegoTypeError(f"{op}({', '.join(term_text(a) for a in args)}) used as value", t.location)
            out = self.fresh(t.location, ("call", op, args))
            call = IExpr(CALL, t.location, op=op, operands=args + (out,), withs=withs, generated=True)
            call.op_path = self.function_paths.get(op)
            support.append(call)
            return out
        if tt is Array:
            return IArray(tuple([self.expand(x, support, bound, outer, withs) for x in t.items]), t.location)
        if tt is SetTerm:
            return ISet(tuple([self.expand(x, support, bound, outer, withs) for x in t.items]), t.location)
        if tt is Object:
            pairs = []
            # (in OPA's order of the keys: its checker keeps the type of the last one not constant)
            for key, val in in_build_order(t.items):
                lk = self.expand(key, support, bound, outer, withs)
                pairs.append((lk, self.expand(val, support, bound, outer, withs)))
            return IObject(tuple(pairs), t.location)
        if tt is TemplateString:
            parts: list[Term] = []
            for p in t.parts:
                if isinstance(p, str):
                    parts.append(Scalar(p, t.location))
                elif type(p) is Var and p.name in bound:
                    # (OPA reads a bound variable as ``{v}``: typed against
                    # the call's ``any``, the variable is ``any`` from here on)
                    parts.append(ISet((p,), t.location))
                else:
                    parts.append(self.capture(p, bound, outer))
            out = self.fresh(t.location)
            support.append(IExpr(CALL, t.location, op="internal.template_string", operands=(IArray(tuple(parts), t.location), out), withs=withs, generated=True))
            return out
        if tt is ArrayCompr or tt is SetCompr or tt is ObjectCompr:
            return self.comprehension(t, bound, outer)
        raise TypeError(f"unexpected term {tt.__name__}")

    def comprehension(self, c: Any, bound: set[str], outer: set[str]) -> ICompr:
        try:
            body, inner_bound = self.body(c.body, bound, outer, c.location)
        except RegoUnsafeVarError:
            # (Safe in OPA's form only: a ref of its head binds what its body reads.)
            moved = with_head_in_body(c, bound, outer | bound, self.arity)
            if moved is None:
                raise
            c = moved
            body, inner_bound = self.body(c.body, bound, outer, c.location)
        made = self.comprehensions
        tail: list[IExpr] = []
        key: Term | None = None
        if type(c) is ObjectCompr:
            key = self.expand(c.key, tail, inner_bound, outer, ())
            term = self.expand(c.value, tail, inner_bound, outer, ())
            kind = "object"
        else:
            term = self.expand(c.term, tail, inner_bound, outer, ())
            kind = "array" if type(c) is ArrayCompr else "set"
        # RewriteComprehensionTerms: a term holding refs is bound in the body.
        if _requires_eval(key):
            assert key is not None
            v = self.fresh(key.location)
            tail.append(eq_expr(v, key, key.location))
            key = v
        if _requires_eval(term):
            v = self.fresh(term.location)
            tail.append(eq_expr(v, term, term.location))
            term = v
        body.extend(self._flagged(self.finish(tail), made))
        self.comprehensions += 1
        return ICompr(kind, key, term, body, c.location)

    def _flagged(self, exprs: list[IExpr], made: int) -> list[IExpr]:
        """``exprs``, marked as holding comprehensions when any were made since ``made``."""
        if made != self.comprehensions:
            for x in exprs:
                x.closures = True
        return exprs

    # -- the last stages ---------------------------------------------------------

    def finish(self, exprs: list[IExpr]) -> list[IExpr]:
        """RewriteEquals and RewriteDynamicTerms on expressions that are otherwise lowered."""
        out: list[IExpr] = []
        for e in exprs:
            if self.rewrite_equals and e.kind == CALL and e.op == "equal" and len(e.operands) == 2:
                e.op = "eq"
            if e.kind == CALL and e.op == "eq":
                if len(e.operands) == 2:
                    a = self.dyn_in_term(e, e.operands[0], out)
                    b = self.dyn_in_term(e, e.operands[1], out)
                    e.operands = (a, b)
            elif e.kind == CALL:
                e.operands = tuple([self.dyn_one(e, t, out) for t in e.operands])
            elif e.kind == TERM:
                assert e.term is not None
                e.term = self.dyn_in_term(e, e.term, out)
            out.append(e)
        return out

    def dyn_in_term(self, orig: IExpr, t: Any, out: list[IExpr]) -> Term:
        tt = type(t)
        if tt is IRef:
            return self._dyn_path(orig, t, out)
        if tt is ICompr or tt is Scalar or tt is Var:
            return t
        return self.dyn_one(orig, t, out)

    def _dyn_path(self, orig: IExpr, t: IRef, out: list[IExpr]) -> IRef:
        """``t`` with the refs and comprehensions among its keys bound first."""
        for p in t.path:
            if type(p) is not Scalar and type(p) is not Var:
                return IRef(t.head, tuple([self.dyn_one(orig, p, out) for p in t.path]), t.location)
        return t

    def dyn_one(self, orig: IExpr, t: Any, out: list[IExpr]) -> Term:
        tt = type(t)
        if tt is Scalar or tt is Var:
            return t
        if tt is IRef:
            return self._bind(orig, self._dyn_path(orig, t, out), out)
        if tt is IArray:
            return IArray(tuple(self.dyn_one(orig, x, out) for x in t.items), t.location)
        if tt is ISet:
            return ISet(tuple(self.dyn_one(orig, x, out) for x in t.items), t.location)
        if tt is IObject:
            pairs = []
            for k, v in t.items:
                lk = self.dyn_one(orig, k, out)
                pairs.append((lk, self.dyn_one(orig, v, out)))
            return IObject(tuple(pairs), t.location)
        if tt is ICompr:
            return self._bind(orig, t, out)
        return t

    def _bind(self, orig: IExpr, t: Term, out: list[IExpr]) -> Var:
        v = self.fresh(t.location)
        out.append(eq_expr(v, t, t.location, orig.withs))
        return v
