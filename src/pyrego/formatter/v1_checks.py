"""The checks OPA makes before writing code as v1 (``opa fmt``, ``opa fmt
--v0-v1``): no import may shadow another, no rule, argument or variable may
shadow ``input`` or ``data``, no deprecated builtin may be called (v1 has
none), and no rule may be named after a v1 keyword."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from pyrego.ast import nodes as ast
from pyrego.compile.checks import DEPRECATED_BUILTINS  # (the compiler's list: Rego v1 has none of them)
from pyrego.errors import Location, RegoCompileError, RegoError, RegoParseError, RegoTypeError

__all__ = ["check_v1_compatible", "DEPRECATED_BUILTINS"]

_V1_ONLY_KEYWORDS = ("if", "contains", "in", "every")


def check_v1_compatible(module: ast.Module, text: str) -> list[RegoError]:
    """The problems that keep a v0 module from being written as v1."""
    lines = text.split("\n")

    def line(loc: Location) -> str | None:
        return lines[loc.row - 1].rstrip("\r") if 0 < loc.row <= len(lines) else None

    errors: list[RegoError] = []

    def compile_error(msg: str, loc: Location) -> None:
        errors.append(RegoCompileError(msg, loc, source_line=line(loc)))

    # OPA's order: duplicate imports, shadowed root documents, deprecated builtins, rule names
    seen: dict[str, ast.Import] = {}
    for imp in module.imports:
        name = _import_name(imp)
        if name in seen:
            compile_error(f"import must not shadow {_import_text(seen[name])}", imp.location)
        else:
            seen[name] = imp
    for rule in module.rules:
        name = rule.head.ref.head.name if isinstance(rule.head.ref.head, ast.Var) else ""
        if name in _ROOTS:
            compile_error(f"rules must not shadow {name} (use a different rule name)", rule.location)
        for arg in rule.head.args or ():
            if isinstance(arg, ast.Ref) and not arg.path and isinstance(arg.head, ast.Var) and arg.head.name in _ROOTS:
                compile_error(f"args must not shadow {arg.head.name} (use a different variable name)", arg.location)
    for expr in _exprs(module.rules):
        stmt = expr.statement
        if isinstance(stmt, ast.Assign) and isinstance(stmt.lhs, ast.Ref) and not stmt.lhs.path:
            var = stmt.lhs.head
            if isinstance(var, ast.Var) and var.name in _ROOTS:
                compile_error(f"variables must not shadow {var.name} (use a different variable name)", expr.location)
    calls: list[ast.Call] = []
    for rule in module.rules:
        calls.extend(_deprecated_calls(rule))
    calls.sort(key=lambda c: (c.location.row, c.location.col))
    for call in calls:
        msg = f"deprecated built-in function calls in expression: {call.op}"
        errors.append(RegoTypeError(msg, call.location, source_line=line(call.location)))
    for rule in module.rules:
        head = rule.head
        name = head.ref.head.name if isinstance(head.ref.head, ast.Var) else ""
        if not head.ref.path and name in _V1_ONLY_KEYWORDS:
            msg = f"{name} keyword cannot be used for rule name"
            errors.append(RegoParseError(msg, rule.location, source_line=line(rule.location)))
    return errors


_ROOTS = ("data", "input")


def _import_name(imp: ast.Import) -> str:
    """What an import binds: its alias, else its path's last name."""
    if imp.alias:
        return imp.alias
    last = imp.path.path[-1] if imp.path.path else imp.path.head
    if isinstance(last, ast.Var):
        return last.name
    return str(last.value) if isinstance(last, ast.Scalar) else ""


def _import_text(imp: ast.Import) -> str:
    text = "import " + ast.ref_to_string(imp.path)
    return text + f" as {imp.alias}" if imp.alias else text


def _exprs(node: object) -> Iterator[ast.Expr]:
    """Every expression in a node, nested bodies included, in source order."""
    stack = [node]
    while stack:
        x = stack.pop()
        if x is None or isinstance(x, (str, int, float, bool, Decimal, Location)):
            continue
        if isinstance(x, ast.Expr):
            yield x
            stack.extend(reversed([x.statement, *x.with_mods]))
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif hasattr(x, "__slots__"):
            stack.extend(reversed([getattr(x, f) for f in x.__slots__ if f != "location"]))  # type: ignore[attr-defined]


def _deprecated_calls(rule: ast.Rule) -> Iterator[ast.Call]:
    r: ast.Rule | None = rule
    while r is not None:
        h = r.head
        nodes: list[object] = [h.ref, h.key, h.value, *(h.args or ()), *r.body]
        for node in nodes:
            for call in _calls(node):
                if call.op in DEPRECATED_BUILTINS and call.op_ref is not None:
                    yield call
        r = r.else_


def _calls(node: object) -> Iterator[ast.Call]:
    """Every call in a node (terms, expressions, bodies), depth first."""
    stack = [node]
    while stack:
        x = stack.pop()
        if x is None or isinstance(x, (str, int, float, bool, Decimal, Location)):
            continue
        if isinstance(x, ast.Call):
            yield x
            stack.extend(reversed(x.args))
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif isinstance(x, ast.Expr):
            stack.extend(reversed([x.statement, *x.with_mods]))
        elif hasattr(x, "__slots__"):
            stack.extend(reversed([getattr(x, f) for f in x.__slots__ if f != "location"]))  # type: ignore[attr-defined]
