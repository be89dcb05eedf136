"""Residual queries and support rules as plain AST and as Rego text.

:func:`finalize` turns a residual query (terms of partial evaluation) into
an ``ast.Body``: known values become literals, the query's own variables get
their names back and every other variable a generated one (``__local0__``).
:func:`body_text`, :func:`expr_text` and :func:`term_text` print Rego in
the canonical layout of ``opa fmt`` (operators infix, ``x in xs``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.partial.terms import Known, number_text, to_ast

_INFIX = {
    "equal": "==",
    "neq": "!=",
    "lt": "<",
    "lte": "<=",
    "gt": ">",
    "gte": ">=",
    "plus": "+",
    "minus": "-",
    "mul": "*",
    "div": "/",
    "rem": "%",
    "and": "&",
    "or": "|",
}


class Renamer:
    def __init__(self, names: dict[str, str]) -> None:
        self.names = dict(names)
        self.count = 0

    def var(self, name: str) -> str:
        if name in ("input", "data"):
            return name
        got = self.names.get(name)
        if got is None:
            got = self.names[name] = f"__local{self.count}__"
            self.count += 1
        return got


def finalize(query: list[ast.Expr], names: dict[str, str]) -> ast.Body:
    """A residual query as an AST body; ``names``: global name -> name to print."""
    r = Renamer(names)
    return tuple(finalize_expr(e, r) for e in query)


def finalize_expr(e: ast.Expr, r: Renamer) -> ast.Expr:
    s = e.statement
    if type(s) is ast.Unify:
        stmt: Any = ast.Unify(rename_term(s.lhs, r), rename_term(s.rhs, r), s.location)
    elif type(s) is ast.Assign:
        stmt = ast.Assign(rename_term(s.lhs, r), rename_term(s.rhs, r), s.location)
    else:
        stmt = rename_term(s, r)
    withs = tuple(ast.With(w.target, rename_term(w.value, r), w.location) for w in e.with_mods)
    return ast.Expr(stmt, e.negated, withs, e.location)


def rename_term(t: Any, r: Renamer) -> Any:
    t = to_ast(t) if type(t) is Known else t
    tt = type(t)
    if tt is ast.Var:
        return ast.Var(r.var(t.name), t.location)
    if tt is ast.Ref:
        return ast.Ref(rename_term(t.head, r), tuple(rename_term(p, r) for p in t.path), t.location)
    if tt is ast.Call:
        return ast.Call(t.op, tuple(rename_term(a, r) for a in t.args), t.location, t.op_ref)
    if tt in (ast.Array, ast.SetTerm):
        return tt(tuple(rename_term(x, r) for x in t.items), t.location)
    if tt is ast.Object:
        return ast.Object(tuple((rename_term(k, r), rename_term(v, r)) for k, v in t.items), t.location)
    if tt in (ast.ArrayCompr, ast.SetCompr):
        return tt(rename_term(t.term, r), tuple(finalize_expr(x, r) for x in t.body), t.location)
    if tt is ast.ObjectCompr:
        return ast.ObjectCompr(rename_term(t.key, r), rename_term(t.value, r), tuple(finalize_expr(x, r) for x in t.body), t.location)
    if tt is ast.Every:
        key = rename_term(t.key, r) if t.key is not None else None
        return ast.Every(key, rename_term(t.value, r), rename_term(t.domain, r), tuple(finalize_expr(x, r) for x in t.body), t.location)
    if tt is ast.SomeIn:
        key = rename_term(t.key, r) if t.key is not None else None
        return ast.SomeIn(key, rename_term(t.value, r), rename_term(t.collection, r), t.location)
    if tt is ast.SomeVars:
        return ast.SomeVars(tuple(ast.Var(r.var(v.name), v.location) for v in t.vars), t.location)
    return t


# -- Rego text -------------------------------------------------------------------------------


def body_text(body: ast.Body, sep: str = "; ") -> str:
    return sep.join(expr_text(e) for e in body)


def expr_text(e: ast.Expr) -> str:
    s = e.statement
    if type(s) is ast.Unify:
        text = f"{term_text(s.lhs)} = {term_text(s.rhs)}"
    elif type(s) is ast.Assign:
        text = f"{term_text(s.lhs)} := {term_text(s.rhs)}"
    elif type(s) is ast.Every:
        key = f"{term_text(s.key)}, " if s.key is not None else ""
        text = f"every {key}{term_text(s.value)} in {term_text(s.domain)} {{ {body_text(s.body)} }}"
    elif type(s) is ast.SomeIn:
        key = f"{term_text(s.key)}, " if s.key is not None else ""
        text = f"some {key}{term_text(s.value)} in {term_text(s.collection)}"
    elif type(s) is ast.SomeVars:
        text = "some " + ", ".join(v.name for v in s.vars)
    else:
        text = term_text(s)
    if e.negated:
        text = "not " + text
    for w in e.with_mods:
        text += f" with {term_text(w.target)} as {term_text(w.value)}"
    return text


# Binding strength of infix operators (higher binds tighter), as Rego parses them.
_PRECEDENCE = {"or": 1, "and": 2, "internal.member_2": 3, "internal.member_3": 3}
_PRECEDENCE.update({op: 4 for op in ("equal", "neq", "lt", "lte", "gt", "gte")})
_PRECEDENCE.update({"plus": 5, "minus": 5, "mul": 6, "div": 6, "rem": 6})


def term_text(t: Any, parent: int = 0, right: bool = False) -> str:
    """``t`` as Rego; ``parent``: the precedence of the operator it is an operand
    of (parentheses where it binds less tightly, or as tightly on the right)."""
    t = to_ast(t) if type(t) is Known else t
    tt = type(t)
    if tt is ast.Scalar:
        return scalar_text(t)
    if tt is ast.Var:
        return t.name
    if tt is ast.Ref:
        return _ref_text(t)
    if tt is ast.Call:
        op = t.op
        prec = _PRECEDENCE.get(op, 0)
        if op in _INFIX and len(t.args) == 2:
            text = f"{term_text(t.args[0], prec)} {_INFIX[op]} {term_text(t.args[1], prec, True)}"
        elif op == "internal.member_2" and len(t.args) == 2:
            text = f"{term_text(t.args[0], prec)} in {term_text(t.args[1], prec, True)}"
        elif op == "internal.member_3" and len(t.args) == 3:
            text = f"{term_text(t.args[0], prec)}, {term_text(t.args[1], prec)} in {term_text(t.args[2], prec, True)}"
        else:
            return f"{op}({', '.join(term_text(a) for a in t.args)})"
        if parent and (prec < parent or (prec == parent and right)):
            return f"({text})"
        return text
    if tt is ast.Array:
        return "[" + ", ".join(term_text(x) for x in t.items) + "]"
    if tt is ast.SetTerm:
        return "{" + ", ".join(term_text(x) for x in t.items) + "}" if t.items else "set()"
    if tt is ast.Object:
        return "{" + ", ".join(f"{term_text(k)}: {term_text(v)}" for k, v in t.items) + "}"
    if tt is ast.ArrayCompr:
        return f"[{term_text(t.term)} | {body_text(t.body)}]"
    if tt is ast.SetCompr:
        return f"{{{term_text(t.term)} | {body_text(t.body)}}}"
    if tt is ast.ObjectCompr:
        return f"{{{term_text(t.key)}: {term_text(t.value)} | {body_text(t.body)}}}"
    return str(t)


def scalar_text(t: ast.Scalar) -> str:
    """A scalar term as Rego text (a number as written where the text was kept)."""
    v = t.value
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if type(v) in (int, float, Decimal):
        return number_text(v, t.text)
    return json.dumps(v, ensure_ascii=False)


def _ref_text(r: ast.Ref) -> str:
    head = r.head
    out = head.name if type(head) is ast.Var else term_text(head)
    for p in r.path:
        if type(p) is ast.Scalar and type(p.value) is str and _is_identifier(p.value):
            out += "." + p.value
        else:
            out += "[" + term_text(p) + "]"
    return out


def _is_identifier(s: str) -> bool:
    from pyrego.parse.lexer import ALL_KEYWORDS

    return s.isidentifier() and s.isascii() and s not in ALL_KEYWORDS


def module_text(package: tuple[str, ...], rules: list[ast.Rule]) -> str:
    """A support module as Rego source."""
    lines = ["package " + ".".join(package), ""]
    for rule in rules:
        lines.append(rule_text(rule))
    return "\n".join(lines) + "\n"


def rule_text(rule: ast.Rule) -> str:
    head = rule.head
    name = term_text(head.ref)
    if head.args is not None:
        name += "(" + ", ".join(term_text(a) for a in head.args) + ")"
    if head.key is not None and head.value is None:
        text = f"{name} contains {term_text(head.key)}"
    elif head.value is not None:
        text = f"{name} := {term_text(head.value)}"
    else:
        text = name
    if rule.default:
        return "default " + text
    body = rule.body
    if len(body) == 1 and type(body[0].statement) is ast.Scalar and body[0].statement.value is True and not body[0].negated:
        return text
    return text + " if {\n" + "".join("\t" + line_text(e) + "\n" for e in body) + "}"


def line_text(e: ast.Expr) -> str:
    """``e`` on a line of its own in a body: an expression starting with a
    minus sign is put in parentheses, since Rego reads ``a < 1`` followed by
    a line ``-1 <= b`` as one expression, ``a < 1 - 1 <= b``."""
    text = expr_text(e)
    if not text.startswith("-"):
        return text
    s = e.statement
    if type(s) is ast.Unify and not e.with_mods:
        # A unification cannot stand in parentheses; its sides swap freely.
        swapped = f"{term_text(s.rhs)} = {term_text(s.lhs)}"
        if not swapped.startswith("-"):
            return swapped
    return f"({text})"
