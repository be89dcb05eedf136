"""Variable safety: what each expression of a body needs bound and binds.

Rego bodies are declarative: ``x > 1; x := input.a`` is valid, and OPA runs
the expressions in an order in which every variable is bound before it is
read. This module computes, for each expression, which variables it needs
bound before it runs and which it binds; :mod:`pyrego.compile.body_order`
orders bodies from those.

Input ASTs are the compiler's *resolved* bodies: refs to rules and imports
are rooted at ``data``/``input``, so every remaining :class:`~pyrego.ast.nodes.Var`
is a local variable (or a root).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator

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
from pyrego.parse.lexer import FUTURE_KEYWORDS

if TYPE_CHECKING:
    from pyrego.compile.base import CompiledTree

ROOTS = frozenset({"data", "input"})

# Arity lookup for calls: the compiler passes a function that returns the
# declared number of arguments of a builtin or user function (None: unknown).
ArityFn = Callable[[str], "int | None"]


def is_wildcard(name: str) -> bool:
    return name.startswith("$")


def shown_name(name: str) -> str:
    """A variable's unique name as the user wrote it, in messages (``x#3`` is ``x``; a wildcard ``_``)."""
    return "_" if is_wildcard(name) else name.split("#")[0]


def unsafe_var_message(name: str) -> str:
    """OPA's message for the unsafe variable ``name`` (as :func:`shown_name`
    shows it); for a name that is a keyword once imported from
    ``future.keywords``, with OPA's hint to import it."""
    shown = shown_name(name)
    if shown in FUTURE_KEYWORDS:
        return f"var {shown} is unsafe (hint: `import future.keywords.{shown}` to import a future keyword)"
    return f"var {shown} is unsafe"


def is_generated(name: str) -> bool:
    """A variable the compiler made (``__local0__#w@...``), not a user's
    (whose unique name ends in ``#<number>``)."""
    return name.startswith("__local") and not name.partition("#")[2].isdigit()


# ---------------------------------------------------------------- variable collection
#
# These walks run for every term of every body, several times over: they
# dispatch on the exact node class (AST nodes are never subclassed), most
# frequent first, and handle the common leaves (scalars, variables) inline.


def term_vars(term: ast.Term | None, out: set[str], *, closures: bool = False) -> set[str]:
    """All local variables in ``term``; closure (comprehension) bodies only when asked."""
    if term is not None:
        if closures:
            _all_vars(term, out)
        else:
            _vars(term, out)
    return out


def _vars(term: ast.Term, out: set[str]) -> None:
    """Adds ``term``'s local variables to ``out``, not looking into closures."""
    if type(term) is Scalar:
        return
    if type(term) is Var:
        if term.name not in ROOTS:
            out.add(term.name)
    elif type(term) is Ref:
        head = term.head
        if type(head) is Var:  # (the usual ref: its head handled here, not by a call)
            if head.name not in ROOTS:
                out.add(head.name)
        else:
            _vars(head, out)
        for p in term.path:  # (_vars_of_each, inlined: most keys are constants)
            if type(p) is Scalar:
                continue
            if type(p) is Var:
                if p.name not in ROOTS:
                    out.add(p.name)
            else:
                _vars(p, out)
    elif type(term) is Call:
        _vars_of_each(term.args, out)
    elif type(term) is Array or type(term) is SetTerm:
        _vars_of_each(term.items, out)
    elif type(term) is Object:
        for k, v in term.items:
            _vars(k, out)
            _vars(v, out)
    elif type(term) is TemplateString:
        for part in term.parts:
            if not isinstance(part, str):
                _vars(part, out)


def _vars_of_each(terms: tuple[ast.Term, ...], out: set[str]) -> None:
    for t in terms:
        if type(t) is Scalar:
            continue
        if type(t) is Var:
            if t.name not in ROOTS:
                out.add(t.name)
        else:
            _vars(t, out)


def _all_vars(term: ast.Term, out: set[str]) -> None:
    """Adds ``term``'s local variables to ``out``, closure bodies included."""
    if type(term) is Scalar:
        return
    if type(term) is Var:
        if term.name not in ROOTS:
            out.add(term.name)
    elif type(term) is Ref:
        _all_vars(term.head, out)
        _all_vars_of_each(term.path, out)
    elif type(term) is Call:
        _all_vars_of_each(term.args, out)
    elif type(term) is Array or type(term) is SetTerm:
        _all_vars_of_each(term.items, out)
    elif type(term) is Object:
        for k, v in term.items:
            _all_vars(k, out)
            _all_vars(v, out)
    elif type(term) is TemplateString:
        for part in term.parts:
            if not isinstance(part, str):
                _all_vars(part, out)
    elif type(term) is ArrayCompr or type(term) is SetCompr:
        _all_vars(term.term, out)
        body_vars(term.body, out)
    elif type(term) is ObjectCompr:
        _all_vars(term.key, out)
        _all_vars(term.value, out)
        body_vars(term.body, out)


def _all_vars_of_each(terms: tuple[ast.Term, ...], out: set[str]) -> None:
    for t in terms:
        if type(t) is Scalar:
            continue
        if type(t) is Var:
            if t.name not in ROOTS:
                out.add(t.name)
        else:
            _all_vars(t, out)


def body_vars(body: ast.Body, out: set[str]) -> set[str]:
    """Every variable in a body, closures included."""
    for e in body:
        _stmt_all_vars(e.statement, out)
        for w in e.with_mods:
            _all_vars(w.value, out)
    return out


def stmt_vars(stmt: ast.Statement, out: set[str], *, closures: bool = False) -> set[str]:
    if closures:
        _stmt_all_vars(stmt, out)
        return out
    if type(stmt) is Call:  # (the most frequent statement: ``x == y``, ``f(x)``)
        _vars_of_each(stmt.args, out)
    elif type(stmt) is Assign or type(stmt) is Unify:
        _vars(stmt.lhs, out)
        _vars(stmt.rhs, out)
    elif type(stmt) is SomeVars:
        pass
    elif type(stmt) is SomeIn:
        if stmt.key is not None:
            _vars(stmt.key, out)
        _vars(stmt.value, out)
        _vars(stmt.collection, out)
    elif type(stmt) is Every:
        _vars(stmt.domain, out)
    else:
        _vars(stmt, out)  # type: ignore[arg-type]
    return out


def stmt_has_vars(stmt: ast.Statement) -> bool:
    """Whether ``stmt`` has a local variable, closures included (whether
    ``stmt_vars(stmt, set(), closures=True)`` is not empty), without making
    that set. Most statements have none: calls of refs into ``input`` or
    ``data`` and constants, ``input.x == "a"``."""
    if type(stmt) is Call:
        return _has_vars(stmt.args)
    if type(stmt) is Assign or type(stmt) is Unify:
        return _has_vars((stmt.lhs, stmt.rhs))
    if type(stmt) is SomeIn:
        return _has_vars((stmt.value, stmt.collection) if stmt.key is None else (stmt.key, stmt.value, stmt.collection))
    if type(stmt) is Ref:
        return _has_vars((stmt,))
    return bool(stmt_vars(stmt, set(), closures=True))


def expr_has_vars(expr: ast.Expr) -> bool:
    """Whether ``body_vars((expr,), set())`` is not empty, without making that set."""
    if stmt_has_vars(expr.statement):
        return True
    for w in expr.with_mods:
        if _has_vars((w.value,)):
            return True
    return False


def _has_vars(terms: tuple[ast.Term, ...]) -> bool:
    """Whether a local variable is in one of ``terms``, closures included."""
    for t in terms:
        if type(t) is Scalar:
            continue
        if type(t) is Ref:
            head = t.head
            if type(head) is Var:
                if head.name not in ROOTS:
                    return True
            elif _has_vars((head,)):
                return True
            for p in t.path:
                if type(p) is not Scalar and _has_vars((p,)):
                    return True
        elif type(t) is Var:
            if t.name not in ROOTS:
                return True
        elif type(t) is Call:
            if _has_vars(t.args):
                return True
        elif type(t) is Array or type(t) is SetTerm:
            if _has_vars(t.items):
                return True
        else:  # (objects, comprehensions, template strings)
            out: set[str] = set()
            _all_vars(t, out)
            if out:
                return True
    return False


def _stmt_all_vars(stmt: ast.Statement, out: set[str]) -> None:
    if type(stmt) is Assign or type(stmt) is Unify:
        _all_vars(stmt.lhs, out)
        _all_vars(stmt.rhs, out)
    elif type(stmt) is SomeVars:
        pass
    elif type(stmt) is SomeIn:
        if stmt.key is not None:
            _all_vars(stmt.key, out)
        _all_vars(stmt.value, out)
        _all_vars(stmt.collection, out)
    elif type(stmt) is Every:
        _all_vars(stmt.domain, out)
        body_vars(stmt.body, out)
        if stmt.key is not None:
            out.add(stmt.key.name)
        out.add(stmt.value.name)
    else:
        _all_vars(stmt, out)  # type: ignore[arg-type]


def closures_in(term: ast.Term | None, out: list[ast.Term]) -> list[ast.Term]:
    """Comprehensions directly inside ``term`` (not nested in other closures)."""
    if term is None or type(term) is Scalar or type(term) is Var:
        return out
    if type(term) is Ref:
        closures_in(term.head, out)
        for p in term.path:
            closures_in(p, out)
    elif type(term) is Call:
        for a in term.args:
            closures_in(a, out)
    elif type(term) is ArrayCompr or type(term) is SetCompr or type(term) is ObjectCompr:
        out.append(term)
    elif type(term) is Array or type(term) is SetTerm:
        for x in term.items:
            closures_in(x, out)
    elif type(term) is Object:
        for k, v in term.items:
            closures_in(k, out)
            closures_in(v, out)
    elif type(term) is TemplateString:
        for part in term.parts:
            if not isinstance(part, str):
                closures_in(part, out)
    return out


def stmt_terms(stmt: ast.Statement) -> list[ast.Term]:
    if type(stmt) is Assign or type(stmt) is Unify:
        return [stmt.lhs, stmt.rhs]
    if type(stmt) is SomeVars:
        return []
    if type(stmt) is SomeIn:
        return [x for x in (stmt.key, stmt.value, stmt.collection) if x is not None]
    if type(stmt) is Every:
        return [stmt.domain]
    return [stmt]  # type: ignore[list-item]


# ---------------------------------------------------------------- outputs


def ref_outputs(term: ast.Term | None, bound: set[str], out: set[str], arity: ArityFn) -> set[str]:
    """Variables bound by iterating refs (``input.a[i]``) and by call output
    arguments (``count(x, n)``) inside ``term``, outside closures."""
    if term is None or type(term) is Scalar or type(term) is Var:
        return out
    if type(term) is Ref:
        head = term.head
        if type(head) is Var:
            name = head.name
            head_ok = name in ROOTS or name in bound or name in out
        else:
            ref_outputs(head, bound, out, arity)
            head_ok = True
        for p in term.path:
            if type(p) is Scalar:
                continue
            if type(p) is Var:
                if head_ok and p.name not in bound:
                    out.add(p.name)
            elif type(p) is Array or type(p) is Object:
                # A pattern in a ref position is unified with each key.
                if head_ok:
                    out |= _vars_of(p) - bound
            else:
                ref_outputs(p, bound, out, arity)
    elif type(term) is Call:
        args = term.args
        for a in args:
            ref_outputs(a, bound, out, arity)
        n = arity(term.op)
        if n is not None and len(args) == n + 1:
            # The extra argument receives the result: any pattern in it is
            # bound, but not a ref's head (OPA: ``count(x, y.z)`` leaves y unsafe).
            if term_vars_ready(args[:-1], bound | out):
                out |= vars_past_ref_heads((args[-1],), set(), sets=False) - bound
    elif type(term) is Array or type(term) is SetTerm:
        for x in term.items:
            ref_outputs(x, bound, out, arity)
    elif type(term) is Object:
        for k, v in term.items:
            ref_outputs(k, bound, out, arity)
            ref_outputs(v, bound, out, arity)
    # (A template string's parts bind nothing: OPA evaluates each in a
    # closure of its own, reading the variables the body binds.)
    return out


def has_unbound(term: ast.Term, bound: set[str]) -> bool:
    """Whether ``term`` holds a local variable not in ``bound``."""
    # Scalars, variables and refs (most terms) are answered without a set.
    if type(term) is Scalar:
        return False
    if type(term) is Var:
        return term.name not in bound and term.name not in ROOTS
    if type(term) is Ref:
        return has_unbound(term.head, bound) or any(has_unbound(p, bound) for p in term.path)
    return bool(term_vars(term, set()) - bound)


def iterable_only(term: ast.Term, bound: set[str], arity: ArityFn) -> bool:
    """Whether ``term``'s variables not in ``bound`` are all bound by iterating its refs."""
    return term_vars(term, set()) - bound <= ref_outputs(term, bound, set(), arity)


def _vars_of(term: ast.Term) -> set[str]:
    out: set[str] = set()
    _vars(term, out)
    return out


def vars_past_ref_heads(terms: Iterable[ast.Term], out: set[str], *, sets: bool) -> set[str]:
    """The variables OPA's safety check sees in ``terms`` where it unifies
    or reads a call's operands and output: not a ref's head, an object's
    keys, a closure (nor a set's members without ``sets``)."""
    for t in terms:
        if isinstance(t, Var):
            if t.name not in ROOTS:
                out.add(t.name)
        elif isinstance(t, Ref):
            vars_past_ref_heads(t.path, out, sets=sets)
        elif isinstance(t, Call):
            vars_past_ref_heads(t.args, out, sets=sets)
        elif isinstance(t, Array) or (isinstance(t, SetTerm) and sets):
            vars_past_ref_heads(t.items, out, sets=sets)
        elif isinstance(t, Object):
            vars_past_ref_heads((v for _, v in t.items), out, sets=sets)
        elif isinstance(t, TemplateString):
            _vars(t, out)
    return out


def rules_with_arguments(tree: CompiledTree) -> Iterator[tuple[ast.Rule, set[str]]]:
    """Every rule of ``tree``, each ``else`` branch after it, with a new set
    of the variables of its function arguments (a branch without arguments
    of its own has its first definition's)."""
    for node in tree.root.walk():
        for top in node.rules:
            rule: ast.Rule | None = top
            while rule is not None:
                args: set[str] = set()
                for a in rule.head.args or top.head.args or ():
                    term_vars(a, args)
                yield rule, args
                rule = rule.else_


def term_vars_ready(terms: Iterable[ast.Term], bound: set[str]) -> bool:
    need: set[str] = set()
    for x in terms:
        _vars(x, need)
    return need <= bound


def _is_pattern(term: ast.Term) -> bool:
    return isinstance(term, (ast.Var, ast.Array, ast.Object))


def unify_outputs(a: ast.Term, b: ast.Term, bound: set[str], arity: ArityFn) -> set[str]:
    """Variables that ``a = b`` binds, given ``bound``."""
    out: set[str] = set()
    ref_outputs(a, bound, out, arity)
    ref_outputs(b, bound, out, arity)
    # ``bound`` grows with the body: read through it, never copy it (a copy
    # per statement made long bodies quadratic).
    known = _Known(bound, out)
    changed = True
    while changed:
        changed = False
        new = _unify_step(a, b, known)  # type: ignore[arg-type]
        if not new <= known:
            out |= new
            changed = True
    return out


class _Known:
    """The union of two sets of names, for membership and subset tests, without copying them."""

    __slots__ = ("big", "small")

    def __init__(self, big: set[str], small: set[str]) -> None:
        self.big, self.small = big, small

    def __contains__(self, name: object) -> bool:
        return name in self.small or name in self.big

    def __ge__(self, other: set[str]) -> bool:  # ``other <= known``
        return all(name in self for name in other)

    def __or__(self, more: set[str]) -> _Known:
        return _Known(self.big, self.small | more)


def _binds_anyway(t: ast.Term, known: set[str]) -> bool:
    """Whether a variable unified with ``t`` is bound whatever ``t``'s own
    variables (OPA's unifier marks it safe, and names only those unsafe):
    ``y := {k}``, ``y := $"{k}"`` and ``y := {k: 1}`` name k, not y;
    ``y := [k]`` and ``y := {"a": k}`` both."""
    if isinstance(t, (SetTerm, TemplateString)):
        return True
    return isinstance(t, Object) and any(not _vars_of(k) <= known for k, _ in t.items)


def _unify_step(a: ast.Term, b: ast.Term, known: set[str]) -> set[str]:
    if type(a) is Var and a.name not in known and a.name not in ROOTS:
        return {a.name} if _binds_anyway(b, known) or _vars_of(b) <= known else set()
    if type(b) is Var and b.name not in known and b.name not in ROOTS:
        return {b.name} if _binds_anyway(a, known) or _vars_of(a) <= known else set()
    a_composite = type(a) is Array or type(a) is Object
    b_composite = type(b) is Array or type(b) is Object
    if type(a) is Array and type(b) is Array:
        if len(a.items) != len(b.items):
            return set()
        out: set[str] = set()
        for x, y in zip(a.items, b.items):
            out |= _unify_step(x, y, known | out)
        return out
    if type(a) is Object and type(b) is Object:
        out = set()
        bkeys = dict(b.items)
        for k, v in a.items:
            if k in bkeys:
                out |= _unify_step(v, bkeys[k], known | out)
        return out
    if a_composite and not b_composite and not _never_matches(b):
        return _pattern_vars(a, known) if _vars_of(b) <= known else set()
    if b_composite and not a_composite and not _never_matches(a):
        return _pattern_vars(b, known) if _vars_of(a) <= known else set()
    return set()


def _never_matches(term: ast.Term) -> bool:
    """Whether an array or object pattern can never unify with ``term`` (a
    scalar or a set): OPA binds none of the pattern's variables then."""
    return type(term) is Scalar or type(term) is SetTerm


def _pattern_vars(pattern: ast.Term, known: set[str]) -> set[str]:
    """Unbound vars in a destructuring pattern (object keys must be ground)."""
    if type(pattern) is Var:
        return set() if pattern.name in known or pattern.name in ROOTS else {pattern.name}
    if type(pattern) is Array:
        out: set[str] = set()
        for x in pattern.items:
            out |= _pattern_vars(x, known)
        return out
    if type(pattern) is Object:
        out = set()
        for k, v in pattern.items:
            if _vars_of(k) <= known:
                out |= _pattern_vars(v, known)
        return out
    return set()


def expr_needs_and_outputs(expr: ast.Expr, bound: set[str], outer: set[str], arity: ArityFn) -> tuple[set[str], set[str]]:
    """(vars that must be bound before ``expr`` runs, vars it binds).

    An ``every`` needs its domain's variables, and those of ``outer`` its
    body reads (bound before it, as a closure's: OPA orders ``every`` after
    the expression binding ``k`` in ``every x in xs { x != k }; m[k]``)."""
    stmt = expr.statement
    needs: set[str] = set()
    for w in expr.with_mods:
        _vars(w.value, needs)
    if expr.negated:
        # Every variable of a negated expression must be bound before it,
        # wildcards too (OPA: "var _ is unsafe"); one in a call nested in it
        # was moved out of it by split_negated_calls.
        stmt_vars(stmt, needs)
        outs: set[str] = set()
    else:
        stmt_vars(stmt, needs)
        outs = stmt_outputs(stmt, bound, arity)
    needs -= outs
    # Closures need the outer variables they mention bound before the
    # expression, even one the expression itself binds (OPA: in
    # ``v = [x | x := v[_]]; v = input.a`` the comprehension waits for v).
    moved: set[str] | None = None
    for term in stmt_terms(stmt):
        for c in closures_in(term, []):
            captured = closure_captures(c, outer)
            if captured:
                if moved is None:
                    moved = _moved_call_outputs(stmt, bound, arity)
                captured -= moved
            needs |= captured
    if type(stmt) is Every:
        needs |= body_vars(stmt.body, set()) & outer
    return needs, outs


def _moved_call_outputs(stmt: ast.Statement, bound: set[str], arity: ArityFn) -> set[str]:
    """What the refs in calls nested in ``stmt``'s operands bind: OPA moves
    those calls out ahead of the expression, so a closure among its operands
    may read them (``data.s[v] - 1 in [[x | x := 1; v]]``)."""
    out: set[str] = set()
    tops = [stmt] if type(stmt) is Call else stmt_terms(stmt)
    for top in tops:
        inner = top.args if type(top) is Call else (top,)
        for term in inner:
            for call in _calls_in(term, []):
                ref_outputs(call, bound, out, arity)
    return out


def _calls_in(term: ast.Term, out: list[Call]) -> list[Call]:
    """The calls in ``term``, outside closures, template strings and
    collections (pyrego builds a collection holding calls and closures in
    an order of its own: there the closure still waits for the variable)."""
    if type(term) is Call:
        out.append(term)
    elif type(term) is Ref:
        _calls_in(term.head, out)
        for p in term.path:
            _calls_in(p, out)
    return out


def stmt_outputs(stmt: ast.Statement, bound: set[str], arity: ArityFn) -> set[str]:
    if type(stmt) is Unify:
        return unify_outputs(stmt.lhs, stmt.rhs, bound, arity)
    if type(stmt) is Assign:
        # OPA: ``:=`` binds only its left side; a variable on the right
        # (outside a ref's own outputs, as ``i`` in ``x := input.a[i]``) must
        # be bound by another expression (``x := c; x = 1`` leaves c unsafe).
        out = ref_outputs(stmt.rhs, bound, set(), arity)
        return out | _assigned(stmt.lhs, stmt.rhs, _Known(bound, out))
    if type(stmt) is SomeIn:
        out = ref_outputs(stmt.collection, bound, set(), arity)
        if _vars_of(stmt.collection) <= bound | out:
            out |= _pattern_vars(stmt.value, bound)
            if stmt.key is not None:
                out |= _pattern_vars(stmt.key, bound)
        return out
    if type(stmt) is Every:
        # (OPA: its domain's refs bind their variables, ``every v in n[k]`` binds k.)
        return ref_outputs(stmt.domain, bound, set(), arity)
    if type(stmt) is SomeVars:
        return set()
    return ref_outputs(stmt, bound, set(), arity)  # type: ignore[arg-type]


def _assigned(lhs: ast.Term, rhs: ast.Term, known: _Known) -> set[str]:
    """Variables of the left side of ``lhs := rhs`` that it binds, given ``known``:
    element by element where both sides are arrays (or objects with the same
    keys), so ``[a, b] := [1, c]`` binds a even while c is unbound (as OPA)."""
    if type(lhs) is Array and type(rhs) is Array and len(lhs.items) == len(rhs.items):
        out: set[str] = set()
        for x, y in zip(lhs.items, rhs.items):
            out |= _assigned(x, y, known)
        return out
    if type(lhs) is Object and type(rhs) is Object and len(lhs.items) == len(rhs.items):
        values = dict(rhs.items)
        if all(k in values for k, _ in lhs.items):
            out = set()
            for k, v in lhs.items:
                out |= _assigned(v, values[k], known)
            return out
    if (type(lhs) is Array or type(lhs) is Object) and (_never_matches(rhs) or type(rhs) is Array or type(rhs) is Object):
        return set()  # (shapes that cannot match: OPA binds nothing)
    if _vars_of(rhs) <= known or (type(lhs) is Var and _binds_anyway(rhs, known)):  # type: ignore[operator, arg-type]
        return _pattern_vars(lhs, known)  # type: ignore[arg-type]
    return set()


def closure_captures(closure: ast.Term, outer: set[str]) -> set[str]:
    """Outer variables a comprehension reads (they must be bound first)."""
    inner: set[str] = set()
    _all_vars(closure, inner)
    return inner & outer
