"""What a residual query must look like to become a filter (OPA's post-PE checks).

Every expression of every residual query must be a comparison, ``in`` or
string-prefix/suffix/infix test between a column (``input.<table>.<column>``)
and a known value (or another column, where the target allows it),
possibly negated where the target allows ``not``. Anything else is refused
with OPA's ``pe_fragment_error`` messages, e.g. ``invalid statement
"input.tickets.q"`` for a bare column used as a condition, ``gt: nested call
operand: count(input.tickets.tags)`` for a function of a column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.filters.constraints import Constraint
from pyrego.filters.opa_text import expr_string, ref_string, term_string
from pyrego.partial import SupportModule
from pyrego.partial.terms import Known

CODE = "pe_fragment_error"

_COMPARISONS = ("eq", "neq", "lt", "lte", "gt", "gte")
_KNOWN_FIRST = ("startswith", "endswith", "contains", "internal.member_2")
_REPLACEMENTS = {"internal.member_2": "in"}


@dataclass
class FragmentError:
    """One refusal: OPA's ``pe_fragment_error`` with its location and details."""

    location: ast.Location | None
    message: str
    details: str | None = None

    def __str__(self) -> str:
        prefix = ""
        loc = self.location
        if loc is not None and (loc.row or loc.col or loc.file):
            prefix = f"{loc.file}:{loc.row}" if loc.file else f"{loc.row}:{loc.col}"
        msg = f"{CODE}: {self.message}"
        if prefix:
            msg = f"{prefix}: {msg}"
        if self.details is not None:
            msg += "\n\t" + self.details
        return msg


def errors_text(errors: list[FragmentError]) -> str:
    """Several errors as OPA joins them (``N errors occurred:``)."""
    if len(errors) == 1:
        return f"1 error occurred: {errors[0]}"
    return f"{len(errors)} errors occurred:\n" + "\n".join(str(e) for e in errors)


def check(queries: list[ast.Body], constraint: Constraint, shorts: set[str], support: list[SupportModule]) -> list[FragmentError]:
    """The refusals for ``queries`` (empty: they can be translated)."""
    errors: list[FragmentError] = []
    for query in queries:
        for e in query:
            for chk in (_check_call, _check_builtins):
                err = chk(e, constraint, shorts, support)
                if err is not None:
                    errors.append(err)
    return errors


def operator(e: ast.Expr) -> str | None:
    """The operator of a call expression (``eq`` for ``a = b``), None for other expressions."""
    s = e.statement
    if type(s) is ast.Unify:
        return "eq"
    if type(s) is ast.Call:
        return s.op
    return None


def operands(e: ast.Expr) -> tuple[Any, ...]:
    s = e.statement
    if type(s) is ast.Unify:
        return (s.lhs, s.rhs)
    if type(s) is ast.Call:
        return s.args
    return ()


def _loc(e: ast.Expr) -> ast.Location | None:
    loc = e.location
    return loc if (loc.row or loc.col or loc.file) else None


def _check_call(e: ast.Expr, c: Constraint, shorts: set[str], support: list[SupportModule]) -> FragmentError | None:
    is_call = operator(e) is not None
    if e.negated:
        if not is_call:
            return FragmentError(_loc(e), '"not" not permitted')
        err = c.feature_error("not")
        if err is None:
            return None
        return FragmentError(_loc(e), f'"not" not permitted: {err}')
    if is_call:
        return None
    s = e.statement
    if type(s) is ast.Every:
        return FragmentError(_loc(e), '"every" not permitted')
    if e.with_mods:
        return FragmentError(_loc(e), '"with" not permitted')
    if type(s) is ast.Ref and type(s.head) is ast.Var and s.head.name == "data":
        if s.path and type(s.path[0]) is ast.Scalar and s.path[0].value == "partial":
            last = s.path[-1]
            loc = last.location if getattr(last, "location", None) and (last.location.row or last.location.file) else _loc(e)
            return FragmentError(loc, _details(s, support))
        return FragmentError(_loc(e), f'invalid data reference "{expr_string(e)}"', f'has rule "{ref_string(s)}" an `else`?')
    text = expr_string(e)
    return FragmentError(_loc(e), f'invalid statement "{text}"', f"try `{text} != false`")


def _details(ref: ast.Ref, support: list[SupportModule]) -> str:
    path = tuple(p.value for p in ref.path if type(p) is ast.Scalar)
    for module in support:
        count = 0
        for rule in module.rules:
            head = rule.head.ref
            name = head.head.name if type(head.head) is ast.Var else ""
            if module.package + (name,) != path:
                continue
            count += 1
            shown = "data." + ".".join(str(p) for p in path[1:])
            if rule.default:
                return f"use of default rule in {shown}"
            if count > 1:
                return f"use of multi-value rule in {shown}"
    return ""


def _check_builtins(e: ast.Expr, c: Constraint, shorts: set[str], support: list[SupportModule]) -> FragmentError | None:
    if e.with_mods:
        return None
    op = operator(e)
    if op is None:
        return None
    loc = _loc(e)
    must_be_first = False
    two_refs_ok = False
    if op in _COMPARISONS:
        two_refs_ok = True
    elif op in _KNOWN_FIRST:
        must_be_first = True
    elif op == "internal.member_3":
        return FragmentError(loc, 'invalid use of "... in ..."')
    elif op.startswith("data."):
        return FragmentError(loc, f'invalid data reference "{expr_string(e)}"', f'has function "{op}(...)" an `else`?')
    else:
        return FragmentError(loc, f"invalid builtin `{op}`")
    err = c.builtin_error(op)
    if err is not None:
        return FragmentError(loc, f"invalid builtin `{_REPLACEMENTS.get(op, op)}`: {err}")
    ops = operands(e)
    for i in range(2):
        t = ops[i] if i < len(ops) else None
        bad = _check_operand(op, t, loc, shorts)
        if bad is not None:
            return bad
    refs = sum(1 for t in ops[:2] if type(t) is ast.Ref)
    if refs == 2:
        err = c.feature_error("field-ref")
        if err is not None:
            return FragmentError(loc, f"reference to field: {err}")
    if must_be_first:
        if type(ops[0]) is not ast.Ref:
            return FragmentError(loc, f"rhs of {op} must be known")
        return None
    if any(_is_scalar(t) for t in ops[:2]):
        return None
    if op == "eq" and refs == 1:
        for t in ops[:2]:
            if type(t) in (ast.Var, ast.Ref):
                err = c.feature_error("existence-ref")
                if err is not None:
                    return FragmentError(loc, f"existence of field: {err}")
            else:
                return FragmentError(loc, "both rhs and lhs non-scalar/non-ground")
        return None
    if not two_refs_ok or refs != 2:
        return FragmentError(loc, "both rhs and lhs non-scalar/non-ground")
    return None


def _check_operand(op: str, t: Any, loc: ast.Location | None, shorts: set[str]) -> FragmentError | None:
    if t is None:
        return FragmentError(loc, f"{op}: missing operand")
    if type(t) is ast.Call:
        return FragmentError(loc, f"{op}: nested call operand: {term_string(t)}")
    if type(t) is ast.Ref:
        if type(t.head) is ast.Var and t.head.name == "input":
            if len(t.path) == 2:
                return None
            if len(t.path) == 1 and type(t.path[0]) is ast.Scalar and t.path[0].value in shorts:
                return None
        return FragmentError(loc, f"{op}: invalid ref operand: {ref_string(t)}")
    return None


def _is_scalar(t: Any) -> bool:
    if type(t) is Known:
        return type(t.value) in (str, int, float, bool) or t.value is None or type(t.value).__name__ == "Decimal"
    return type(t) is ast.Scalar
