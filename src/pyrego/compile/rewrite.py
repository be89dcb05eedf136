"""The parts of a negated expression evaluated before the negation.

OPA's compiler rewrites every body before it runs, and two of its stages
decide what ``not E`` means when part of ``E`` is undefined:

``RewriteExprTerms`` (before the safety check and ordering)
    each call nested in an expression's operands (directly, or inside an
    array, object, set or ref among them, a ref's head included) becomes an
    expression of its own, ``__localN__ = f(...)``, placed before it,
    innermost first;
``RewriteDynamicTerms`` (after ordering)
    each ref among a call's operands, or inside an array, object or set
    among them, is bound to a variable by an expression placed right before
    the call, refs in its keys first; so is each comprehension there. For
    unification (``a = b``; a module's ``a == b`` too, which the stage before
    it, ``RewriteEquals``, turns into ``a = b``, but not a query's) and for an
    expression that is a term alone, the operand itself is not bound, only
    what is nested in it: a ref's keys and head, a composite's elements.

Those expressions carry the expression's ``with`` modifiers and are never
negated. So for ``not E`` the parts they bind are evaluated outside the
negation: when one is undefined the body fails and ``not`` is never reached,
where ``E`` evaluated whole inside the negation would be undefined and
``not E`` true. This module makes the same expressions:
:func:`split_negated_calls` is the first stage, run before a body is ordered
(its expressions take part in the safety check: variables they bind by
iteration are bound for what follows, so ``not is_string(count(xs[i]))``
iterates over ``i`` while ``not is_string(xs[i])`` has ``i`` unsafe), and
:func:`bind_negated_operands` the second, run on the ordered body (every
variable it meets is bound by then).

Otherwise only the first stage is made, and only for an expression with
a call of a function of the policies nested in its operands (when the code
generator asks for it): such a call may raise a conflict error, which OPA
raises even where an operand before it is undefined (``input.x > f(1)``).
For any other expression the rewrite changes no answer: an undefined
operand fails the expression wherever it is evaluated, and a ref that
iterates binds the same values whether it is evaluated before the
expression or inside it. Leaving those expressions whole keeps their
generated code as it is. (A builtin's error shows the same difference, with
strict builtin errors only; those calls stay where they are, and
:mod:`pyrego.compile.eval_order` evaluates them once before, in strict
evaluations only.)
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Array,
    ArrayCompr,
    Assign,
    Call,
    Object,
    ObjectCompr,
    Ref,
    Scalar,
    SetCompr,
    SetTerm,
    Unify,
    Var,
)

_ROOTS = frozenset({"data", "input"})
_COMPREHENSIONS = (ArrayCompr, SetCompr, ObjectCompr)


class _Hoister:
    """Collects the expressions bound before one negated expression.

    The variables made are named after the expression's location and a
    stage letter: a negated expression is rewritten once per body that holds
    it, so the names are unique in every scope it is compiled in, and the
    ``#`` keeps them apart from the compiler's names for Rego variables."""

    def __init__(self, expr: ast.Expr, stage: str) -> None:
        self.expr = expr
        self.stage = stage
        self.out: list[ast.Expr] = []

    def bind(self, term: ast.Term) -> Var:
        loc = self.expr.location
        name = f"__local{len(self.out)}__#{self.stage}@{loc.file}:{loc.row}:{loc.col}"
        var = Var(name, term.location)
        self.out.append(ast.Expr(Unify(var, term, term.location), False, self.expr.with_mods, self.expr.location))
        return var

    # -- RewriteExprTerms: nested calls --------------------------------------------

    def calls_in(self, t: ast.Term) -> ast.Term:
        """``t`` with every call in it bound first (comprehensions and
        template strings are left whole: their parts are not operands)."""
        if type(t) is Call:
            return self.bind(Call(t.op, self.calls_in_each(t.args), t.location, t.op_ref))
        return _map_parts(t, self.calls_in)

    def calls_in_each(self, terms: tuple[ast.Term, ...]) -> tuple[ast.Term, ...]:
        return _map_each(terms, self.calls_in)

    # -- RewriteDynamicTerms: refs and comprehensions ----------------------------------

    def operand(self, t: ast.Term) -> ast.Term:
        """A call's operand: bound itself when it is a ref or a comprehension."""
        if type(t) is Ref:
            return self.bind(self.inside(t))
        if type(t) is Var and t.name in _ROOTS:
            return self.bind(t)
        if isinstance(t, _COMPREHENSIONS):
            return self.bind(t)
        return self.inside(t)

    def inside(self, t: ast.Term) -> ast.Term:
        """``t`` with the refs and comprehensions nested in it bound first, not ``t`` itself."""
        return _map_parts(t, self.operand)

    def operands(self, terms: tuple[ast.Term, ...]) -> tuple[ast.Term, ...]:
        return _map_each(terms, self.operand)


def _map_parts(t: ast.Term, each: Callable[[ast.Term], ast.Term]) -> ast.Term:
    """``t`` with ``each`` applied to its parts: a ref's keys (and a head that is
    not a variable), a collection's items, an object's keys and values; ``t``
    itself when no part changed. Other terms are returned as they are."""
    if type(t) is Ref:
        head = t.head if type(t.head) is Var else each(t.head)
        path = _map_each(t.path, each)
        return t if head is t.head and path is t.path else Ref(head, path, t.location)
    if type(t) is Array:
        items = _map_each(t.items, each)
        return t if items is t.items else Array(items, t.location)
    # A set's elements and an object's entries are walked in OPA's sorted
    # order of their terms (its literals keep them so), not the text's.
    if type(t) is SetTerm or type(t) is Object:
        from pyrego.ast.json_order import opa_term_order  # (rarely needed: not at import)
    if type(t) is SetTerm:
        elems = list(t.items)
        for i in opa_term_order(t.items):
            if type(elems[i]) is not Scalar:
                elems[i] = each(elems[i])
        if all(a is b for a, b in zip(elems, t.items)):
            return t
        return SetTerm(tuple(elems), t.location)
    if type(t) is Object:
        pairs = list(t.items)
        for i in opa_term_order([k for k, _ in t.items]):
            k, v = pairs[i]
            pairs[i] = (each(k), each(v))
        if all(k is ok and v is ov for (k, v), (ok, ov) in zip(pairs, t.items)):
            return t
        return Object(tuple(pairs), t.location)
    return t


def _map_each(terms: tuple[ast.Term, ...], each: Callable[[ast.Term], ast.Term]) -> tuple[ast.Term, ...]:
    new = tuple([x if type(x) is Scalar else each(x) for x in terms])
    return terms if all(a is b for a, b in zip(new, terms)) else new


def _with_statement(e: ast.Expr, stmt: ast.Statement) -> ast.Expr:
    return ast.Expr(stmt, e.negated, e.with_mods, e.location)


# OPA wraps print's operands in comprehensions first, so nothing of them is
# bound early (and print still prints when one is undefined).
_PRINT = frozenset({"print", "internal.print"})


def split_nested_calls(e: ast.Expr, stage: str) -> list[ast.Expr]:
    """OPA's ``RewriteExprTerms`` of one expression: an expression binding
    each call nested in its operands, innermost first, then the expression
    reading those variables (``[e]`` where it has none). ``stage``: a letter
    in the variables' names, apart from those of other rewrites. Also for
    ``some ... in xs`` (OPA's ``internal.member_3``: ``xs`` is an operand)
    and ``every ... in xs`` (OPA binds ``xs`` before the loop)."""
    s = e.statement
    if isinstance(s, ast.SomeIn):
        h = _Hoister(e, stage)
        coll = h.calls_in(s.collection)
        return h.out + [_with_statement(e, ast.SomeIn(s.key, s.value, coll, s.location))] if h.out else [e]
    if isinstance(s, ast.Every):
        h = _Hoister(e, stage)
        domain = h.calls_in(s.domain)
        return h.out + [_with_statement(e, ast.Every(s.key, s.value, domain, s.body, s.location))] if h.out else [e]
    return _split_calls(e, stage)


def _split_calls(e: ast.Expr, stage: str = "c") -> list[ast.Expr]:
    s = e.statement
    if type(s) is Call and s.op in _PRINT:
        return [e]
    h = _Hoister(e, stage)
    stmt: ast.Statement
    if type(s) is Call:
        # The expression's own call stays: only calls in its operands go first.
        args = h.calls_in_each(s.args)
        stmt = s if args is s.args else Call(s.op, args, s.location, s.op_ref)
    elif type(s) is Unify:
        stmt = Unify(h.calls_in(s.lhs), h.calls_in(s.rhs), s.location)
    elif type(s) is Assign:
        # (Never negated: the right side's own call stays, as for ``x = f(y)`` with ``x`` a variable.)
        rhs = s.rhs
        if type(rhs) is Call:
            args = h.calls_in_each(rhs.args)
            rhs = rhs if args is rhs.args else Call(rhs.op, args, rhs.location, rhs.op_ref)
        else:
            rhs = h.calls_in(rhs)
        stmt = Assign(s.lhs, rhs, s.location)
    elif isinstance(s, (Ref, Array, Object, SetTerm)):
        stmt = h.calls_in(s)
    else:
        return [e]
    if not h.out:
        return [e]
    return h.out + [_with_statement(e, stmt)]


def split_negated_calls(body: ast.Body, functions: Callable[[str], bool] | None = None) -> ast.Body:
    """OPA's ``RewriteExprTerms`` for the negated expressions of ``body``:
    calls nested in their operands become expressions placed before them.

    With ``functions`` (whether a call's name is a function of the policies),
    also for each expression with such a call nested in its operands: the
    function may raise a conflict error, which OPA raises even where an
    operand before it is undefined (``input.x > f(1)``)."""
    out: list[ast.Expr] | None = None  # (made at the first expression to split)
    for i, e in enumerate(body):
        if e.negated or (functions is not None and calls_function(e.statement, functions)):
            if out is None:
                out = list(body[:i])
            out.extend(_split_calls(e))
        elif out is not None:
            out.append(e)
    return tuple(out) if out is not None and len(out) != len(body) else body


def calls_function(stmt: ast.Statement, functions: Callable[[str], bool]) -> bool:
    """Whether a call of a function of the policies is nested in ``stmt``'s
    operands (one :func:`_split_calls` would move out: not print's operands),
    or in a comprehension among them (which stays, evaluated after the calls
    moved out: OPA's order where one of those is undefined)."""
    s = stmt
    if type(s) is Call:
        return s.op not in _PRINT and any(_has_function_call(a, functions) for a in s.args)
    if type(s) is Unify or type(s) is Assign:
        # (``x = f(1)``, ``x := f(input.a)``: nothing is evaluated before the call.)
        for a, b in ((s.lhs, s.rhs), (s.rhs, s.lhs)):
            if type(b) is Call and (type(a) is Var or type(a) is Scalar):
                return any(_has_function_call(x, functions) for x in b.args)
        return _has_function_call(s.lhs, functions) or _has_function_call(s.rhs, functions)
    if isinstance(s, (Ref, Array, Object, SetTerm)):
        return _has_function_call(s, functions)
    return False


def _has_function_call(t: ast.Term, functions: Callable[[str], bool]) -> bool:
    if isinstance(t, _COMPREHENSIONS):
        # (its calls stay in it; but it is evaluated in place, after the calls
        # moved out of the expression: a function there raising comes after them)
        return has_call(t, functions)
    if isinstance(t, Call):
        return functions(t.op) or any(_has_function_call(a, functions) for a in t.args)
    if isinstance(t, Ref):
        return (type(t.head) is not Var and _has_function_call(t.head, functions)) or any(_has_function_call(a, functions) for a in t.path)
    if isinstance(t, (Array, SetTerm)):
        return any(_has_function_call(a, functions) for a in t.items)
    if isinstance(t, Object):
        return any(_has_function_call(k, functions) or _has_function_call(v, functions) for k, v in t.items)
    return False


def has_call(node: object, named: Callable[[str], bool] | None = None) -> bool:
    """Whether ``node`` holds a call (anywhere, comprehensions' bodies
    included), of a name ``named`` accepts where given."""
    if type(node) is Call:
        if named is None or named(node.op):
            return True
    elif type(node) is tuple:
        return any(has_call(x, named) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    return fields is not None and any(has_call(getattr(node, f), named) for f in fields if f != "location")


def _bind_operands(e: ast.Expr, equality_unifies: bool) -> list[ast.Expr]:
    s = e.statement
    if type(s) is Call and s.op in _PRINT:
        return [e]
    h = _Hoister(e, "d")
    stmt: ast.Statement
    if type(s) is Unify:
        stmt = Unify(h.inside(s.lhs), h.inside(s.rhs), s.location)
    elif type(s) is Call and equality_unifies and s.op == "equal" and len(s.args) == 2:
        stmt = Call(s.op, (h.inside(s.args[0]), h.inside(s.args[1])), s.location, s.op_ref)
    elif type(s) is Call:
        args = h.operands(s.args)
        stmt = s if args is s.args else Call(s.op, args, s.location, s.op_ref)
    elif isinstance(s, (Ref, Array, Object, SetTerm)):
        stmt = h.inside(s)
    else:
        return [e]
    if not h.out:
        return [e]
    return h.out + [_with_statement(e, stmt)]


def bind_negated_operands(ordered: ast.Body, *, equality_unifies: bool = True) -> ast.Body:
    """OPA's ``RewriteDynamicTerms`` for the negated expressions of an ordered
    body: the refs (and comprehensions) it binds early become expressions
    placed right before them.

    ``equality_unifies``: whether ``a == b`` counts as unification (in rule
    and function bodies; not in a query, whose compiler keeps ``==`` a call)."""
    for e in ordered:
        if e.negated:
            break
    else:
        return ordered
    out: list[ast.Expr] = []
    for e in ordered:
        if e.negated:
            out.extend(_bind_operands(e, equality_unifies))
        else:
            out.append(e)
    return tuple(out) if len(out) != len(ordered) else ordered


def negation_is_whole(stmt: ast.Statement) -> bool:
    """Whether ``not stmt`` evaluates all of ``stmt`` inside the negation, in
    a rule as in a query: nothing in it is bound before the negation (what
    ``not`` means for any statement under ``import future.keywords.not``)."""
    e = ast.Expr(stmt, True)
    return len(_split_calls(e)) == 1 and len(_bind_operands(e, False)) == 1


def iterates_in_collection(e: ast.Expr, bound: AbstractSet[str]) -> bool:
    """Whether a ref nested in an array, object or set among ``e``'s operands
    binds a variable not in ``bound`` by iterating (``m[k]`` in ``x = [k, m[k]]``
    with ``k`` unbound), ``e`` not negated: the code generator builds a
    collection's items in their written order, so it would read ``k`` before
    ``m[k]`` binds it. Such an expression is rewritten by
    :func:`bind_iterating_operands` first; most expressions have none."""
    s = e.statement
    operands: tuple[ast.Term, ...]
    if type(s) is Call:
        operands = s.args
    elif type(s) is Unify or type(s) is Assign:
        operands = (s.lhs, s.rhs)
    elif type(s) is ast.SomeIn:
        operands = (s.collection,)
    elif type(s) is ast.Every:
        operands = (s.domain,)
    elif isinstance(s, (Ref, Array, Object, SetTerm)):
        operands = (s,)
    else:
        return False
    return not e.negated and any(_iterates_in_collection(t, bound, False) for t in operands)


def bind_iterating_operands(e: ast.Expr, *, equality_unifies: bool, stage: str) -> list[ast.Expr]:
    """OPA's ``RewriteExprTerms`` then ``RewriteDynamicTerms`` for one
    expression: each call nested in its operands, then each ref (and
    comprehension) among or inside them, in an expression of its own placed
    before it, so an iterating ref binds its variables before the collection
    holding it is built (:func:`iterates_in_collection`). ``stage``: a name
    part unique to this rewrite of this expression."""
    out: list[ast.Expr] = []
    for piece in split_nested_calls(e, stage + "c"):
        out.extend(_bind_all_operands(piece, equality_unifies, stage + "d"))
    return out


def _iterates_in_collection(t: ast.Term, bound: AbstractSet[str], inside: bool) -> bool:
    """Whether a ref with a variable not in ``bound`` is in ``t``, within a
    collection (``inside``: ``t`` is in one), not in a comprehension."""
    if type(t) is Ref:
        if inside and _has_unbound_var(t, bound):
            return True
        return any(_iterates_in_collection(p, bound, inside) for p in t.path)
    if type(t) is Array or type(t) is SetTerm:
        return any(_iterates_in_collection(x, bound, True) for x in t.items)
    if type(t) is Object:
        return any(_iterates_in_collection(k, bound, True) or _iterates_in_collection(v, bound, True) for k, v in t.items)
    if type(t) is Call:
        return any(_iterates_in_collection(a, bound, inside) for a in t.args)
    return False


def _has_unbound_var(t: ast.Term, bound: AbstractSet[str]) -> bool:
    if type(t) is Var:
        return t.name not in bound and t.name not in _ROOTS
    if type(t) is Ref:
        return _has_unbound_var(t.head, bound) or any(_has_unbound_var(p, bound) for p in t.path)
    if type(t) is Array or type(t) is SetTerm:
        return any(_has_unbound_var(x, bound) for x in t.items)
    if type(t) is Object:
        return any(_has_unbound_var(k, bound) or _has_unbound_var(v, bound) for k, v in t.items)
    if type(t) is Call:
        return any(_has_unbound_var(a, bound) for a in t.args)
    return False


def _bind_all_operands(e: ast.Expr, equality_unifies: bool, stage: str) -> list[ast.Expr]:
    """:func:`_bind_operands` for an expression the code generator keeps
    whole (``x := ...``, ``some ... in``, ``every``), and for a call bound
    to a variable (OPA's ``f(a, x)``: its operands are bound first)."""
    s = e.statement
    h = _Hoister(e, stage)
    stmt: ast.Statement
    if (type(s) is Unify or type(s) is Assign) and (type(s.rhs) is Call or type(s.lhs) is Call):
        call, other = (s.rhs, s.lhs) if type(s.rhs) is Call else (s.lhs, s.rhs)
        args = h.operands(call.args)  # type: ignore[union-attr]
        new_call = Call(call.op, args, call.location, call.op_ref)  # type: ignore[union-attr]
        stmt = type(s)(other, new_call, s.location) if call is s.rhs else type(s)(new_call, other, s.location)
    elif type(s) is Assign:
        stmt = Assign(h.inside(s.lhs), h.inside(s.rhs), s.location)
    elif type(s) is ast.SomeIn:
        stmt = ast.SomeIn(s.key, s.value, h.operand(s.collection), s.location)
    elif type(s) is ast.Every:
        stmt = ast.Every(s.key, s.value, h.operand(s.domain), s.body, s.location)
    else:
        return _bind_operands(e, equality_unifies)
    if not h.out:
        return [e]
    return h.out + [_with_statement(e, stmt)]
