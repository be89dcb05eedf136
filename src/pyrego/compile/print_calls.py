"""OPA's check of ``print`` operands: each variable must be bound before the call.

OPA rewrites every ``print(a, b)`` so that each operand is evaluated in a
comprehension of its own (an undefined operand prints as ``<undefined>``
instead of stopping the body). Before it does, it requires every variable of
an operand to be bound by the expressions written before the call, in the
order written (no reordering, unlike the safety check), or to be an argument
of the function: ``print(x); x = input.a`` and ``some x; print(x)`` are
``rego_compile_error: var x is undeclared``, as is a wildcard (``var _ is
undeclared``). Comprehension bodies and ``every`` bodies are checked with
what their enclosing body has bound before them; variables inside a
comprehension written as an operand are left to the safety check.

OPA runs this check only where print statements are enabled; pyrego always
runs print (its output goes to :meth:`pyrego.Engine.take_prints`), so it
always checks, as ``opa eval``, ``opa test`` and OPA's server do.
"""

from __future__ import annotations

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Assign, Call, Every
from pyrego.compile.base import CompiledTree
from pyrego.compile.safety import (
    ArityFn,
    closures_in,
    is_generated,
    ref_outputs,
    rules_with_arguments,
    shown_name,
    stmt_outputs,
    stmt_terms,
    term_vars,
)
from pyrego.errors import RegoCompileError, RegoError

_PRINT = "print"


def print_operand_errors(tree: CompiledTree) -> list[RegoError]:
    """Every ``var x is undeclared`` of the program's rules (the first print
    call with such variables in each body, as OPA reports them)."""
    errors: list[RegoError] = []
    arity = tree.arity
    for rule, args in rules_with_arguments(tree):
        for term in (rule.head.key, rule.head.value, *rule.head.ref.path):
            for closure in closures_in(term, []):
                errors += _body_errors(_closure_body(closure), set(args), arity)
        errors += _body_errors(rule.body, args, arity)
    return errors


def query_print_operand_errors(body: ast.Body, arity: ArityFn) -> list[RegoError]:
    """The ``var x is undeclared`` errors of a (resolved) query."""
    return _body_errors(body, set(), arity)


def _closure_body(closure: ast.Term | Every) -> ast.Body:
    return closure.body  # type: ignore[union-attr]


def _expr_outputs(expr: ast.Expr, bound: set[str], arity: ArityFn) -> set[str]:
    """What ``expr`` binds after ``bound`` (OPA's outputVarsForExpr, as print's check asks it)."""
    if expr.negated:
        return set()
    with_vars: set[str] = set()
    for w in expr.with_mods:
        term_vars(w.value, with_vars)
    if not with_vars <= bound:
        return set()
    stmt = expr.statement
    if type(stmt) is Every:
        return ref_outputs(stmt.domain, bound, set(), arity)
    out = stmt_outputs(stmt, bound, arity)
    if type(stmt) is Assign:
        # (OPA: what ``:=`` declares counts as bound here, whatever its
        # right side; the safety check reports an unsafe right side)
        term_vars(stmt.lhs, out)
    return out


def _bound_before(body: ast.Body, bound: set[str], arity: ArityFn) -> list[set[str]]:
    """For each expression of ``body``, what the expressions written before it bind (and ``bound``)."""
    befores = []
    out = set(bound)
    for expr in body:
        befores.append(out)
        out = out | _expr_outputs(expr, out, arity)
    return befores


def _body_errors(body: ast.Body, bound: set[str], arity: ArityFn) -> list[RegoError]:
    befores = _bound_before(body, bound, arity)
    # Closures first, each with what the body bound before it (as OPA: a
    # later closure's result replaces an earlier one's).
    for expr, before in zip(body, befores):
        stmt = expr.statement
        closures: list[ast.Term | Every] = []
        for term in stmt_terms(stmt):
            closures_in(term, closures)  # type: ignore[arg-type]
        for w in expr.with_mods:
            closures_in(w.value, closures)  # type: ignore[arg-type]
        if type(stmt) is Every:
            closures.append(stmt)
        if not closures:
            continue
        safe = set(before)
        errors: list[RegoError] = []
        for closure in closures:
            if type(closure) is Every:
                term_vars(closure.value, safe)
                if closure.key is not None:
                    term_vars(closure.key, safe)
            errors = _body_errors(_closure_body(closure), safe, arity)
        if errors:
            return errors
    for expr, before in zip(body, befores):
        stmt = expr.statement
        if type(stmt) is not Call or stmt.op != _PRINT:
            continue
        errors = []
        for arg in stmt.args:
            names = sorted(shown_name(n) for n in term_vars(arg, set()) if n not in before and not is_generated(n))
            errors += [RegoCompileError(f"var {name} is undeclared", arg.location) for name in names]
        if errors:
            return errors
    return []

