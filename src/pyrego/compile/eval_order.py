"""What OPA evaluates first, where pyrego's order would differ.

OPA's compiler rewrites a body before it runs it: each call nested in an
expression's operands becomes an expression of its own before it
(``RewriteExprTerms``), and a rule head's calls, then its refs, are
evaluated at the end of the body. pyrego evaluates an expression whole, in
order, and a head's terms in order after the body: the answers are the
same except where something read first raises, or is undefined while
something OPA reads first raises (a builtin's error, with strict builtin
errors; a conflict). This module makes the expressions that take OPA's
order there: builtin calls evaluated once more, before the expression or
the head that holds them. Those needed only with strict builtin errors
(a setting of the evaluation, not of the code) are marked
:func:`strict_only`: the code generators run them in such evaluations alone.
Only code for engines with strict builtin errors gets them (the setting is
part of an engine's program): the analysis costs at planning, and code
without it plans as before.
"""

from __future__ import annotations

from typing import Any, Callable, Container

from pyrego.ast import nodes as ast
from pyrego.compile.rewrite import has_call, split_nested_calls
from pyrego.compile.safety import stmt_vars, term_vars
from pyrego.errors import Location

_ROOTS = ("input", "data")


#: The location of a guard needed only with strict builtin errors (told
#: apart by identity: the code generators run it only in such evaluations).
STRICT_ONLY = Location("", 0, 0)


def mark_strict_only(e: ast.Expr) -> ast.Expr:
    """``e`` to run only with strict builtin errors."""
    return ast.Expr(e.statement, e.negated, e.with_mods, STRICT_ONLY)


def strict_only(e: ast.Expr) -> bool:
    """Whether ``e`` is an index guard to run only with strict builtin errors."""
    return e.location is STRICT_ONLY


def strict_calls_first(e: ast.Expr, bound: Container[str]) -> list[ast.Expr]:
    """The builtin calls nested in ``e``'s operands that OPA evaluates before
    ``e`` (its ``RewriteExprTerms``; pyrego evaluates an expression whole):
    with strict builtin errors, such a call that fails raises even where an
    operand pyrego reads first is undefined or raises (``input.m[input.k] >=
    to_number(input.s)``). As expressions :func:`strict_only` binding fresh
    variables, to run before ``e`` (``bound``: the variables bound by then;
    they carry ``e``'s ``with`` modifiers, as OPA's do); none where no nested
    call can fail, where a ref other than their own operands comes to be
    read after them, or where a call needs a variable ``e`` binds. The
    collection of ``some ... in`` and the domain of ``every`` count as
    operands. A call evaluated twice gives the same value (builtins are
    deterministic within an evaluation), so this only adds the error."""
    if e.negated or not (_calls_after_refs(e.statement) or _resorted_inside(e.statement)):
        return []  # (a negated expression's calls are bound before it already)
    parts = split_nested_calls(e, "s")
    if len(parts) < 2:
        return []
    pre = parts[:-1]
    need: set[str] = set()
    inner: set[str] = set()
    for x in pre:
        term_vars(x.statement.rhs, need)  # type: ignore[union-attr]
        term_vars(x.statement.rhs, inner, closures=True)  # type: ignore[union-attr]
    # (in a comprehension there, only the variables ``e`` has outside one: the others are its own)
    need |= inner & stmt_vars(e.statement, set())
    if any(v not in bound for v in need if not v.startswith("__local")):
        return []
    return [mark_strict_only(x) for x in pre]


def head_calls_first(head: ast.RuleHead, raises: Callable[[Any], bool], strict: bool) -> tuple[ast.Expr, ...]:
    """OPA evaluates the calls of a rule's head at the end of its body, then
    the head's refs; pyrego evaluates the head's terms in order. Where a ref
    comes before a call there, the calls as expressions to run after the
    body: always where the ref can raise (a conflict; the call undefined
    fails the body first in OPA), else with strict builtin errors only
    (where the call fails). None where no call comes after a ref."""
    path = head.ref.path if type(head.ref) is ast.Ref else ()
    terms = tuple(t for t in (*path, None if any(t is head.key for t in path) else head.key, head.value) if t is not None)
    if not has_call(terms):
        return ()
    calls: list[ast.Call] = []
    _outer_calls(terms, calls)
    if not _ref_before_call(terms) and not _calls_resorted(terms, calls):
        return ()
    always = _raising_ref_before_call(terms, raises) or _calls_resorted(terms, calls)
    if not always and not strict:
        return ()  # (``strict``: the code serves evaluations with strict builtin errors)
    out = []
    for n, call in enumerate(calls):
        e = ast.Expr(ast.Unify(ast.Var(f"__head{n}__#h"), call))  # (``#``: no Rego variable is named so)
        out.append(e if always else mark_strict_only(e))
    return tuple(out)


def comprehension_body(t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> ast.Body:
    """``t``'s body, for code with strict builtin errors: OPA evaluates the
    calls of a comprehension's term (its key, then its value) at the end of
    its body, then the term's refs; pyrego evaluates the term in order.
    Where a ref comes before a call that can fail there, the body with those
    calls after it, as expressions :func:`strict_only` (a call evaluated
    twice gives the same value: this only adds its error)."""
    terms = (t.key, t.value) if isinstance(t, ast.ObjectCompr) else (t.term,)
    if not has_call(terms):
        return t.body
    calls: list[ast.Call] = []
    _outer_calls(terms, calls)
    if not _ref_before_call(terms) and not _calls_resorted(terms, calls):
        return t.body
    loc = t.location
    # (named after the comprehension: one nested in another's term has its own)
    return t.body + tuple(mark_strict_only(ast.Expr(ast.Unify(ast.Var(f"__compr{n}__#c@{loc.row}:{loc.col}"), c))) for n, c in enumerate(calls))


def _outer_calls(t: Any, out: list[ast.Call]) -> None:
    """The calls in ``t`` not inside another call, in order (not in comprehensions)."""
    tt = type(t)
    if tt is ast.Call:
        out.append(t)
        return
    if tt is tuple:
        for x in t:
            _outer_calls(x, out)
        return
    if tt is ast.Scalar or tt is ast.Var or isinstance(t, SUBQUERIES):
        return
    if tt is ast.SetTerm or tt is ast.Object:
        from pyrego.ast.json_order import opa_term_order  # (only where a literal holds a call)
    if tt is ast.SetTerm:  # (in OPA's sorted order of the elements, as it walks them)
        for i in opa_term_order(t.items):
            _outer_calls(t.items[i], out)
        return
    if tt is ast.Object:  # (in the order of the sorted keys)
        for i in opa_term_order([k for k, _ in t.items]):
            _outer_calls(t.items[i], out)
        return
    parts = PARTS.get(tt)
    if parts is not None:
        for x in parts(t):
            if x is not None:
                _outer_calls(x, out)


def _calls_resorted(terms: tuple[Any, ...], calls: list[ast.Call]) -> bool:
    """Whether ``calls`` (:func:`_outer_calls`: OPA's order, a set's or an
    object's sorted) differ from the order of the text, pyrego's: a call
    undefined that OPA evaluates first stops one after it that would raise."""
    return len(calls) > 1 and [id(c) for c in calls] != [id(c) for c in _text_calls(terms)]


def _resorted_inside(t: Any) -> bool:
    """Whether a set or an object in ``t`` (outside comprehensions) holds
    calls that OPA evaluates in another order than the text's."""
    tt = type(t)
    if tt is ast.Scalar or tt is ast.Var or isinstance(t, SUBQUERIES):
        return False
    if tt is ast.Object or tt is ast.SetTerm:
        calls: list[ast.Call] = []
        _outer_calls(t, calls)
        if _calls_resorted((t,), calls):
            return True
    if tt is ast.Call:
        return any(_resorted_inside(a) for a in t.args)
    parts = PARTS.get(tt)
    return parts is not None and any(_resorted_inside(x) for x in parts(t) if x is not None)


def _text_calls(t: Any) -> list[ast.Call]:
    """The calls in ``t`` not inside another call, in the order pyrego's code
    evaluates them: the text's, but an object's entries in the order it
    builds the object (:func:`~pyrego.compile.ground.in_build_order`, where
    a key is not a distinct string: a call's key entry before an array's)."""
    if type(t) is ast.Call:
        return [t]
    if type(t) is tuple:
        return [c for x in t for c in _text_calls(x)]
    if type(t) is ast.Object and not (all(type(k) is ast.Scalar and type(k.value) is str for k, _ in t.items) and len({k.value for k, _ in t.items}) == len(t.items)):  # type: ignore[union-attr]
        from pyrego.compile.ground import in_build_order  # (only for literals with other keys)

        return [c for kv in in_build_order(t.items) for x in kv for c in _text_calls(x)]
    parts = PARTS.get(type(t))
    if parts is None or isinstance(t, SUBQUERIES):
        return []
    return [c for x in parts(t) if x is not None for c in _text_calls(x)]


def _raising_ref_before_call(terms: tuple[Any, ...], raises: Callable[[Any], bool]) -> bool:
    """Whether, among ``terms`` read in order, a ref that can raise comes before a call (as :func:`_ref_before_call`)."""
    seen = [False]
    return any(_ref_walk(t, seen, raises) for t in terms)


def _fails_nested(t: Any, depth: int) -> bool:
    """Whether a builtin call that can fail is nested in ``t`` (below its own call), outside comprehensions."""
    tt = type(t)
    if tt is ast.Call:
        if depth and t.op not in NEVER_FAILS:
            return True
        return any(_fails_nested(a, depth + 1) for a in t.args)
    if tt is ast.Unify or tt is ast.Assign:
        return any(_fails_nested(x, 0 if type(x) is ast.Call else 1) for x in (t.lhs, t.rhs))
    if tt is ast.Scalar or tt is ast.Var or isinstance(t, SUBQUERIES):
        return False
    parts = PARTS.get(tt)
    return parts is not None and any(_fails_nested(x, depth or 1) for x in parts(t) if x is not None)


def _calls_after_refs(stmt: ast.Statement) -> bool:
    """Whether a call that can fail is nested in ``stmt``'s operands after a
    ref pyrego reads first (:func:`_ref_first`). The collection of ``some
    ... in`` and the domain of ``every`` are operands (OPA's
    ``internal.member_3``; a domain bound before the loop)."""
    if isinstance(stmt, (ast.SomeIn, ast.Every)):
        coll = stmt.collection if isinstance(stmt, ast.SomeIn) else stmt.domain
        return _fails_nested(coll, 1) and _ref_before_call((coll,))
    return _fails_nested(stmt, 0) and _ref_first(stmt)


def _ref_first(stmt: ast.Statement) -> bool:
    """Whether pyrego, evaluating ``stmt`` in order, reads a ref before a
    nested call that can fail, where OPA evaluates that call first: a ref
    before it among the operands of one call (or of the statement, or inside
    a collection or ref there; a ref's head before its keys)."""
    if type(stmt) is ast.Call:
        return _ref_before_call(stmt.args)
    if type(stmt) is ast.Unify or type(stmt) is ast.Assign:
        sides = tuple(x.args if type(x) is ast.Call else (x,) for x in (stmt.lhs, stmt.rhs))
        return _ref_before_call(sides[0]) or _ref_before_call(sides[1]) or _ref_before_call((stmt.lhs, stmt.rhs))
    return _ref_before_call((stmt,))


def _ref_before_call(terms: tuple[Any, ...]) -> bool:
    """Whether, among ``terms`` read in order (one call's operands), a ref
    comes before a call that can fail; or so inside a call among them."""
    seen = [False]
    return any(_ref_walk(t, seen, None) for t in terms)


def _ref_walk(t: Any, seen: list[bool], raises: Callable[[Any], bool] | None) -> bool:
    """One term of :func:`_ref_before_call` (``raises`` None) or of
    :func:`_raising_ref_before_call`; ``seen``: whether a ref came before.
    (A function, not a closure calling itself, which would be a reference cycle.)"""
    tt = type(t)
    if tt is ast.Call:
        if raises is not None:
            return seen[0] or any(_ref_walk(a, [False], raises) for a in t.args)
        if seen[0] and (t.op not in NEVER_FAILS or _fails_nested(t, 0)):
            return True
        return _ref_before_call(t.args)  # (its own operands: read before it in either order)
    if tt is ast.Ref:
        # (its head is read first, a term's parts included; a call among its keys comes after it)
        if type(t.head) is not ast.Var and _ref_walk(t.head, seen, raises):
            return True
        seen[0] = seen[0] or raises is None or raises(t)
        return any(_ref_walk(k, seen, raises) for k in t.path)
    if tt is ast.Var:
        seen[0] = seen[0] or (raises is None and t.name in _ROOTS)
        return False
    if isinstance(t, SUBQUERIES):
        # (a comprehension stays in the expression, evaluated after the calls OPA moves out; it can raise)
        seen[0] = seen[0] or (raises is None and _is_comprehension(t))
        return False
    if tt is ast.Scalar:
        return False
    if (tt is ast.Object or tt is ast.SetTerm) and not seen[0]:
        # (built in the order of OPA's sort of their terms, not the text's:
        # a ref anywhere in one may be read before any call there)
        seen[0] = _reads_ref(t, raises)
    parts = PARTS.get(tt)
    return parts is not None and any(_ref_walk(x, seen, raises) for x in parts(t) if x is not None)


def _reads_ref(t: Any, raises: Callable[[Any], bool] | None) -> bool:
    """Whether a ref (one that can raise, with ``raises``) is in ``t``
    outside calls and comprehensions."""
    tt = type(t)
    if tt is ast.Ref:
        return raises is None or raises(t) or _reads_ref(t.head, raises) or any(_reads_ref(k, raises) for k in t.path)
    if tt is ast.Var:
        return raises is None and t.name in _ROOTS
    if isinstance(t, SUBQUERIES):
        return raises is None and _is_comprehension(t)
    if tt is ast.Call or tt is ast.Scalar:
        return False
    parts = PARTS.get(tt)
    return parts is not None and any(_reads_ref(x, raises) for x in parts(t) if x is not None)


#: Builtins that never fail, whatever their operands (comparisons, membership, type tests).
NEVER_FAILS = frozenset(
    {"equal", "neq", "lt", "gt", "lte", "gte", "internal.member_2", "internal.member_3"}
    | {"is_string", "is_number", "is_boolean", "is_array", "is_set", "is_object", "is_null", "type_name", "print"}
)


#: The parts of the common nodes, for walks (index_guards walks every
#: expression of every rule a body reads: read by field name, not through
#: dataclass fields).
PARTS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    ast.Expr: lambda e: (e.statement, *e.with_mods),
    ast.Ref: lambda e: (e.head, *e.path),
    ast.Call: lambda e: e.args,
    ast.Assign: lambda e: (e.lhs, e.rhs),
    ast.Unify: lambda e: (e.lhs, e.rhs),
    ast.Array: lambda e: e.items,
    ast.SetTerm: lambda e: e.items,
    ast.Object: lambda e: tuple(x for kv in e.items for x in kv),
    ast.RuleHead: lambda e: (e.ref, e.value, e.key, *(e.args or ())),
}


SUBQUERIES = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr, ast.Every)


def _is_comprehension(t: Any) -> bool:
    """Whether ``t`` (one of SUBQUERIES) is a comprehension: a term read in place that may raise."""
    return type(t) is not ast.Every


__all__ = ["NEVER_FAILS", "PARTS", "STRICT_ONLY", "SUBQUERIES", "comprehension_body", "has_call", "head_calls_first", "mark_strict_only", "strict_calls_first", "strict_only"]
