"""Variable safety and body reordering.

Rego bodies are declarative: ``x > 1; x := input.a`` is valid, and OPA runs
the expressions in an order in which every variable is bound before it is
read. This module computes, for each expression, which variables it needs
bound and which it binds, then picks the first ready expression in source
order, again and again (OPA's strategy). A body that cannot be ordered has
unsafe variables: ``rego_unsafe_var_error``.

Input ASTs are the compiler's *resolved* bodies: refs to rules and imports
are rooted at ``data``/``input``, so every remaining :class:`~pyrego.ast.Var`
is a local variable (or a root).
"""

from __future__ import annotations

from typing import Callable, Iterable

from . import ast
from .errors import RegoUnsafeVarError

ROOTS = frozenset({"data", "input"})

# Arity lookup for calls: the compiler passes a function that returns the
# declared number of arguments of a builtin or user function (None: unknown).
ArityFn = Callable[[str], "int | None"]


def is_wildcard(name: str) -> bool:
    return name.startswith("$")


# ---------------------------------------------------------------- variable collection


def term_vars(term: ast.Term | None, out: set[str], *, closures: bool = False) -> set[str]:
    """All local variables in ``term``; closure (comprehension) bodies only when asked."""
    if term is None:
        return out
    if isinstance(term, ast.Var):
        name = term.name
        if name not in ROOTS:
            out.add(name)
    elif isinstance(term, ast.Ref):
        term_vars(term.head, out, closures=closures)
        for p in term.path:
            term_vars(p, out, closures=closures)
    elif isinstance(term, (ast.Array, ast.SetTerm)):
        for x in term.items:
            term_vars(x, out, closures=closures)
    elif isinstance(term, ast.Object):
        for k, v in term.items:
            term_vars(k, out, closures=closures)
            term_vars(v, out, closures=closures)
    elif isinstance(term, ast.Call):
        for a in term.args:
            term_vars(a, out, closures=closures)
    elif isinstance(term, ast.TemplateString):
        for part in term.parts:
            if not isinstance(part, str):
                term_vars(part, out, closures=closures)
    elif closures and (isinstance(term, (ast.ArrayCompr, ast.SetCompr))):
        term_vars(term.term, out, closures=True)
        body_vars(term.body, out)
    elif closures and isinstance(term, ast.ObjectCompr):
        term_vars(term.key, out, closures=True)
        term_vars(term.value, out, closures=True)
        body_vars(term.body, out)
    return out


def body_vars(body: ast.Body, out: set[str]) -> set[str]:
    """Every variable in a body, closures included."""
    for e in body:
        stmt_vars(e.statement, out, closures=True)
        for w in e.with_mods:
            term_vars(w.value, out, closures=True)
    return out


def stmt_vars(stmt: ast.Statement, out: set[str], *, closures: bool = False) -> set[str]:
    if isinstance(stmt, (ast.Assign, ast.Unify)):
        term_vars(stmt.lhs, out, closures=closures)
        term_vars(stmt.rhs, out, closures=closures)
    elif isinstance(stmt, ast.SomeVars):
        pass
    elif isinstance(stmt, ast.SomeIn):
        term_vars(stmt.key, out, closures=closures)
        term_vars(stmt.value, out, closures=closures)
        term_vars(stmt.collection, out, closures=closures)
    elif isinstance(stmt, ast.Every):
        term_vars(stmt.domain, out, closures=closures)
        if closures:
            body_vars(stmt.body, out)
            if stmt.key is not None:
                out.add(stmt.key.name)
            out.add(stmt.value.name)
    else:
        term_vars(stmt, out, closures=closures)
    return out


def closures_in(term: ast.Term | None, out: list[ast.Term]) -> list[ast.Term]:
    """Comprehensions directly inside ``term`` (not nested in other closures)."""
    if term is None:
        return out
    if isinstance(term, (ast.ArrayCompr, ast.SetCompr)) or isinstance(term, ast.ObjectCompr):
        out.append(term)
    elif isinstance(term, ast.Ref):
        closures_in(term.head, out)
        for p in term.path:
            closures_in(p, out)
    elif isinstance(term, (ast.Array, ast.SetTerm)):
        for x in term.items:
            closures_in(x, out)
    elif isinstance(term, ast.Object):
        for k, v in term.items:
            closures_in(k, out)
            closures_in(v, out)
    elif isinstance(term, ast.Call):
        for a in term.args:
            closures_in(a, out)
    elif isinstance(term, ast.TemplateString):
        for part in term.parts:
            if not isinstance(part, str):
                closures_in(part, out)
    return out


def stmt_terms(stmt: ast.Statement) -> list[ast.Term]:
    if isinstance(stmt, (ast.Assign, ast.Unify)):
        return [stmt.lhs, stmt.rhs]
    if isinstance(stmt, ast.SomeVars):
        return []
    if isinstance(stmt, ast.SomeIn):
        return [x for x in (stmt.key, stmt.value, stmt.collection) if x is not None]
    if isinstance(stmt, ast.Every):
        return [stmt.domain]
    return [stmt]


# ---------------------------------------------------------------- outputs


def ref_outputs(term: ast.Term | None, bound: set[str], out: set[str], arity: ArityFn) -> set[str]:
    """Variables bound by iterating refs (``input.a[i]``) and by call output
    arguments (``count(x, n)``) inside ``term``, outside closures."""
    if term is None:
        return out
    if isinstance(term, ast.Ref):
        ref_outputs(term.head, bound, out, arity)
        head = term.head
        head_ok = not isinstance(head, ast.Var) or head.name in ROOTS or head.name in bound or head.name in out
        for p in term.path:
            if isinstance(p, ast.Var):
                if head_ok and p.name not in bound:
                    out.add(p.name)
            elif isinstance(p, (ast.Array, ast.Object)):
                # A pattern in a ref position is unified with each key.
                if head_ok:
                    out |= term_vars(p, set()) - bound
            else:
                ref_outputs(p, bound, out, arity)
    elif isinstance(term, (ast.Array, ast.SetTerm)):
        for x in term.items:
            ref_outputs(x, bound, out, arity)
    elif isinstance(term, ast.Object):
        for k, v in term.items:
            ref_outputs(k, bound, out, arity)
            ref_outputs(v, bound, out, arity)
    elif isinstance(term, ast.Call):
        args = term.args
        n = arity(term.op)
        for a in args:
            ref_outputs(a, bound, out, arity)
        if n is not None and len(args) == n + 1:
            last = args[-1]
            # The extra argument receives the result: any pattern in it is bound.
            inner = set(bound) | out
            if term_vars_ready(args[:-1], inner):
                out |= term_vars(last, set()) - bound
    elif isinstance(term, ast.TemplateString):
        for part in term.parts:
            if not isinstance(part, str):
                ref_outputs(part, bound, out, arity)
    return out


def term_vars_ready(terms: Iterable[ast.Term], bound: set[str]) -> bool:
    need: set[str] = set()
    for x in terms:
        term_vars(x, need)
    return need <= bound


def _is_pattern(term: ast.Term) -> bool:
    return isinstance(term, (ast.Var, ast.Array, ast.Object))


def unify_outputs(a: ast.Term, b: ast.Term, bound: set[str], arity: ArityFn) -> set[str]:
    """Variables that ``a = b`` binds, given ``bound``."""
    out: set[str] = set()
    ref_outputs(a, bound, out, arity)
    ref_outputs(b, bound, out, arity)
    changed = True
    while changed:
        changed = False
        known = bound | out
        new = _unify_step(a, b, known)
        if not new <= known:
            out |= new
            changed = True
    return out


def _unify_step(a: ast.Term, b: ast.Term, known: set[str]) -> set[str]:
    if isinstance(a, ast.Var) and a.name not in known and a.name not in ROOTS:
        return {a.name} if term_vars(b, set()) <= known else set()
    if isinstance(b, ast.Var) and b.name not in known and b.name not in ROOTS:
        return {b.name} if term_vars(a, set()) <= known else set()
    if isinstance(a, ast.Array) and isinstance(b, ast.Array):
        if len(a.items) != len(b.items):
            return set()
        out: set[str] = set()
        for x, y in zip(a.items, b.items):
            out |= _unify_step(x, y, known | out)
        return out
    if isinstance(a, ast.Object) and isinstance(b, ast.Object):
        out = set()
        bkeys = dict(b.items)
        for k, v in a.items:
            if k in bkeys:
                out |= _unify_step(v, bkeys[k], known | out)
        return out
    composite = (ast.Array, ast.Object)
    if isinstance(a, composite) and not isinstance(b, composite):
        return _pattern_vars(a, known) if term_vars(b, set()) <= known else set()
    if isinstance(b, composite) and not isinstance(a, composite):
        return _pattern_vars(b, known) if term_vars(a, set()) <= known else set()
    return set()


def _pattern_vars(pattern: ast.Term, known: set[str]) -> set[str]:
    """Unbound vars in a destructuring pattern (object keys must be ground)."""
    if isinstance(pattern, ast.Var):
        return set() if pattern.name in known or pattern.name in ROOTS else {pattern.name}
    if isinstance(pattern, ast.Array):
        out: set[str] = set()
        for x in pattern.items:
            out |= _pattern_vars(x, known)
        return out
    if isinstance(pattern, ast.Object):
        out = set()
        for k, v in pattern.items:
            if term_vars(k, set()) <= known:
                out |= _pattern_vars(v, known)
        return out
    return set()


def expr_needs_and_outputs(expr: ast.Expr, bound: set[str], outer: set[str], arity: ArityFn) -> tuple[set[str], set[str]]:
    """(vars that must be bound before ``expr`` runs, vars it binds)."""
    stmt = expr.statement
    needs: set[str] = set()
    outs: set[str] = set()
    for w in expr.with_mods:
        term_vars(w.value, needs)
    if expr.negated:
        # Wildcards inside `not` are local to it; named vars must be bound.
        needs |= {v for v in stmt_vars(stmt, set()) if not is_wildcard(v)}
    elif isinstance(expr, ast.SomeVars):
        pass
    elif isinstance(expr, ast.Every):
        term_vars(stmt.domain, needs)
        outs = ref_outputs(stmt.domain, bound, set(), arity)
        needs |= _every_captures(stmt, outer)
    else:
        stmt_vars(stmt, needs)
        outs = _stmt_outputs(stmt, bound, arity)
    # Closures need the outer variables they mention.
    for term in stmt_terms(stmt):
        for c in closures_in(term, []):
            needs |= closure_captures(c, outer)
    needs -= outs
    return needs, outs


def _stmt_outputs(stmt: ast.Statement, bound: set[str], arity: ArityFn) -> set[str]:
    if isinstance(stmt, (ast.Assign, ast.Unify)):
        return unify_outputs(stmt.lhs, stmt.rhs, bound, arity)
    if isinstance(stmt, ast.SomeIn):
        out = ref_outputs(stmt.collection, bound, set(), arity)
        if term_vars(stmt.collection, set()) <= bound | out:
            out |= _pattern_vars(stmt.value, bound)
            if stmt.key is not None:
                out |= _pattern_vars(stmt.key, bound)
        return out
    if isinstance(stmt, (ast.SomeVars, ast.Every)):
        return set()
    return ref_outputs(stmt, bound, set(), arity)


def closure_captures(closure: ast.Term, outer: set[str]) -> set[str]:
    """Outer variables a comprehension reads (they must be bound first)."""
    inner: set[str] = set()
    term_vars(closure, inner, closures=True)
    return inner & outer


def _every_captures(stmt: ast.Every, outer: set[str]) -> set[str]:
    inner: set[str] = set()
    body_vars(stmt.body, inner)
    local = {stmt.value.name} | ({stmt.key.name} if stmt.key is not None else set())
    return (inner - local) & outer


# ---------------------------------------------------------------- ordering


def reorder_body(
    body: ast.Body,
    bound: set[str],
    outer: set[str],
    arity: ArityFn,
    *,
    required: set[str] | None = None,
    location: ast.Location | None = None,
) -> tuple[ast.Body, set[str]]:
    """Order ``body`` so each expression's inputs are bound first.

    ``bound`` are the variables bound on entry (function arguments, captured
    outer variables); ``outer`` every variable visible from enclosing scopes
    (used to tell captured variables from local ones in closures);
    ``required`` variables that must be bound at the end (rule head vars).
    Returns the new body and the set of variables bound at its end.
    """
    remaining = list(body)
    ordered: list[ast.Expr] = []
    now = set(bound)
    # An expression's needs/outputs depend only on which of its own variables
    # are bound: remember them per expression until that changes.
    own: dict[int, set[str]] = {}
    memo: dict[int, tuple[frozenset[str], tuple[set[str], set[str]]]] = {}
    for expr in remaining:
        names = body_vars((expr,), set())
        own[id(expr)] = names
    while remaining:
        for idx, expr in enumerate(remaining):
            names = own[id(expr)]
            if not names:
                # No variables at all: nothing needed, nothing bound.
                ordered.append(expr)
                del remaining[idx]
                break
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
                del remaining[idx]
                break
        else:
            _raise_unsafe(remaining, now, outer, arity)
    if required:
        missing = sorted(v for v in required - now if not is_wildcard(v))
        if missing:
            raise RegoUnsafeVarError(f"var {missing[0].split('#')[0]} is unsafe", location)
    return tuple(ordered), now


def _raise_unsafe(remaining: list[ast.Expr], now: set[str], outer: set[str], arity: ArityFn) -> None:
    # Report the first expression's first unbound variable, as OPA does.
    for expr in remaining:
        needs, _ = expr_needs_and_outputs(expr, now, outer, arity)
        missing = sorted(needs - now)
        if missing:
            name = missing[0]
            shown = "_" if is_wildcard(name) else name.split("#")[0]
            raise RegoUnsafeVarError(f"var {shown} is unsafe", expr.location)
    raise RegoUnsafeVarError("unsafe expression", remaining[0].location)
