"""OPA's check of template string parts: ``var k is undeclared``.

OPA (its RewriteTemplateStrings stage, after the local variable rewrite and
before the void call, print and safety checks) evaluates each part of a
template string that is more than a variable or a constant (``m[k]``,
``count(k)``, ``[k]``, a nested template string) in a closure of its own, so
that an undefined part reads ``<undefined>``. Every variable of such a part,
outside comprehensions in it, must be one the enclosing body binds, in any
order (``y := $"{m[k]}"; k = 1`` is accepted), an argument of the function,
or one an enclosing body binds; otherwise it is ``rego_compile_error: var k
is undeclared`` at the part (a call part has no location in OPA's message).
``some k`` alone, ``k == 1``, ``not k = 1`` and a comprehension's own ``k``
bind nothing here. A part that is a lone variable is left to the safety
check (``var k is unsafe``).
"""

from __future__ import annotations

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Assign, Call, Every, TemplateString
from pyrego.compile.base import CompiledTree
from pyrego.compile.safety import (
    ArityFn,
    closures_in,
    rules_with_arguments,
    shown_name,
    stmt_outputs,
    stmt_terms,
    term_vars,
)
from pyrego.errors import RegoCompileError, RegoError


def template_part_errors(tree: CompiledTree) -> list[RegoError]:
    """Every ``var x is undeclared`` of the program's template strings."""
    errors: list[RegoError] = []
    arity = tree.arity
    for rule, safe in rules_with_arguments(tree):
        safe |= _body_outputs(rule.body, safe, arity)
        errors += _body_errors(rule.body, safe, arity)
        for term in (rule.head.key, rule.head.value, *rule.head.ref.path):
            if term is not None:
                errors += _term_errors(term, safe, arity)
    return errors


def query_template_part_errors(body: ast.Body, arity: ArityFn) -> list[RegoError]:
    """The ``var x is undeclared`` errors of a (resolved) query's template strings."""
    return _body_errors(body, _body_outputs(body, set(), arity), arity)


def holds_template(body: ast.Body) -> bool:
    """Whether a (query) body has a template string anywhere."""
    return any(_has_template(t) for expr in body for t in _expr_terms(expr))


def _has_template(term: ast.Term) -> bool:
    if type(term) is TemplateString:
        return True
    if isinstance(term, (ast.Scalar, ast.Var)):
        return False
    if isinstance(term, ast.Ref):
        return _has_template(term.head) or any(_has_template(p) for p in term.path)
    if isinstance(term, Call):
        return any(_has_template(a) for a in term.args)
    if isinstance(term, (ast.Array, ast.SetTerm)):
        return any(_has_template(x) for x in term.items)
    if isinstance(term, ast.Object):
        return any(_has_template(k) or _has_template(v) for k, v in term.items)
    if isinstance(term, (ast.ArrayCompr, ast.SetCompr)):
        return _has_template(term.term) or holds_template(term.body)
    if isinstance(term, ast.ObjectCompr):
        return _has_template(term.key) or _has_template(term.value) or holds_template(term.body)
    return False


def _expr_terms(expr: ast.Expr) -> list[ast.Term]:
    stmt = expr.statement
    terms = [t for t in stmt_terms(stmt) if t is not None]
    if type(stmt) is Every:
        terms += [t for e in stmt.body for t in _expr_terms(e)]
    return terms + [w.value for w in expr.with_mods]


def _body_outputs(body: ast.Body, safe: set[str], arity: ArityFn) -> set[str]:
    """What ``body`` binds in any order, given ``safe`` (OPA's outputVarsForBody)."""
    out = set(safe)
    changed = True
    while changed:
        changed = False
        for expr in body:
            if expr.negated:
                continue
            stmt = expr.statement
            new = stmt_outputs(stmt, out, arity)
            if type(stmt) is Assign:
                term_vars(stmt.lhs, new)
            if not new <= out:
                out |= new
                changed = True
    return out


def _body_errors(body: ast.Body, safe: set[str], arity: ArityFn) -> list[RegoError]:
    errors: list[RegoError] = []
    for expr in body:
        stmt = expr.statement
        if type(stmt) is Every:
            inner = set(safe)
            term_vars(stmt.value, inner)
            if stmt.key is not None:
                term_vars(stmt.key, inner)
            inner |= _body_outputs(stmt.body, inner, arity)
            errors += _term_errors(stmt.domain, safe, arity)
            errors += _body_errors(stmt.body, inner, arity)
            continue
        for term in stmt_terms(stmt):
            if term is not None:
                errors += _term_errors(term, safe, arity)
        for w in expr.with_mods:
            errors += _term_errors(w.value, safe, arity)
    return errors


def _term_errors(term: ast.Term, safe: set[str], arity: ArityFn) -> list[RegoError]:
    """The errors of the template strings in ``term`` (closures checked with what their bodies bind)."""
    errors: list[RegoError] = []
    for template in _templates_in(term, []):
        errors += _part_errors(template, safe, arity)
    for closure in closures_in(term, []):
        inner = _body_outputs(closure.body, safe, arity)  # type: ignore[union-attr]
        errors += _body_errors(closure.body, inner, arity)  # type: ignore[union-attr]
        if isinstance(closure, ast.ObjectCompr):
            errors += _term_errors(closure.key, inner, arity) + _term_errors(closure.value, inner, arity)
        else:
            errors += _term_errors(closure.term, inner, arity)  # type: ignore[union-attr]
    return errors


def _part_errors(template: TemplateString, safe: set[str], arity: ArityFn) -> list[RegoError]:
    errors: list[RegoError] = []
    for part in template.parts:
        if isinstance(part, str) or isinstance(part, (ast.Scalar, ast.Var)):
            continue
        inner = [e for t in _templates_in(part, []) for e in _part_errors(t, safe, arity)]
        names = sorted(shown_name(n) for n in _part_vars(part, safe, arity) if n not in safe)
        if inner:
            where = inner[0].location  # (OPA: a nested template string's errors come first, there)
        else:
            where = None if type(part) is Call else part.location  # (OPA's message has no location for a call)
        errors += [RegoCompileError(f"var {name} is undeclared", where) for name in names]
        errors += inner
    return errors


def _part_vars(part: ast.Term, safe: set[str], arity: ArityFn) -> set[str]:
    """The variables of a part as OPA checks them: a nested template string
    is by then a call whose parts are closures, unless its own check failed."""
    if type(part) is TemplateString:
        if not _part_errors(part, safe, arity):
            return set()
        out: set[str] = set()
        for p in part.parts:
            if not isinstance(p, str) and type(p) is not ast.Var:
                out |= _part_vars(p, safe, arity)
        return out
    if _templates_in(part, []):
        out = set()
        for t in _subterms(part):
            out |= _part_vars(t, safe, arity)
        return out
    return term_vars(part, set())


def _subterms(term: ast.Term) -> list[ast.Term]:
    if isinstance(term, ast.Ref):
        return [term.head, *term.path]
    if isinstance(term, Call):
        return list(term.args)
    if isinstance(term, (ast.Array, ast.SetTerm)):
        return list(term.items)
    if isinstance(term, ast.Object):
        return [x for kv in term.items for x in kv]
    return [term]


def _templates_in(term: ast.Term, out: list[TemplateString]) -> list[TemplateString]:
    """The template strings in ``term``, outside closures and outside other template strings."""
    if type(term) is TemplateString:
        out.append(term)
    elif isinstance(term, ast.Ref):
        _templates_in(term.head, out)
        for p in term.path:
            _templates_in(p, out)
    elif isinstance(term, Call):
        for a in term.args:
            _templates_in(a, out)
    elif isinstance(term, (ast.Array, ast.SetTerm)):
        for x in term.items:
            _templates_in(x, out)
    elif isinstance(term, ast.Object):
        for k, v in term.items:
            _templates_in(k, out)
            _templates_in(v, out)
    return out
