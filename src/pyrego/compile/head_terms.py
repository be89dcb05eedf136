"""Rule head terms that OPA evaluates in the rule's body.

OPA's compiler moves every part of a head's ref that is neither a variable
nor a scalar (RewriteRuleHeadRefs), then every head key and value holding a
ref, a call or a comprehension (RewriteExprTerms, RewriteRefsInHead), into
the body as ``__localN__ = term``, and the head reads ``__localN__``. The
body is then ordered for safety with that expression in it, so a ref can
bind the variables it reads where the body does not: ``r contains m[k] if
k != "a"`` iterates ``m`` to bind ``k``, then filters.

pyrego evaluates a head's terms after its body, which gives the same answer
whenever the body binds every variable the term reads. :func:`head_terms_in_body`
makes OPA's move for the other terms only, so the usual heads
(``r[x.name] := x.val if some x in xs``) keep their code.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.body_order import reorder_body
from pyrego.compile.safety import ArityFn, expr_needs_and_outputs, stmt_vars, term_vars
from pyrego.errors import RegoError

__all__ = ["head_terms_in_body", "needs_eval"]

_EVALUATED = frozenset({ast.Ref, ast.Call, ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr, ast.TemplateString})


def needs_eval(t: ast.Term) -> bool:
    """Whether a term holds a ref, a call, a closure or a template string (OPA moves those out of heads)."""
    return _holds(t, _EVALUATED)


def _holds(t: ast.Term, kinds: frozenset[type]) -> bool:
    stack: list[Any] = [t]
    while stack:
        x = stack.pop()
        kind = type(x)  # (AST classes are never subclassed)
        if kind is ast.Scalar or kind is ast.Var:
            continue
        if kind in kinds:
            return True
        if kind is ast.Array or kind is ast.SetTerm:
            stack.extend(x.items)
        elif kind is ast.Object:
            for k, v in x.items:
                stack.extend((k, v))
        elif kind is ast.Ref:
            stack.append(x.head)
            stack.extend(x.path)
        elif kind is ast.Call:
            stack.extend(x.args)
    return False


_TEMPLATE = frozenset({ast.TemplateString})


def head_terms_in_body(rule: ast.Rule, arity: ArityFn, args: tuple[ast.Term, ...] | None = None) -> ast.Rule:
    """``rule`` (a resolved rule, each ``else`` branch alike) with each head
    term OPA evaluates in the body, and that reads a variable the body does
    not bind, evaluated at the end of its body (where the body's ordering
    for safety moves it up as far as it must): the head reads a generated
    variable instead. ``args``: the function's arguments, for an ``else``
    branch (whose head does not repeat them). Rules with nothing to move
    come back as they are."""
    if args is None:
        args = rule.head.args
    else_ = head_terms_in_body(rule.else_, arity, args) if rule.else_ is not None else None
    head = rule.head
    slots = (*head.ref.path, head.key, head.value)
    wanted: list[set[str] | None] = [_wanted(t) for t in slots]
    if any(w is not None for w in wanted):
        bound = _bound_by_body(rule, args, set().union(*[w for w in wanted if w is not None]), arity)
        wanted = [w if w is not None and not w <= bound else None for w in wanted]
    if all(w is None for w in wanted):
        if else_ is rule.else_:
            return rule
        return ast.Rule(head, rule.body, rule.default, else_, rule.location, rule.module_file)
    extra: list[ast.Expr] = []
    new: list[ast.Term | None] = []
    for t, w in zip(slots, wanted):
        if w is None or t is None:
            new.append(t)
        elif type(t) is ast.Ref or type(t) is ast.Call:
            new.append(_moved(t, extra))
        else:
            rest = _calls_moved(t, extra)
            new.append(_moved(rest, extra) if needs_eval(rest) else rest)
    *path, key, value = new
    ref = ast.Ref(head.ref.head, tuple(path), head.ref.location) if path != list(head.ref.path) else head.ref  # type: ignore[arg-type]
    new_head = ast.RuleHead(ref, value, key, head.args, head.assign, head.location)
    return ast.Rule(new_head, rule.body + tuple(extra), rule.default, else_, rule.location, rule.module_file)


def _moved(t: ast.Term, extra: list[ast.Expr]) -> ast.Var:
    """A new variable that ``t`` is unified with by an expression added to ``extra``."""
    loc = t.location
    var = ast.Var(f"__local{len(extra)}__#h@{loc.file}:{loc.row}:{loc.col}", loc)
    extra.append(ast.Expr(ast.Unify(var, t, loc), False, (), loc))
    return var


def _calls_moved(t: ast.Term, extra: list[ast.Expr]) -> ast.Term:
    """``t`` with each call inside its arrays, sets and objects moved out
    first, in order (OPA's RewriteExprTerms); what is left is moved whole
    if it still holds a ref (RewriteRefsInHead), as one expression, as in
    OPA (which a body repeating an expression can tell): the refs in it
    bind their variables first where it is evaluated
    (:func:`pyrego.compile.rewrite.bind_iterating_operands`)."""
    if isinstance(t, ast.Call):
        return _moved(t, extra)
    if isinstance(t, ast.Array):
        return ast.Array(tuple([_calls_moved(x, extra) for x in t.items]), t.location)
    if isinstance(t, ast.SetTerm):
        return ast.SetTerm(tuple([_calls_moved(x, extra) for x in t.items]), t.location)
    if isinstance(t, ast.Object):
        return ast.Object(tuple([(_calls_moved(k, extra), _calls_moved(v, extra)) for k, v in t.items]), t.location)
    return t


def _wanted(t: ast.Term | None) -> set[str] | None:
    """The variables a head term OPA would move reads (outside closures,
    whose variables the body must bind), or None if none or not moved."""
    if t is None or type(t) is ast.Scalar or type(t) is ast.Var:
        return None
    # A template string's variables must be declared before it (OPA's
    # "var x is undeclared"), so it never binds them: left unsafe here.
    if type(t) is ast.Ref:
        if any(type(p) is not ast.Scalar and type(p) is not ast.Var and _holds(p, _TEMPLATE) for p in t.path):
            return None
    elif not needs_eval(t) or _holds(t, _TEMPLATE):
        return None
    found = term_vars(t, set())
    return found or None


def _bound_by_body(rule: ast.Rule, args: tuple[ast.Term, ...] | None, wanted: set[str], arity: ArityFn) -> set[str]:
    """The variables of ``wanted`` that the arguments and body bind (as its
    safety ordering finds them); none when the body cannot be ordered alone."""
    bound: set[str] = set()
    for a in args or ():
        term_vars(a, bound)
    if wanted <= bound:
        return wanted
    mentioned = set(bound)
    for e in rule.body:
        stmt_vars(e.statement, mentioned)
        for w in e.with_mods:
            term_vars(w.value, mentioned)
    if not (wanted - bound) & mentioned:
        return bound  # (variables the body never reads nor binds: no need to order it)
    # Most such bodies bind the variables in the order written (``some x in
    # xs`` first): no need to order them whole.
    now = set(bound)
    for e in rule.body:
        needs, outs = expr_needs_and_outputs(e, now, mentioned, arity)
        if not needs <= now:
            break
        now |= outs
        if wanted <= now:
            return wanted
    try:
        _, now = reorder_body(rule.body, set(bound), mentioned, arity, bind_operands=False)
    except RegoError:
        return bound
    return now & wanted
