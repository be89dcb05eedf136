"""Type checking of lowered bodies (OPA's ``CheckBody`` and its helpers).

Each expression of a body is checked in order: the comprehensions inside it
(each body on its own), the refs it reads (a ref into a value of a known type
must select something that type has), then the expression itself: a
unification's two sides must have types that can be equal (``match error``),
a call's operands must fit the function's declared argument types
(``invalid argument(s)``). Variables take their types from where they are
first bound; a call's output variable takes the function's result type.
Errors are collected, not raised: OPA reports up to ten at once.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from pyrego.ast.nodes import Scalar, Var, call_name_text
from pyrego.compile.base import key_raw
from pyrego.errors import Location
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import TypeEnv
from pyrego.typecheck.ir import CALL, EVERY, TERM, IArray, ICompr, IExpr, IObject, IRef, ISet, Term, ref_text, term_text
from pyrego.typecheck.refs import RefChecker
from pyrego.typecheck.replaced import type_targets
from pyrego.typecheck.terms import TypeErr, unify1
from pyrego.typecheck.unify import unifies

#: What types as any, for an expression's withs, the rules reading a rule they
#: replace, returning what puts them back (None: nothing to put back).
WithAny = Callable[[tuple[Any, ...]], Optional[Callable[[], None]]]


def arg_error(location: Location, name: str, what: str, have: list[T.MaybeType], want: T.FunctionType | tuple[tuple[T.MaybeType, ...], T.MaybeType]) -> TypeErr:
    """``name: what`` with ``have:``/``want:`` lines (OPA's ArgErrDetail)."""
    if isinstance(want, T.FunctionType):
        want_text = T.func_args_text(want.args, want.variadic)
    else:
        want_text = T.func_args_text(want[0], want[1])
    details = ["have: " + T.func_args_text(have), "want: " + want_text]
    return TypeErr(location, f"{name}: {what}", details, any(T.is_nil(h) for h in have))


class Checker:
    """Checks bodies against a type environment, collecting errors."""

    def __init__(self, functions_any: Callable[[str], bool] | None = None, with_any: WithAny | None = None) -> None:
        self.errors: list[TypeErr] = []
        # For an expression with withs: types as any the rules that read a
        # rule they replace, returning what puts them back (see .replaced).
        self.with_any = with_any

    def copy(self) -> Checker:
        return Checker(with_any=self.with_any)

    # -- bodies ------------------------------------------------------------------

    def check_body(self, env: TypeEnv, body: list[IExpr]) -> tuple[TypeEnv, list[TypeErr]]:
        """Check ``body`` in a new environment wrapping ``env``; returns it and the errors."""
        errors: list[TypeErr] = []
        env = env.wrap()
        with_any = self.with_any
        restore: Callable[[], None] | None = None
        typed: Callable[[], None] | None = None
        try:
            for expr in body:
                if expr.withs:
                    if with_any is not None:
                        restore = with_any(expr.withs)
                    typed = type_targets(env, expr.withs)
                closure_errs = self.check_closures(env, expr) if expr.closures else []
                errors.extend(closure_errs)
                rc = RefChecker(env)
                rc.check_expr(expr)
                errors.extend(rc.errors)
                err = self.check_expr(env, expr)
                if err is not None:
                    # A more specific error in a ref or closure of this expression
                    # explains an unknown type here: OPA keeps only that one.
                    if not ((closure_errs or rc.errors) and err.nil_cause):
                        errors.append(err)
                if typed is not None:
                    typed()
                    typed = None
                if restore is not None:
                    restore()
                    restore = None
        finally:
            if typed is not None:
                typed()
            if restore is not None:
                restore()
        self.errors.extend(errors)
        return env, errors

    def check_closures(self, env: TypeEnv, expr: IExpr) -> list[TypeErr]:
        """Errors of the last comprehension in ``expr`` that has any (OPA keeps only those)."""
        result: list[TypeErr] = []

        def visit(t: Any) -> None:
            nonlocal result
            if t is None:
                return
            tt = type(t)
            if tt is ICompr:
                errs, _ = env.check_comprehension(t)
                if errs:
                    result = errs
                    return
                for x in _compr_terms(t):
                    visit(x)
                for e in t.body:
                    visit_expr(e)
            elif tt is IRef:
                for x in t.terms():
                    visit(x)
            elif tt is IArray or tt is ISet:
                for x in t.items:
                    visit(x)
            elif tt is IObject:
                for k, v in t.items:
                    visit(k)
                    visit(v)

        def visit_expr(e: IExpr) -> None:
            if e.kind == CALL:
                for x in e.operands:
                    visit(x)
            elif e.kind == TERM:
                visit(e.term)
            else:
                visit(e.every_key)
                visit(e.every_value)
                visit(e.term)
                for b in e.body:
                    visit_expr(b)
            for w in e.withs:
                visit(w.target)
                visit(w.value)

        visit_expr(expr)
        return result

    # -- expressions ---------------------------------------------------------------

    def check_expr(self, env: TypeEnv, expr: IExpr) -> TypeErr | None:
        err = self.check_withs(env, expr)
        if err is not None:
            return err
        if expr.kind != CALL:
            return None
        if expr.op == "eq":
            return check_eq(env, expr)
        return check_call(env, expr)

    def check_withs(self, env: TypeEnv, expr: IExpr) -> TypeErr | None:
        for w in expr.withs:
            target = env.get_by_value(w.target)
            value = env.get_by_value(w.value)
            if isinstance(target, T.FunctionType) and isinstance(value, T.FunctionType):
                if not unifies(target, value):
                    name = term_text(w.target, env.names)
                    return arg_error(w.location, name, "arity mismatch", list(value.arg_types()), (target.args, target.variadic))
        return None


def _compr_terms(c: ICompr) -> list[Term]:
    return [c.term] if c.key is None else [c.key, c.term]


def check_call(env: TypeEnv, expr: IExpr) -> TypeErr | None:
    """A call's operands against the function's declared types."""
    name = expr.op
    path = expr.op_path
    tpe: T.MaybeType
    if path is not None:  # a function rule: its path, which may have keys with dots
        ref: tuple[Term, ...] = (Var("data"),) + tuple([Scalar(key_raw(p)) for p in path])
        name = ref_text(ref)
        tpe = env.get_by_ref(ref)
    elif not name.startswith("data."):
        tpe = env.root.builtin(name)  # builtins: no rule or variable has their names
    else:
        tpe = env.get_by_ref(_op_ref(name))
    if tpe is None:
        return TypeErr(expr.location, f"undefined function {call_name_text(name)}")
    if isinstance(tpe, T.AnyType) and not tpe.of:
        # (a function whose own check failed; a document of any type, which
        # OPA lets a call of no arguments read: not a union of known types)
        return None
    if not isinstance(tpe, T.FunctionType):
        return TypeErr(expr.location, f"undefined function {name}")
    fargs = list(tpe.arg_types())
    named: list[T.MaybeType] = list(tpe.args)
    if tpe.result is not None:
        fargs.append(tpe.result_type())
        named.append(tpe.result)
    args = expr.operands
    variadic = T.unwrap(tpe.variadic)
    if len(args) > len(fargs) and variadic is None:
        return arg_error(expr.location, name, "too many arguments", [env.get_by_value(a) for a in args], (tuple(named), tpe.variadic))
    if len(args) < len(tpe.args):
        return arg_error(expr.location, name, "too few arguments", [env.get_by_value(a) for a in args], (tuple(named), tpe.variadic))
    # OPA (v1.20.2) reports the operands' types as they were before the check.
    before: list[T.MaybeType] | None = None
    for i, a in enumerate(args):
        want = fargs[i] if i < len(fargs) else variadic
        if before is None and type(a) in (Var, IArray, IObject, ISet):
            before = [env.get_by_value(x) for x in args]
        if not unify1(env, a, want, False):
            have = before if before is not None else [env.get_by_value(x) for x in args]
            return arg_error(expr.location, name, "invalid argument(s)", have, (tuple(named), tpe.variadic))
    return None


_OP_REFS: dict[str, tuple[Term, ...]] = {}


def _op_ref(name: str) -> tuple[Term, ...]:
    """A function's name as a ref (``data.p.f`` -> data, "p", "f")."""
    ref = _OP_REFS.get(name)
    if ref is None:
        head, *rest = name.split(".")
        ref = _OP_REFS[name] = (Var(head),) + tuple(Scalar(p) for p in rest)
    return ref


_EQ_DECL = ((T.ANY, T.ANY), None)


def check_eq(env: TypeEnv, expr: IExpr) -> TypeErr | None:
    """``a = b``: the two sides must have types that can be equal."""
    if len(expr.operands) != 2:
        have = [env.get_by_value(a) for a in expr.operands]
        what = "too few arguments" if len(expr.operands) < 2 else "too many arguments"
        return arg_error(expr.location, "eq", what, have, _EQ_DECL)
    a, b = expr.operands
    type_a, type_b = env.get_by_value(a), env.get_by_value(b)
    if not unify2(env, a, type_a, b, type_b):
        details = ["left  : " + T.sprint(type_a), "right : " + T.sprint(type_b)]
        return TypeErr(expr.location, "match error", details, T.is_nil(type_a) or T.is_nil(type_b))
    return None


# ---------------------------------------------------------------- unification


def unify2(env: TypeEnv, a: Any, type_a: T.MaybeType, b: Any, type_b: T.MaybeType) -> bool:
    nil_a, nil_b = T.is_nil(type_a), T.is_nil(type_b)
    if nil_a and not nil_b:
        return unify1(env, a, type_b, False)
    if nil_b and not nil_a:
        return unify1(env, b, type_a, False)
    if not nil_a and not nil_b:
        return unifies(type_a, type_b)
    ta, tb = type(a), type(b)
    if ta is IArray:
        return _unify2_array(env, a, b)
    if ta is IObject:
        return _unify2_object(env, a, b)
    if ta is Var:
        if tb is Var:
            return unify1(env, a, T.ANY, False) and unify1(env, b, env.get_by_value(a), False)
        if tb is IArray:
            return _unify2_array(env, b, a)
        if tb is IObject:
            return _unify2_object(env, b, a)
        # A set, ref or comprehension whose type is known in part: OPA
        # (v1.20.2) binds the variable to it, unknown parts and all
        # (``x := {[arg]}`` in a function); not to no type at all.
        return type_b is not None and unify1(env, a, type_b, False)
    if tb is Var:
        return type_a is not None and unify1(env, b, type_a, False)
    return False


def _unify2_array(env: TypeEnv, a: IArray, b: Any) -> bool:
    if type(b) is IArray:
        if len(a.items) == len(b.items):
            for x, y in zip(a.items, b.items):
                if not unify2(env, x, env.get_by_value(x), y, env.get_by_value(y)):
                    return False
            return True
        return False
    if type(b) is Var:
        return unify1(env, a, T.ANY, False) and unify1(env, b, env.get_by_value(a), False)
    return False


def _unify2_object(env: TypeEnv, a: IObject, b: Any) -> bool:
    if type(b) is IObject:
        common = _intersect(a, b)
        if len(a.items) == len(b.items) == len(common):
            for x, y in common:
                if not unify2(env, x, env.get_by_value(x), y, env.get_by_value(y)):
                    return False
            return True
        return False
    if type(b) is Var:
        return unify1(env, a, T.ANY, False) and unify1(env, b, env.get_by_value(a), False)
    return False


def _intersect(a: IObject, b: IObject) -> list[tuple[Term, Term]]:
    b_values = {term_text(k): v for k, v in b.items}
    return [(v, b_values[term_text(k)]) for k, v in a.items if term_text(k) in b_values]


__all__ = ["Checker", "TypeErr", "unify1", "unify2", "check_call", "check_eq", "arg_error", "EVERY"]
