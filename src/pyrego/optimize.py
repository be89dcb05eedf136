"""Body-level optimisations that keep OPA's results exactly.

:func:`hoist_checks` moves cheap, side-effect-free checks (comparisons and
membership tests over ``input`` and local variables) ahead of loops they do
not depend on, so a failing check prunes before iteration instead of inside
every iteration. Only expressions that can neither raise nor have effects are
moved, and only past expressions that are themselves free of effects, so the
set of results, and any error, is the same as in source order.
"""

from __future__ import annotations

from typing import Callable

from . import ast
from .safety import ROOTS, ArityFn, ref_outputs, stmt_vars

_PURE_CALLS = frozenset({"equal", "neq", "lt", "lte", "gt", "gte", "internal.member_2", "internal.member_3"})


PureDataRef = Callable[[ast.Ref], bool]


def _pure_term(t: ast.Term | None, data_ok: PureDataRef) -> bool:
    if t is None or isinstance(t, ast.Scalar):
        return True
    if isinstance(t, ast.Var):
        return t.name != "data"
    if isinstance(t, ast.Ref):
        head = t.head
        if not isinstance(head, ast.Var):
            return False
        # data refs may evaluate rules (which can fail): only those the
        # compiler knows to be constants or base data count as pure.
        if head.name == "data" and not data_ok(t):
            return False
        return all(_pure_term(p, data_ok) for p in t.path)
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return all(_pure_term(x, data_ok) for x in t.items)
    if isinstance(t, ast.Object):
        return all(_pure_term(k, data_ok) and _pure_term(v, data_ok) for k, v in t.items)
    if isinstance(t, ast.Call):
        return t.op in _PURE_CALLS and all(_pure_term(a, data_ok) for a in t.args)
    return False


def _pure_expr(e: ast.Expr, data_ok: PureDataRef) -> bool:
    if e.negated or e.with_mods:
        return False
    s = e.statement
    if isinstance(s, (ast.Assign, ast.Unify)):
        return _pure_term(s.lhs, data_ok) and _pure_term(s.rhs, data_ok)
    if isinstance(s, ast.SomeIn):
        return _pure_term(s.key, data_ok) and _pure_term(s.value, data_ok) and _pure_term(s.collection, data_ok)
    if isinstance(s, ast.SomeVars):
        return True
    if isinstance(s, ast.Every):
        return False
    return _pure_term(s, data_ok)


def _iterates(e: ast.Expr, bound: set[str], arity: ArityFn) -> bool:
    s = e.statement
    if isinstance(s, ast.SomeIn):
        return True
    terms: list[ast.Term] = []
    if isinstance(s, (ast.Assign, ast.Unify)):
        terms = [s.lhs, s.rhs]
    elif not isinstance(s, (ast.SomeVars, ast.Every)):
        terms = [s]
    out: set[str] = set()
    for t in terms:
        ref_outputs(t, bound, out, arity)
    return bool(out)


def hoist_checks(ordered: tuple[ast.Expr, ...], bound: set[str], arity: ArityFn, data_ok: PureDataRef) -> list[ast.Expr]:
    """Move pure, non-iterating checks ahead of the pure loops they do not depend on."""
    if len(ordered) < 2:
        return list(ordered)
    out: list[ast.Expr] = []
    binds: list[set[str]] = []
    movable: list[bool] = []
    now = set(bound)
    for e in ordered:
        names = {v for v in stmt_vars(e.statement, set()) if v not in ROOTS}
        pure = _pure_expr(e, data_ok)
        # Only variables can be bound by iteration: without any, nothing iterates.
        iterates = bool(names) and _iterates(e, now, arity)
        new = names - now
        now |= names
        if pure and not iterates:
            k = len(out)
            while k > 0 and movable[k - 1] and not (binds[k - 1] & names):
                k -= 1
            out.insert(k, e)
            binds.insert(k, new)
            movable.insert(k, True)
        else:
            out.append(e)
            binds.append(new)
            movable.append(pure)
    return out
