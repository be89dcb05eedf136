"""A call with no arguments of a rule that is not a function (``f()``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyrego.ast import nodes as ast
from pyrego.compile.base import FUNCTION
from pyrego.errors import RegoTypeError

if TYPE_CHECKING:
    from pyrego.codegen.body import BodyEmitter


def document_call(body: BodyEmitter, t: ast.Call, check: bool) -> str:
    """``f()`` naming a document (``f() := v if { ... }`` defines one: OPA
    parses no function of no arguments): OPA's type check lets such a call
    through where the document's type is any, and evaluates it to the
    document's value. Any other call of an unknown function is refused."""
    node = body.gen.tree.called_document(t.op)
    if node is None or node.kind == FUNCTION or len(t.args) > 1:
        raise RegoTypeError(f"undefined function {ast.call_name_text(t.op)}", t.location)
    path = t.op.split(".")[1:]
    ref = ast.Ref(ast.Var("data", t.location), tuple(ast.Scalar(p, t.location) for p in path), t.location)
    if not t.args:
        return body.term(ref, check)
    body.unify_value(t.args[0], body.term(ref), t.location)
    return "True"
