"""Terms and expressions as OPA's ``String()`` writes them (for refusal messages).

Calls in prefix form (``count(input.tickets.tags)``), unification infix
(``input.tickets.a = 1``), refs with ``.name`` or ``[term]`` parts.
"""

from __future__ import annotations

import re
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.partial.output import scalar_text
from pyrego.partial.terms import Known, to_ast

_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def term_string(t: Any) -> str:
    if type(t) is Known:
        t = to_ast(t)
    tt = type(t)
    if tt is ast.Scalar:
        return scalar_text(t)
    if tt is ast.Var:
        return t.name
    if tt is ast.Ref:
        return ref_string(t)
    if tt is ast.Call:
        return f"{t.op}({', '.join(term_string(a) for a in t.args)})"
    if tt is ast.Array:
        return "[" + ", ".join(term_string(x) for x in t.items) + "]"
    if tt is ast.SetTerm:
        return "{" + ", ".join(term_string(x) for x in t.items) + "}" if t.items else "set()"
    if tt is ast.Object:
        return "{" + ", ".join(f"{term_string(k)}: {term_string(v)}" for k, v in t.items) + "}"
    from pyrego.partial.output import term_text

    return term_text(t)


def ref_string(r: ast.Ref) -> str:
    head = r.head
    out = head.name if type(head) is ast.Var else term_string(head)
    for p in r.path:
        if type(p) is ast.Scalar and type(p.value) is str and _VAR_NAME.match(p.value):
            out += "." + p.value
        else:
            out += "[" + term_string(p) + "]"
    return out


def expr_string(e: ast.Expr) -> str:
    s = e.statement
    if type(s) is ast.Unify:
        text = f"{term_string(s.lhs)} = {term_string(s.rhs)}"
    elif type(s) is ast.Every:
        from pyrego.partial.output import expr_text

        text = expr_text(ast.Expr(s))
    else:
        text = term_string(s)
    if e.negated:
        text = "not " + text
    for w in e.with_mods:
        text += f" with {term_string(w.target)} as {term_string(w.value)}"
    return text
