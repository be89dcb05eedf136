"""Calls with the wrong number of arguments, in OPA's words.

OPA checks arities before safety and types (``CheckUndefinedFuncs``), after
each call nested in an operand has become an expression with an output
variable: a call written as an expression may pass one argument more than
the function takes (the output, ``f(1, x)``), a nested call may not
(``y := f(1, 2)`` with a one-argument ``f`` is an error). The messages::

    count: arity mismatch
    \thave: (number, number, ???)
    \twant: (collection: any<string, array[any], object[any: any], set[any]>)

for a builtin (every operand's type as OPA knows it at that stage: literal
types, ``any`` for ``input``/``data`` refs, ``???`` for variables and
outputs), and ``function data.p.f has arity 1, got 2 arguments`` for a rule.
In a query, the rules have been type-checked by then: a rule's call is
reported as a builtin's, with the argument types OPA worked out for it
(``data.p.f: arity mismatch ... want: (number)``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import key_raw
from pyrego.compile.safety import stmt_vars
from pyrego.errors import RegoCompileError, RegoTypeError
from pyrego.typecheck import static_types as T
from pyrego.typecheck.signatures import builtin_type

if TYPE_CHECKING:
    from pyrego.compile.base import CompiledTree


def static_type(t: Any, tree: CompiledTree | None = None) -> T.MaybeType:
    """A term's type before any variable has one (OPA's environment at the arity check)."""
    tt = type(t)
    if tt is ast.Scalar:
        v = t.value
        if v is None:
            return T.NULL
        if v is True or v is False:
            return T.BOOLEAN
        return T.STRING if isinstance(v, str) else T.NUMBER
    if tt is ast.Ref:
        head = t.head
        if type(head) is ast.Var and head.name in ("data", "input"):
            return T.ANY
        return None
    if tt is ast.Array:
        items = tuple(static_type(x, tree) for x in t.items)
        return T.ArrayType(items, T.ANY if not items else None)
    if tt is ast.SetTerm:
        of: T.MaybeType = None
        for x in t.items:
            of = T.or_(of, static_type(x, tree))
        return T.SetType(of if of is not None else T.ANY)
    if tt is ast.Object:
        props: list[tuple[Any, T.MaybeType]] = []
        dynamic: tuple[T.MaybeType, T.MaybeType] | None = None
        for k, v in t.items:
            if type(k) is ast.Scalar:
                from pyrego.typecheck.env import to_json

                props.append((to_json(k), static_type(v, tree)))
            else:
                dynamic = (static_type(k, tree), static_type(v, tree))
        if not props and dynamic is None:
            dynamic = (T.ANY, T.ANY)
        return T.ObjectType(props, dynamic)
    if tt in (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr) and tree is not None:
        return _comprehension_type(t, tree)
    return None  # variables, calls (their outputs)


def _comprehension_type(c: Any, tree: CompiledTree) -> T.MaybeType:
    """A comprehension's type, checked with nothing known of the variables around it."""
    from pyrego.typecheck.lower import Lowerer
    from pyrego.typecheck.rules import function_types, root_env

    lookup = function_types(tree)
    # The arity check comes before OPA makes `==` a unification.
    lowerer = Lowerer(tree.arity, lambda n: n in tree.functions or lookup(n) is not None, rewrite_equals=False)
    outside: set[str] = set()
    for e in c.body:
        stmt_vars(e.statement, outside)
    try:
        lowered = lowerer.comprehension(c, outside, outside)
    except RegoCompileError:
        return None
    return root_env(tree).get_by_value(lowered)


def arity_error(
    call: ast.Call, arity: int, nested: bool, is_builtin: bool, tree: CompiledTree | None = None, *, in_query: bool = False
) -> RegoTypeError:
    """The error OPA reports for ``call`` to a function of ``arity`` arguments
    (``in_query``: a call in a query, when the rules' types are known)."""
    have = [static_type(a, tree) for a in call.args]
    if nested:
        have.append(None)  # the output variable the call was given
    fn = builtin_type(call.op) if is_builtin else None
    name = call.op
    node = tree.functions.get(call.op) if tree is not None else None
    if node is not None:  # the rule's path as a ref (a key may hold a dot)
        from pyrego.ast.nodes import Scalar, Var
        from pyrego.typecheck.ir import ref_text

        path = (Var("data"),) + tuple(Scalar(key_raw(p)) for p in node.path)
        name = ref_text(path)
        if in_query and tree is not None and tree.types is not None:
            found = tree.types.rules_env.get_by_ref(path)
            fn = found if isinstance(found, T.FunctionType) else None
    if fn is not None:
        want = T.func_args_text(fn.args, fn.variadic)
        return RegoTypeError(f"{name}: arity mismatch\n\thave: {T.func_args_text(have)}\n\twant: {want}", call.location)
    n = len(call.args)
    noun = "argument" if n == 1 else "arguments"
    return RegoTypeError(f"function {name} has arity {arity}, got {n} {noun}", call.location)


def calls_in_rule(rule: ast.Rule) -> Iterator[tuple[ast.Call, bool]]:
    """Every call of a rule (else branches too) with whether it is nested, in the order
    OPA meets them: a body's expressions in order, the calls nested in one before it
    (innermost first), comprehension bodies after the expression holding them, the
    head's calls after the body."""
    r: ast.Rule | None = rule
    while r is not None:
        yield from calls_in_body(r.body)
        head = r.head
        yield from _expression([t for t in (*head.ref.path, *(head.args or ()), head.key, head.value) if t is not None], None)
        r = r.else_


def calls_in_body(body: ast.Body) -> Iterator[tuple[ast.Call, bool]]:
    for e in body:
        s: Any = e.statement
        st = type(s)
        withs = [w.value for w in e.with_mods]
        if st is ast.Call:
            yield from _expression(withs + list(s.args), s)
        elif st is ast.Assign or st is ast.Unify:
            yield from _expression(withs + [s.lhs, s.rhs], None)
        elif st is ast.SomeIn:
            yield from _expression(withs + [t for t in (s.key, s.value, s.collection) if t is not None], None)
        elif st is ast.Every:
            yield from _expression(withs + [s.domain], None)
            yield from calls_in_body(s.body)
        elif st is not ast.SomeVars:
            yield from _expression(withs + [s], None)


def _expression(operands: list[Any], call: ast.Call | None) -> Iterator[tuple[ast.Call, bool]]:
    """One expression: the calls nested in its operands (each an expression of its
    own, before it), itself when it is a call, then the comprehensions in them."""
    nested: list[ast.Call] = []
    closures: list[Any] = []
    for t in operands:
        _nested_calls(t, nested, closures)
    for c in nested:
        yield c, True
    if call is not None:
        yield call, False
    for c in closures:
        yield from _closure(c)


def _nested_calls(t: Any, out: list[ast.Call], closures: list[Any]) -> None:
    tt = type(t)
    if tt is ast.Call:
        for a in t.args:
            _nested_calls(a, out, closures)
        out.append(t)
    elif tt is ast.Ref:
        _nested_calls(t.head, out, closures)
        for p in t.path:
            _nested_calls(p, out, closures)
    elif tt is ast.Array or tt is ast.SetTerm:
        for x in t.items:
            _nested_calls(x, out, closures)
    elif tt is ast.Object:
        for k, v in t.items:
            _nested_calls(k, out, closures)
            _nested_calls(v, out, closures)
    elif tt is ast.TemplateString:
        for p in t.parts:
            if not isinstance(p, str):
                _nested_calls(p, out, closures)
    elif tt in (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr):
        closures.append(t)


def _closure(c: Any) -> Iterator[tuple[ast.Call, bool]]:
    """A comprehension's body, then the calls of its term (added at the end of the body)."""
    yield from calls_in_body(c.body)
    terms = [c.key, c.value] if type(c) is ast.ObjectCompr else [c.term]
    yield from _expression(terms, None)
