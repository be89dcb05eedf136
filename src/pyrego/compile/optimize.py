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

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Array, Assign, Call, Every, Object, Ref, Scalar, SetTerm, SomeIn, SomeVars, Unify, Var
from pyrego.compile.safety import ArityFn, ref_outputs, stmt_vars

_PURE_CALLS = frozenset({"equal", "neq", "lt", "lte", "gt", "gte", "internal.member_2", "internal.member_3"})


PureDataRef = Callable[[ast.Ref], bool]


def _pure_term(t: ast.Term | None, data_ok: PureDataRef) -> bool:
    # By exact node class (AST nodes are never subclassed), most frequent first.
    if t is None or type(t) is Scalar:
        return True
    if type(t) is Var:
        return t.name != "data"
    if type(t) is Ref:
        head = t.head
        if type(head) is not Var:
            return False
        # data refs may evaluate rules (which can fail): only those the
        # compiler knows to be constants or base data count as pure.
        if head.name == "data" and not data_ok(t):
            return False
        return _all_pure(t.path, data_ok)
    if type(t) is Call:
        return t.op in _PURE_CALLS and _all_pure(t.args, data_ok)
    if type(t) is Array or type(t) is SetTerm:
        return _all_pure(t.items, data_ok)
    if type(t) is Object:
        for k, v in t.items:
            if not (_pure_term(k, data_ok) and _pure_term(v, data_ok)):
                return False
        return True
    return False


def _all_pure(terms: tuple[ast.Term, ...], data_ok: PureDataRef) -> bool:
    for t in terms:
        if type(t) is not Scalar and not _pure_term(t, data_ok):
            return False
    return True


def _pure_expr(e: ast.Expr, data_ok: PureDataRef) -> bool:
    if e.negated or e.with_mods:
        return False
    s = e.statement
    if type(s) is Assign or type(s) is Unify:
        return _pure_term(s.lhs, data_ok) and _pure_term(s.rhs, data_ok)
    if type(s) is SomeIn:
        return _pure_term(s.key, data_ok) and _pure_term(s.value, data_ok) and _pure_term(s.collection, data_ok)
    if type(s) is SomeVars:
        return True
    if type(s) is Every:
        return False
    return _pure_term(s, data_ok)  # type: ignore[arg-type]


def _iterates(e: ast.Expr, bound: set[str], arity: ArityFn) -> bool:
    s = e.statement
    if type(s) is SomeIn:
        return True
    out: set[str] = set()
    if type(s) is Assign or type(s) is Unify:
        ref_outputs(s.lhs, bound, out, arity)
        ref_outputs(s.rhs, bound, out, arity)
    elif type(s) is not SomeVars and type(s) is not Every:
        ref_outputs(s, bound, out, arity)  # type: ignore[arg-type]
    return bool(out)


def hoist_checks(
    ordered: tuple[ast.Expr, ...], bound: set[str], arity: ArityFn, data_ok: PureDataRef, own_vars: dict[int, set[str]] | None = None
) -> list[ast.Expr]:
    """Move pure, non-iterating checks ahead of the pure loops they do not depend on,
    keeping the checks in their order.

    ``own_vars``: each expression's variables (``stmt_vars``) by ``id``, where
    the caller has them already (read, never changed)."""
    if len(ordered) < 2:
        return list(ordered)
    out: list[ast.Expr] = []
    binds: list[set[str]] = []
    movable: list[bool] = []
    now = set(bound)
    for e in ordered:
        names = own_vars[id(e)] if own_vars is not None else stmt_vars(e.statement, set())
        pure = _pure_expr(e, data_ok)
        # Only variables can be bound by iteration: without any, nothing iterates.
        hoistable = pure and not (names and _iterates(e, now, arity))
        new = names - now
        now |= names
        if hoistable:
            k = len(out)
            while k > 0 and movable[k - 1] and not (binds[k - 1] & names):
                k -= 1
            out.insert(k, e)
            binds.insert(k, new)
            # Checks keep their source order among themselves: a later check
            # moves ahead of loops, never ahead of an earlier check (the
            # policy's author put the check most likely to fail first).
            movable.insert(k, False)
        else:
            out.append(e)
            binds.append(new)
            movable.append(pure)
    return out
