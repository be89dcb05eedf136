"""Body ordering for safety: OPA's order of a body's expressions.

Rego bodies are declarative: ``x > 1; x := input.a`` is valid, and OPA runs
the expressions in an order in which every variable is bound before it is
read. :func:`reorder_body` orders a body as OPA's compiler does, from what
each expression needs bound and binds (:mod:`pyrego.compile.safety`); a body
that cannot be ordered has unsafe variables: ``rego_unsafe_var_error``,
naming the variables OPA names.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Array,
    Assign,
    Call,
    Every,
    Object,
    Ref,
    SetTerm,
    SomeIn,
    SomeVars,
    TemplateString,
    Unify,
    Var,
)
from pyrego.compile.rewrite import bind_negated_operands, split_negated_calls
from pyrego.compile.safety import (
    ROOTS,
    ArityFn,
    body_vars,
    expr_has_vars,
    expr_needs_and_outputs,
    is_generated,
    is_wildcard,
    ref_outputs,
    shown_name,
    term_vars,
    term_vars_ready,
    unsafe_var_message,
    vars_past_ref_heads,
)
from pyrego.compile.with_values import bind_with_values
from pyrego.errors import RegoUnsafeVarError

T = TypeVar("T")


def reorder_body(
    body: ast.Body,
    bound: set[str],
    outer: set[str],
    arity: ArityFn,
    *,
    required: set[str] | None = None,
    location: ast.Location | None = None,
    equality_unifies: bool = True,
    bind_operands: bool = True,
    functions: Callable[[str], bool] | None = None,
) -> tuple[ast.Body, set[str]]:
    """Order ``body`` so each expression's inputs are bound first.

    ``bound`` are the variables bound on entry (function arguments, captured
    outer variables); ``outer`` every variable visible from enclosing scopes
    (used to tell captured variables from local ones in closures);
    ``required`` variables that must be bound at the end (rule head vars).
    Returns the new body and the set of variables bound at its end.

    Negated expressions come back with the parts OPA evaluates before the
    negation as expressions of their own, made before ordering and after
    it as OPA's stages make them (:mod:`pyrego.compile.rewrite`);
    ``equality_unifies`` is False for a query's bodies, where ``==`` stays a
    call; without ``bind_operands`` the caller makes those after ordering.
    With ``functions`` (whether a name is a function of the policies), the
    calls nested in any expression holding a call of one are moved out too
    (:func:`pyrego.compile.rewrite.split_negated_calls`).
    """
    body = bind_with_values(split_negated_calls(body, functions), arity)
    now = set(bound)
    # Most bodies are already in a valid order: take expressions in source
    # order while each is ready (what the general loop below would pick too).
    ordered: list[ast.Expr] = []
    for expr in body:
        if expr_has_vars(expr):
            needs, outs = expr_needs_and_outputs(expr, now, outer, arity)
            if not needs <= now:
                break
            now |= outs
        ordered.append(expr)
    if len(ordered) < len(body):
        _reorder_rest(list(body[len(ordered) :]), ordered, now, outer, arity)
    if required:
        missing = sorted(v for v in required - now if not is_wildcard(v))
        if missing:
            raise RegoUnsafeVarError(unsafe_var_message(missing[0].split("#")[0]), location)
    if bind_operands:
        return bind_negated_operands(tuple(ordered), equality_unifies=equality_unifies), now
    return tuple(ordered), now


def naming_term_vars(
    t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr,
    body: ast.Body,
    compile_body: Callable[[ast.Body], T],
    bound: set[str],
    outer: set[str],
    arity: ArityFn,
) -> T:
    """``compile_body(body)`` for the body of the comprehension ``t``; where
    it has unsafe variables, raises them named as OPA names them. OPA's
    compiler first moves a term that needs evaluating (a ref, call or
    comprehension in it) to an expression ``__localN__ = term`` at the term,
    after the body: a variable of such a term is named at the term's place."""
    try:
        return compile_body(body)
    except RegoUnsafeVarError:
        moved = tuple(expr for _, expr in _moved_head_terms(t))
        if moved:
            reorder_body(body + moved, set(bound), outer, arity)
        raise


Comprehension = ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr


def with_head_in_body(t: Comprehension, bound: set[str], outer: set[str], arity: ArityFn) -> Comprehension | None:
    """``t`` in the form OPA's compiler gives it, its head's terms that need
    evaluating moved to the end of its body as ``__localN__ = term``, where
    only that form is safe: a ref in the head binds a variable the body
    reads (``[xs[i] | not f(ys[i])]``). None where that form is unsafe too."""
    moved = _moved_head_terms(t)
    if not moved:
        return None
    body = t.body + tuple(expr for _, expr in moved)
    try:
        reorder_body(body, set(bound), outer, arity)
    except RegoUnsafeVarError:
        return None
    head = {n: expr.statement.lhs for n, expr in moved if isinstance(expr.statement, Unify)}
    if isinstance(t, ast.ObjectCompr):
        return ast.ObjectCompr(head.get(0, t.key), head.get(1, t.value), body, t.location)
    return type(t)(head.get(0, t.term), body, t.location)


def check_head_vars(t: Comprehension, bound: set[str], at: ast.Location) -> None:
    """Raises OPA's error for a variable of ``t``'s head that its body leaves
    unbound, where the head's term stays in the head (no ref, call or
    comprehension in it): OPA names it at ``at``, the expression holding
    ``t`` (``t``'s own place where it is a rule's value)."""
    for term in (t.key, t.value) if isinstance(t, ast.ObjectCompr) else (t.term,):
        if not _needs_evaluating(term):
            left = sorted(v for v in term_vars(term, set()) if v not in bound and v not in ROOTS)
            if left:
                raise RegoUnsafeVarError(unsafe_var_message(shown_name(left[0])), at)


def _moved_head_terms(t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> list[tuple[int, ast.Expr]]:
    """Each of ``t``'s head terms that needs evaluating (by its place in the
    head) as the expression binding it to a variable of its own."""
    terms = (t.key, t.value) if isinstance(t, ast.ObjectCompr) else (t.term,)
    at = t.location
    return [
        (n, ast.Expr(Unify(Var(f"__local_term{n}__#h@{at.row}:{at.col}"), term, term.location), location=term.location or at))
        for n, term in enumerate(terms)
        if _needs_evaluating(term)
    ]


def _needs_evaluating(t: ast.Term) -> bool:
    """Whether ``t`` holds a ref, a call or a comprehension (OPA's requiresEval)."""
    if isinstance(t, Var):
        return t.name in ROOTS  # (input and data are refs in OPA)
    if isinstance(t, ast.Scalar):
        return False
    if isinstance(t, (Array, SetTerm)):
        return any(_needs_evaluating(x) for x in t.items)
    if isinstance(t, Object):
        return any(_needs_evaluating(k) or _needs_evaluating(v) for k, v in t.items)
    return True


def _reorder_rest(remaining: list[ast.Expr], ordered: list[ast.Expr], now: set[str], outer: set[str], arity: ArityFn) -> None:
    """Appends ``remaining`` to ``ordered`` in passes over them in source
    order, each placing every expression ready when it is reached (OPA's
    strategy: ``b; a; c`` with ``a`` binding what ``b`` reads and ``c``
    ready runs as ``a; c; b``); updates ``now``."""
    # An expression's needs/outputs depend only on which of its own variables
    # are bound: remember them per expression until that changes.
    own: dict[int, set[str]] = {}
    memo: dict[int, tuple[frozenset[str], tuple[set[str], set[str]]]] = {}
    for expr in remaining:
        names = body_vars((expr,), set())
        own[id(expr)] = names
    twins = _Twins(remaining, ordered) if len(set(remaining)) < len(remaining) else None
    calls = _LastCallOutputs.for_body(remaining, ordered, now, outer, arity)
    domains_ready: set[int] = set()
    while remaining:
        left: list[ast.Expr] = []
        for expr in remaining:
            if twins is not None and twins.dropped(expr):
                continue
            if type(expr.statement) is Every and (twins is not None or calls is not None):
                if id(expr) not in domains_ready:
                    # (OPA's unification binding the domain, an expression just before: _pieces)
                    if calls is not None:
                        calls.last = set()
                    if _domain_ready(expr, now):
                        domains_ready.add(id(expr))
                        if twins is not None:
                            twins.position += twins.size[id(expr)] - 1
                elif calls is not None and calls.skips(expr):
                    left.append(expr)
                    continue
                if calls is not None:
                    calls.note(expr, now)
            elif calls is not None:
                calls.visit(expr, now)
            names = own[id(expr)]
            if not names:
                # No variables at all: nothing needed, nothing bound.
                ordered.append(expr)
                if twins is not None:
                    twins.place(expr)
                continue
            key = frozenset(names & now)
            hit = memo.get(id(expr))
            if hit is not None and hit[0] == key:
                needs, outs = hit[1]
            else:
                needs, outs = expr_needs_and_outputs(expr, now, outer, arity)
                memo[id(expr)] = (key, (needs, outs))
            if needs <= now:
                ordered.append(expr)
                now |= outs
                if twins is not None:
                    twins.place(expr)
            else:
                left.append(expr)
                if twins is not None:
                    twins.unsafe[id(expr)] = (expr, needs - now)
        if len(left) == len(remaining):
            skipped = twins.named() if twins is not None else {}
            _raise_unsafe(remaining, now, outer, arity, calls.named(skipped) if calls is not None else skipped)
        remaining[:] = left
    if twins is not None and twins.lost:
        named = twins.named()
        if not named:
            raise RegoUnsafeVarError("unsafe expression", twins.lost[0].location)
        _raise_unsafe([], now, outer, arity, named)


class _Twins:
    """OPA's ordering of a body holding an expression twice (``k != "a";
    k != "a"; m[k]``). OPA skips an expression equal to one it has placed
    (the same statement, negation and modifiers) at the position in the
    ordered body equal to the expression's own position in the body (its
    ``Body.Contains`` compares positions too): that
    expression is never placed, and its variables still unsafe when it was
    last visited are reported (as OPA, which counts each call nested in an
    expression as an expression of its own)."""

    def __init__(self, remaining: list[ast.Expr], ordered: list[ast.Expr]) -> None:
        self.position = sum(_opa_size(e) for e in ordered)  # the next one placed
        self.index: dict[int, int] = {}
        self.size: dict[int, int] = {}
        at = self.position
        for e in remaining:
            self.index[id(e)] = at
            self.size[id(e)] = n = _opa_size(e)
            at += n
        self.placed: dict[ast.Expr, list[int]] = {}
        self.unsafe: dict[int, tuple[ast.Expr, set[str]]] = {}
        self.lost: list[ast.Expr] = []

    def dropped(self, expr: ast.Expr) -> bool:
        # (One with a nested call never is: OPA's variables for its calls differ.)
        if self.size[id(expr)] > 1 or self.index[id(expr)] not in self.placed.get(expr, ()):
            return False
        if not any(e is expr for e in self.lost):
            self.lost.append(expr)
        return True

    def place(self, expr: ast.Expr) -> None:
        self.placed.setdefault(expr, []).append(self.position)
        # (An ``every``'s domain was counted when it was ready.)
        self.position += 1 if type(expr.statement) is Every else self.size[id(expr)]

    def named(self) -> dict[str, ast.Location]:
        """Each variable of a skipped expression that was unsafe, at its first place."""
        first: dict[str, ast.Location] = {}
        for expr in self.lost:
            loc = expr.location
            for name in self.unsafe.get(id(expr), (expr, set()))[1]:
                seen = first.get(name)
                if not is_generated(name) and (seen is None or (loc.row, loc.col) < (seen.row, seen.col)):
                    first[name] = loc
        return first


class _LastCallOutputs:
    """OPA's check of an ``every`` whose body reads variables of the body
    around it (``every y in [1] { y != k }; m[k] > 1``), as OPA v1.20.2
    makes it: it passes over the expressions with one set of output
    variables that a call's expression leaves filled and a unification
    empties (an expression that is a term alone, a negation and an
    ``every``, whose domain is bound by a unification of its own before it,
    leave it as it is). In a later pass, where that unification was placed
    already, an ``every`` whose read variables are exactly what the set
    holds is skipped, as if it bound them itself: so the body above, whose
    call binds k, has k unsafe, while ``...; m[k]`` or ``...; m[k] > 1; x = 1``
    do not. (An expression with the same variables placed before keeps its
    own order: nothing is skipped in the first pass.)"""

    def __init__(self, reads: dict[int, set[str]], arity: ArityFn) -> None:
        self.reads = reads
        self.arity = arity
        self.last: set[str] = set()
        self.read_unsafe: dict[int, tuple[ast.Expr, set[str]]] = {}
        self.stuck: list[ast.Expr] = []

    @classmethod
    def for_body(cls, remaining: list[ast.Expr], ordered: list[ast.Expr], now: set[str], outer: set[str], arity: ArityFn) -> _LastCallOutputs | None:
        """The check for a body with such an ``every`` among ``remaining``, else None."""
        reads: dict[int, set[str]] = {}
        for e in remaining:
            if type(e.statement) is Every and not e.negated:
                read = body_vars(e.statement.body, set()) & outer
                if read:
                    reads[id(e)] = read
        if not reads:
            return None
        calls = cls(reads, arity)
        for e in ordered:  # (placed in the first pass, before the others)
            calls.visit(e, now)
        return calls

    def skips(self, expr: ast.Expr) -> bool:
        """Whether OPA skips ``expr`` in this pass (its domain's unification placed in an earlier one)."""
        if self.reads.get(id(expr)) != self.last:
            return False
        if not any(e is expr for e in self.stuck):
            self.stuck.append(expr)
        return True

    def note(self, expr: ast.Expr, now: set[str]) -> None:
        """What of ``expr``'s reads is unsafe when it is checked (named if it is skipped later)."""
        read = self.reads.get(id(expr))
        if read is not None:
            self.read_unsafe[id(expr)] = (expr, read - now)

    def visit(self, expr: ast.Expr, now: set[str]) -> None:
        """What the set holds after ``expr`` (its last expression in OPA's terms)."""
        stmt = expr.statement
        if expr.negated or type(stmt) is SomeVars:
            return
        if type(stmt) is Every or type(stmt) is Unify or type(stmt) is Assign or type(stmt) is SomeIn:
            self.last = set()  # (OPA makes ``some v in xs`` ``v = xs[_]``)
        elif type(stmt) is Call:
            self.last = _call_outputs(stmt, now, self.arity)

    def named(self, skipped: dict[str, ast.Location]) -> dict[str, ast.Location]:
        """``skipped`` with each variable a skipped ``every`` read that was
        unsafe when it was last checked, at the ``every``."""
        first = dict(skipped)
        for expr in self.stuck:
            loc = expr.location
            for name in self.read_unsafe.get(id(expr), (expr, set()))[1]:
                seen = first.get(name)
                if seen is None or (loc.row, loc.col) < (seen.row, seen.col):
                    first[name] = loc
        return first


def _domain_ready(expr: ast.Expr, now: set[str]) -> bool:
    stmt = expr.statement
    assert type(stmt) is Every
    return term_vars(stmt.domain, set()) <= now | ref_outputs(stmt.domain, now, set(), lambda _: None)


def _call_outputs(call: Call, safe: set[str], arity: ArityFn) -> set[str]:
    """OPA's output variables of a call's expression (its nested calls
    being expressions of their own): every variable in a ref among its
    operands whose head is safe, bound or not, and an output operand's."""
    out: set[str] = set()
    args = call.args
    n = arity(call.op)
    inputs = args[:-1] if n is not None and len(args) == n + 1 else args
    for a in inputs:
        _safe_ref_vars(a, safe, out)
    if len(inputs) < len(args) and term_vars_ready(inputs, safe | out):
        term_vars(args[-1], out)
    return out


def _safe_ref_vars(t: ast.Term, safe: set[str], out: set[str]) -> None:
    if type(t) is Ref:
        head = t.head
        if type(head) is Var and (head.name in ROOTS or head.name in safe):
            for p in t.path:
                term_vars(p, out)
        return
    if type(t) is Array or type(t) is SetTerm:
        for x in t.items:
            _safe_ref_vars(x, safe, out)
    elif type(t) is Object:
        for k, v in t.items:
            _safe_ref_vars(k, safe, out)
            _safe_ref_vars(v, safe, out)


def _opa_size(expr: ast.Expr) -> int:
    """How many expressions ``expr`` is at OPA's safety check (one more per nested call)."""
    n = len(_pieces(expr, 0))
    stmt = expr.statement
    if type(stmt) is Unify and type(stmt.lhs) is Var and type(stmt.rhs) is Call and is_generated(stmt.lhs.name):
        return n - 1  # (a call a rewrite moved out: OPA's is one call with an output argument)
    return n


def _raise_unsafe(remaining: list[ast.Expr], now: set[str], outer: set[str], arity: ArityFn, skipped: dict[str, ast.Location]) -> None:
    # The variables named are OPA's. Its expressions are finer than these:
    # each call nested in one is an expression of its own, at the call
    # (_pieces). It goes over them in source order, again while that places
    # one, and adds each one's outputs to what is safe as it goes, even when
    # that expression cannot run yet (so ``input.a[d] == b; c = [b, d]``
    # names b and c, not d); an expression's variables are dropped from its
    # unsafe ones only when it is visited. Each variable still unsafe (the
    # left side of a ``:=`` too) is named once, at its first place.
    pieces: list[ast.Expr] = []
    for expr in remaining:
        pieces += _pieces(expr, len(pieces))
    safe = set(now)
    pending: dict[int, set[str]] = {}
    for piece in pieces:
        needs, outs = expr_needs_and_outputs(piece, now, outer, arity)
        pending[id(piece)] = (needs | outs) - now - _unified_with_safe_ref(piece, now)
    progress = True
    while progress:
        progress = False
        for piece in pieces:
            unsafe = pending[id(piece)]
            if not unsafe:
                continue
            outs = _outputs_if_inputs_safe(piece, safe, outer, arity)
            unsafe -= safe | outs
            stmt = piece.statement
            if unsafe and outs and type(stmt) is Call and _binds_output_argument(piece, arity):
                # (a call's output is safe once the call can run; what its refs bind, at once)
                outs = ref_outputs(stmt, safe, set(), arity)
            safe |= outs
            progress = progress or not unsafe
    first = dict(skipped)  # (the variables of expressions OPA skipped: _Twins)
    for piece in pieces:
        loc = piece.location
        for name in pending[id(piece)]:
            seen = first.get(name)
            if not is_generated(name) and (seen is None or (loc.row, loc.col) < (seen.row, seen.col)):
                first[name] = loc
    if not first:
        # (Only where OPA's pass would place every expression: name what this order lacks.)
        for expr in remaining:
            needs, _ = expr_needs_and_outputs(expr, now, outer, arity)
            for name in needs - now:
                if not is_generated(name):
                    first.setdefault(name, expr.location)
    if not first:
        raise RegoUnsafeVarError("unsafe expression", remaining[0].location)
    errors = [
        RegoUnsafeVarError(unsafe_var_message(shown_name(name)), loc)
        for name, loc in sorted(first.items(), key=lambda nl: (nl[1].row, nl[1].col, nl[0]))
    ]
    errors[0].errors = errors  # type: ignore[attr-defined]
    raise errors[0]


def _unified_with_safe_ref(piece: ast.Expr, now: set[str]) -> set[str]:
    """The variable ``piece`` unifies with a ref whose head is safe
    (``d := input.xs[r.i]``): OPA's unifier takes it as bound there, whatever
    the ref's other variables, so it is named unsafe only where it is read
    (an expression that cannot be placed does not make it safe for others)."""
    stmt = piece.statement
    if piece.negated or not (type(stmt) is Assign or type(stmt) is Unify):
        return set()
    sides = ((stmt.lhs, stmt.rhs),) if type(stmt) is Assign else ((stmt.lhs, stmt.rhs), (stmt.rhs, stmt.lhs))
    out: set[str] = set()
    for var, other in sides:
        if type(var) is Var and type(other) is Ref and type(other.head) is Var and (other.head.name in ROOTS or other.head.name in now):
            out.add(var.name)
    return out


# The prefix of the variables holding what _pieces moves out of an expression.
_LIFTED = "__local_safety"


def _binds_output_argument(piece: ast.Expr, arity: ArityFn) -> bool:
    """Whether ``piece`` is a call written with an output argument (not one
    moved out of an expression: the result of that is safe at once in OPA)."""
    stmt = piece.statement
    if type(stmt) is not Call or piece.negated:
        return False
    n = arity(stmt.op)
    if n is None or len(stmt.args) != n + 1:
        return False
    out = stmt.args[-1]
    return not (type(out) is Var and out.name.startswith(_LIFTED))


def _outputs_if_inputs_safe(piece: ast.Expr, safe: set[str], outer: set[str], arity: ArityFn) -> set[str]:
    """What ``piece`` binds given ``safe``; nothing for a call with an output
    argument whose inputs are not all safe (OPA drops even what its refs bind)."""
    stmt = piece.statement
    if type(stmt) is Call and not piece.negated:
        n = arity(stmt.op)
        if n is not None and len(stmt.args) == n + 1:
            outs = ref_outputs(stmt, safe, set(), arity)
            # (OPA's inputs leave out the heads of refs, sets and object keys)
            if not vars_past_ref_heads(stmt.args[:-1], set(), sets=False) <= safe | outs:
                return set()
            return expr_needs_and_outputs(piece, safe, outer, arity)[1] | term_vars(stmt.args[-1], set())
    elif (type(stmt) is Assign or type(stmt) is Unify) and not piece.negated:
        # OPA's unification binds a variable to an array or object whose
        # variables, other than the heads of refs and object keys, are safe.
        sides = ((stmt.lhs, stmt.rhs),) if type(stmt) is Assign else ((stmt.lhs, stmt.rhs), (stmt.rhs, stmt.lhs))
        for var, other in sides:
            if type(var) is Var and (type(other) is Array or type(other) is Object):
                if vars_past_ref_heads((other,), set(), sets=True) <= safe:
                    return expr_needs_and_outputs(piece, safe, outer, arity)[1] | {var.name}
    return expr_needs_and_outputs(piece, safe, outer, arity)[1]


def _pieces(expr: ast.Expr, start: int) -> list[ast.Expr]:
    """``expr`` as OPA's expressions at its safety check: each call nested in
    it (outside closures) moved, innermost first, into an expression of its
    own at the call, its result in a new generated variable; an ``every``
    domain bound to one first, at the domain (OPA's RewriteLocalVars)."""
    stmt = expr.statement
    if type(stmt) is Every:
        domain = Var(f"{_LIFTED}{start}__", stmt.domain.location)
        at = stmt.domain.location if stmt.domain.location.row else expr.location
        bind = _pieces(ast.Expr(Unify(domain, stmt.domain, at), location=at), start + 1)
        return [*bind, ast.Expr(Every(stmt.key, stmt.value, domain, stmt.body, stmt.location), False, expr.with_mods, expr.location)]
    lifts_domain = type(stmt) is SomeIn and stmt.key is None  # (`some v in f(x.a)`: f's output is safe at once)
    if expr.negated or not (type(stmt) is Call or type(stmt) is Assign or type(stmt) is Unify or lifts_domain):
        return [expr]
    out: list[ast.Expr] = []

    def lift(term: ast.Term) -> ast.Term:
        if type(term) is Call:
            args = tuple(lift(a) for a in term.args)
            result = Var(f"{_LIFTED}{start + len(out)}__", term.location)
            at = term.location if term.location.row else expr.location
            out.append(ast.Expr(Call(term.op, args + (result,), term.location, term.op_ref), location=at))
            return result
        if type(term) is TemplateString:
            # (OPA's is a call by then, at the template: its unsafe variables are named there)
            result = Var(f"{_LIFTED}{start + len(out)}__", term.location)
            at = term.location if term.location.row else expr.location
            out.append(ast.Expr(Unify(result, term, at), location=at))
            return result
        if type(term) is Ref:
            return Ref(lift(term.head), tuple(lift(p) for p in term.path), term.location)
        if type(term) is Array:
            return Array(tuple(lift(x) for x in term.items), term.location)
        if type(term) is SetTerm:
            return SetTerm(tuple(lift(x) for x in term.items), term.location)
        if type(term) is Object:
            return Object(tuple((lift(k), lift(v)) for k, v in term.items), term.location)
        return term

    main: ast.Statement
    if type(stmt) is SomeIn:
        main = SomeIn(stmt.key, stmt.value, lift(stmt.collection), stmt.location)
    elif type(stmt) is Call:
        main = Call(stmt.op, tuple(lift(a) for a in stmt.args), stmt.location, stmt.op_ref)
    elif type(stmt) is Assign:
        main = Assign(lift(stmt.lhs), lift(stmt.rhs), stmt.location)
    else:
        assert type(stmt) is Unify
        main = Unify(lift(stmt.lhs), lift(stmt.rhs), stmt.location)
    if not out:
        return [expr]
    return [*out, ast.Expr(main, expr.negated, expr.with_mods, expr.location)]
