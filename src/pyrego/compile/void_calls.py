"""OPA's ``CheckVoidCalls``: a print call (which has no value) used as one.

The error names the call as OPA's compiler holds it at that stage: names
resolved (``data.p.q``, ``data.p.f(1)``), operators as calls (``plus(1, 2)``,
``minus(0, x)``, ``internal.member_2(1, xs)``), a template string as
``internal.template_string([...])``, local variables renamed ``__localN__``
(comprehension bodies with ``=`` for ``:=``), strings quoted as Go quotes
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

from pyrego.ast import nodes as ast
from pyrego.ast.pretty import go_quote
from pyrego.errors import RegoError, RegoTypeError

if TYPE_CHECKING:
    from pyrego.compile.base import CompiledTree

__all__ = ["opa_term_text", "void_call_errors"]

_PRINT_CALLS = ("print", "internal.print")


def void_call_errors(modules: Sequence[ast.Module], tree: CompiledTree) -> list[RegoError]:
    """The errors for print calls used as values (an operand or a rule's
    value), in module and rule order (run where print is called at all)."""
    from pyrego.typecheck.arity import calls_in_rule  # (the walk, only then)

    found: list[tuple[ast.Rule, ast.Call]] = []
    for m in modules:
        for rule in m.rules:
            for call, nested in calls_in_rule(rule):
                if nested and call.op in _PRINT_CALLS:
                    found.append((rule, call))
    if not found:
        return []
    from pyrego.typecheck.some_vars import LocalVarNumbers

    numbers = LocalVarNumbers(tree)
    resolved = _resolved_calls(tree)

    def name(v: str) -> str:
        if v.startswith("template:"):
            return numbers.template_part_by_id(int(v[9:])) or "_"
        return numbers.shown_name(v)

    def key(stmt: ast.SomeIn) -> str:
        return numbers.renamed_key(stmt) or "_"

    errors: list[RegoError] = []
    for _, call in found:
        shown = resolved.get((call.location.file, call.location.row, call.location.col), call)
        errors.append(RegoTypeError(f"{opa_term_text(shown, name, key)} used as value", call.location))
    return errors


def _resolved_calls(tree: CompiledTree) -> dict[tuple[str, int, int], ast.Call]:
    """The print calls of the resolved rules, by location."""
    from pyrego.typecheck.arity import calls_in_rule

    out: dict[tuple[str, int, int], ast.Call] = {}
    for node in tree.nodes.values():
        for rule in node.rules + ([node.default] if node.default is not None else []):
            for call, _ in calls_in_rule(rule):
                if call.op in _PRINT_CALLS:
                    out[(call.location.file, call.location.row, call.location.col)] = call
    return out


def opa_term_text(t: Any, name: Callable[[str], str], key: Callable[[ast.SomeIn], str] | None = None) -> str:
    """A term as OPA's ``String()`` writes it; ``name`` names the variables,
    ``key`` the key OPA makes for a ``some x in xs`` in a comprehension."""
    tt = type(t)
    if tt is ast.Scalar:
        v = t.value
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, str):
            return go_quote(v)
        return t.text if t.text is not None else str(v)
    if tt is ast.Var:
        return name(t.name)
    if tt is ast.Ref:
        head = t.head
        out = opa_term_text(head, name, key)
        for p in t.path:
            if type(p) is ast.Scalar and isinstance(p.value, str) and _identifier(p.value):
                out += "." + p.value
            else:
                out += "[" + opa_term_text(p, name, key) + "]"
        return out
    if tt is ast.Call:
        return f"{t.op}(" + ", ".join([opa_term_text(a, name, key) for a in t.args]) + ")"
    if tt is ast.Array:
        return "[" + ", ".join([opa_term_text(x, name, key) for x in t.items]) + "]"
    if tt is ast.SetTerm:
        return "{" + ", ".join([opa_term_text(x, name, key) for x in t.items]) + "}" if t.items else "set()"
    if tt is ast.Object:
        return "{" + ", ".join([f"{opa_term_text(k, name, key)}: {opa_term_text(v, name, key)}" for k, v in t.items]) + "}"
    if tt is ast.TemplateString:
        parts = [go_quote(p) if isinstance(p, str) else _template_part(p, name, key) for p in t.parts]
        return "internal.template_string([" + ", ".join(parts) + "])"
    if tt is ast.ArrayCompr:
        return f"[{opa_term_text(t.term, name, key)} | {_body_text(t.body, name, key)}]"
    if tt is ast.SetCompr:
        return "{" + f"{opa_term_text(t.term, name, key)} | {_body_text(t.body, name, key)}" + "}"
    if tt is ast.ObjectCompr:
        return "{" + f"{opa_term_text(t.key, name, key)}: {opa_term_text(t.value, name, key)} | {_body_text(t.body, name, key)}" + "}"
    return str(t)


def _template_part(p: Any, name: Callable[[str], str], key: Callable[[ast.SomeIn], str] | None) -> str:
    """A template string's part: a constant as it is, any other term as the
    set comprehension OPA makes of it (its variable named by ``name`` from
    the part's ``template:`` id)."""
    text = opa_term_text(p, name, key)
    if type(p) is ast.Scalar:
        return text
    var = name(f"template:{id(p)}")
    return "{" + f"{var} | {var} = {text}" + "}"


def _body_text(body: ast.Body, name: Callable[[str], str], key: Callable[[ast.SomeIn], str] | None) -> str:
    # (``some x`` declarations are gone once the variables are renamed)
    return "; ".join([_expr_text(e, name, key) for e in body if type(e.statement) is not ast.SomeVars])


def _expr_text(e: ast.Expr, name: Callable[[str], str], key: Callable[[ast.SomeIn], str] | None) -> str:
    s: Any = e.statement
    st = type(s)
    if st is ast.Assign or st is ast.Unify:
        text = f"{opa_term_text(s.lhs, name, key)} = {opa_term_text(s.rhs, name, key)}"
    elif st is ast.SomeIn:
        k = opa_term_text(s.key, name, key) if s.key is not None else key(s) if key is not None else "_"
        text = f"{opa_term_text(s.value, name, key)} = {opa_term_text(s.collection, name, key)}[{k}]"
    elif st is ast.Every:
        text = "every"
    else:
        text = opa_term_text(s, name, key)
    if e.negated:
        text = "not " + text
    for w in e.with_mods:
        text += f" with {opa_term_text(w.target, name, key)} as {opa_term_text(w.value, name, key)}"
    return text


def _identifier(text: str) -> bool:
    from pyrego.parse.lexer import ALL_KEYWORDS

    if not text or not (text[0].isalpha() or text[0] == "_") or text in ALL_KEYWORDS:
        return False
    return all(c.isalnum() or c == "_" for c in text) and text.isascii()
