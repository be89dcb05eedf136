"""``with`` values that must be evaluated: bound to a variable first.

OPA's compiler stage ``RewriteWithValues`` rewrites every body so that a
``with`` modifier's value is a plain term: a value that holds a ref, a call
or a comprehension becomes an expression of its own, ``__localN__ = value``,
placed before the expression, whose modifier then reads ``__localN__``. The
new expression is ordered with the rest of the body like any other, so

``v := data.t.deny with input.asset as assets[_]``

iterates: each element of ``assets`` is bound in turn and the expression is
evaluated once per element (and ``input.xs[i]`` binds ``i``). The new
expression carries no modifier and is never negated: its value is evaluated
with the documents and functions in force before the modifiers, and an
undefined value fails the body even when the expression is ``not ...``.

A value that names a function is kept as it is, as OPA keeps it: a builtin
(:class:`~pyrego.compile.base.FuncRef`), a function of the policies, or,
replacing a function, any ground ref under ``data``.

The stage runs on each body before it is ordered (:func:`bind_with_values`,
from :func:`pyrego.compile.body_order.reorder_body`), after the calls nested in negated
expressions are split off. Those keep the expression's modifiers, and OPA,
which rewrites each modifier in place, binds the value once for all of them:
so does this stage (one variable per modifier).
"""

from __future__ import annotations

from collections.abc import Callable

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import (
    Array,
    ArrayCompr,
    Call,
    Object,
    ObjectCompr,
    Ref,
    Scalar,
    SetCompr,
    SetTerm,
    TemplateString,
    Unify,
    Var,
)
from pyrego.compile.base import data_function_name

_ROOTS = frozenset({"data", "input"})


def bind_with_values(body: ast.Body, arity: Callable[[str], int | None]) -> ast.Body:
    """``body`` with each ``with`` value that must be evaluated bound by an
    expression placed before the expression it modifies (``body`` itself when
    there is none). ``arity`` tells functions (builtins and the policies')
    from other names."""
    for e in body:
        if e.with_mods:
            break
    else:
        return body
    out: list[ast.Expr] = []
    # A modifier shared by several expressions (a negation's calls split off
    # before it keep its modifiers) is bound once, for all of them.
    bound: dict[int, Var] = {}
    for e in body:
        if not e.with_mods:
            out.append(e)
            continue
        mods: list[ast.With] = []
        for w in e.with_mods:
            var = bound.get(id(w))
            if var is None:
                if not _needs_binding(w, arity):
                    mods.append(w)
                    continue
                loc = w.value.location
                var = bound[id(w)] = Var(f"__local{len(bound)}__#w@{loc.file}:{loc.row}:{loc.col}", loc)
                out.append(ast.Expr(Unify(var, w.value, loc), False, (), loc))
            mods.append(ast.With(w.target, var, w.location))
        changed = any(m is not w for m, w in zip(mods, e.with_mods))
        out.append(ast.Expr(e.statement, e.negated, tuple(mods), e.location) if changed else e)
    return tuple(out) if bound else body


def _needs_binding(w: ast.With, arity: Callable[[str], int | None]) -> bool:
    value = w.value
    if type(value) is Ref:
        name = _ground_name(value)
        if name is not None:
            if name.startswith("data.") and arity(name) is not None:
                return False  # a function of the policies, named as a replacement
            if name.startswith("data.") and _replaces_function(w.target, arity):
                return False
        return True
    return _evaluated(value)


def _replaces_function(target: ast.Term, arity: Callable[[str], int | None]) -> bool:
    if type(target) is Var:
        return target.name not in _ROOTS
    if type(target) is not Ref:
        return False
    name = _ground_name(target)
    if name is None:
        return False
    head = name.split(".", 1)[0]
    if head == "input":
        return False
    return head != "data" or arity(name) is not None


def _ground_name(ref: Ref) -> str | None:
    """``data.a.b`` for a ref whose head is a variable and whose keys are all
    strings (and ``data.a[1].b``, a function's name, for other constant keys)."""
    if type(ref.head) is not Var:
        return None
    parts = [ref.head.name]
    for p in ref.path:
        if not (type(p) is Scalar and type(p.value) is str):
            # (data.a[1].x: a function named as its calls are)
            return data_function_name(ref.path) if ref.head.name == "data" else None
        parts.append(p.value)
    return ".".join(parts)


def _evaluated(t: object) -> bool:
    """Whether ``t`` holds a ref, a call, a comprehension or a template (OPA's
    ``ContainsRefs || ContainsComprehensions``; ``input`` and ``data`` are refs)."""
    kind = type(t)
    if kind is Scalar:
        return False
    if kind is Var:
        return t.name in _ROOTS  # type: ignore[attr-defined]
    if kind is Array or kind is SetTerm:
        return any(_evaluated(x) for x in t.items)  # type: ignore[attr-defined]
    if kind is Object:
        return any(_evaluated(k) or _evaluated(v) for k, v in t.items)  # type: ignore[attr-defined]
    return kind in (Ref, Call, ArrayCompr, SetCompr, ObjectCompr, TemplateString)
