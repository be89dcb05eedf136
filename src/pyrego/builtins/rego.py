"""The ``rego.*`` builtins: parsing modules and reading rule metadata.

``rego.metadata.chain()`` and ``rego.metadata.rule()`` depend on the rule they
are called from, which only the compiler knows: the code generator replaces
each call with a constant built by :func:`metadata_chain` /
:func:`metadata_rule`. The registered functions here are what a call outside
any rule (a query) sees.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.builtins.registry import builtin, operand_error
from pyrego.errors import RegoCompileError, RegoError
from pyrego.runtime.builtin_errors import BuiltinError


@builtin("rego.metadata.chain", 0)
def _chain() -> Any:
    # Inside a rule the code generator puts the constant in place of the call.
    raise BuiltinError("the rego.metadata.chain function must only be called within the scope of a rule")


@builtin("rego.metadata.rule", 0)
def _rule() -> Any:
    raise BuiltinError("the rego.metadata.rule function must only be called within the scope of a rule")


@builtin("rego.parse_module", 2)
def parse_module(filename: Any, text: Any) -> Any:
    """Parse Rego text into OPA's JSON form of a module, comments included."""
    if type(filename) is not str:
        raise operand_error(1, filename, "string")
    if type(text) is not str:
        raise operand_error(1, text, "string")  # (OPA's position for both)
    from pyrego.parse.parser import parse_module as parse

    try:
        # OPA parses without reading annotations: METADATA blocks stay plain comments
        module = parse(text, filename, annotations=False)
    except RegoError as err:
        raise BuiltinError(f"{err.code}: {err.message}") from None
    out = module_json(module)
    from pyrego.ast.opa_json import ModuleJSON

    comments = ModuleJSON(module, text, False).comments()
    if comments:
        out["comments"] = comments
    return out


# ---------------------------------------------------------------- metadata

_AUTHOR = re.compile(r"^(.*?)\s*<([^>]*)>\s*$")


def normalise_annotation(annotation: ast.Annotation) -> dict[str, Any]:
    """An annotation as OPA returns it: authors as objects, scope included."""
    out: dict[str, Any] = {}
    for key, value in annotation.data.items():
        if key == "authors" and isinstance(value, list):
            out[key] = [_author(a) for a in value]
        elif key == "related_resources" and isinstance(value, list):
            out[key] = [{"ref": r} if isinstance(r, str) else r for r in value]
        else:
            out[key] = value
    out["scope"] = annotation.scope
    return out


def _author(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    m = _AUTHOR.match(value)
    if m:
        name, email = m.group(1).strip(), m.group(2).strip()
        return {"name": name, "email": email} if name else {"email": email}
    return {"name": value.strip()}


# ---------------------------------------------------------------- AST as OPA's JSON


def term_json(t: Any) -> Any:
    if isinstance(t, ast.Scalar):
        v = t.value
        if v is None:
            return {"type": "null"}
        if isinstance(v, bool):
            return {"type": "boolean", "value": v}
        if isinstance(v, str):
            return {"type": "string", "value": v}
        return {"type": "number", "value": v}
    if isinstance(t, ast.Var):
        return {"type": "var", "value": t.name}
    if isinstance(t, ast.Ref):
        return {"type": "ref", "value": [term_json(t.head)] + [term_json(p) for p in t.path]}
    if isinstance(t, ast.Array):
        return {"type": "array", "value": [term_json(x) for x in t.items]}
    if isinstance(t, ast.SetTerm):
        return {"type": "set", "value": [term_json(x) for x in t.items]}
    if isinstance(t, ast.Object):
        return {"type": "object", "value": [[term_json(k), term_json(v)] for k, v in t.items]}
    if isinstance(t, ast.Call):
        return {"type": "call", "value": [_op_json(t)] + [term_json(a) for a in t.args]}
    if isinstance(t, ast.ArrayCompr):
        return {"type": "arraycomprehension", "value": {"term": term_json(t.term), "body": body_json(t.body)}}
    if isinstance(t, ast.SetCompr):
        return {"type": "setcomprehension", "value": {"term": term_json(t.term), "body": body_json(t.body)}}
    if isinstance(t, ast.ObjectCompr):
        return {
            "type": "objectcomprehension",
            "value": {"key": term_json(t.key), "value": term_json(t.value), "body": body_json(t.body)},
        }
    if isinstance(t, ast.TemplateString):
        parts = [{"type": "string", "value": p} if isinstance(p, str) else term_json(p) for p in t.parts]
        return {"type": "templatestring", "value": parts}
    return {"type": "unknown"}


def _op_json(call: ast.Call) -> Any:
    parts = call.op.split(".")
    path = [{"type": "var", "value": parts[0]}] + [{"type": "string", "value": p} for p in parts[1:]]
    return {"type": "ref", "value": path}


def _stmt_json(stmt: ast.Statement) -> Any:
    if isinstance(stmt, ast.Assign):
        return [_op_json(ast.Call("assign", ())), term_json(stmt.lhs), term_json(stmt.rhs)]
    if isinstance(stmt, ast.Unify):
        return [_op_json(ast.Call("eq", ())), term_json(stmt.lhs), term_json(stmt.rhs)]
    if isinstance(stmt, ast.SomeVars):
        return {"symbols": [term_json(v) for v in stmt.vars]}
    if isinstance(stmt, ast.SomeIn):
        args = [term_json(stmt.key)] if stmt.key is not None else []
        args += [term_json(stmt.value), term_json(stmt.collection)]
        op = "internal.member_3" if stmt.key is not None else "internal.member_2"
        call = {"type": "call", "value": [_op_json(ast.Call(op, ())), *args]}
        return {"symbols": [call]}
    if isinstance(stmt, ast.Every):
        return {
            "key": term_json(stmt.key) if stmt.key is not None else None,
            "value": term_json(stmt.value),
            "domain": term_json(stmt.domain),
            "body": body_json(stmt.body),
        }
    if isinstance(stmt, ast.Call):
        return [_op_json(stmt)] + [term_json(a) for a in stmt.args]
    return term_json(stmt)


def body_json(body: ast.Body) -> list[Any]:
    out = []
    for i, e in enumerate(body):
        expr: dict[str, Any] = {"index": i, "terms": _stmt_json(e.statement)}
        if e.negated:
            expr["negated"] = True
        if e.with_mods:
            expr["with"] = [{"target": term_json(w.target), "value": term_json(w.value)} for w in e.with_mods]
        out.append(expr)
    return out


def rule_json(rule: ast.Rule) -> dict[str, Any]:
    head = rule.head
    ref = [term_json(head.ref.head)] + [term_json(p) for p in head.ref.path]
    hj: dict[str, Any] = {"ref": ref}
    if not head.ref.path and isinstance(head.ref.head, ast.Var):
        hj["name"] = head.ref.head.name
    if head.args is not None:
        hj["args"] = [term_json(a) for a in head.args]
    if head.key is not None:
        hj["key"] = term_json(head.key)
    if head.value is not None:
        hj["value"] = term_json(head.value)
    if head.assign:
        hj["assign"] = True
    out: dict[str, Any] = {"head": hj, "body": body_json(rule.body) or [{"index": 0, "terms": {"type": "boolean", "value": True}}]}
    if rule.default:
        out["default"] = True
    if rule.else_ is not None:
        out["else"] = rule_json(rule.else_)
    return out


def module_json(module: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {
        "package": {"path": [term_json(module.package.head)] + [term_json(p) for p in module.package.path]},
    }
    if module.imports:
        out["imports"] = [
            {"path": term_json(i.path), **({"alias": i.alias} if i.alias else {})} for i in module.imports
        ]
    if module.rules:
        out["rules"] = [rule_json(r) for r in module.rules]
    if module.annotations:
        out["annotations"] = [normalise_annotation(a) for a in module.annotations]
    return out


def metadata_value(md: Any, op: str, rule: ast.Rule) -> Any:
    """The constant value of ``rego.metadata.chain()`` / ``rule()`` inside
    ``rule``, from the compiled tree's annotations ``md``.

    An annotation holding ``.nan`` or ``.inf`` is refused here: OPA keeps such
    a number but cannot compare, print or return it (every use but a few
    ends in an internal error), and pyrego has no number that behaves so."""
    value = _metadata_value(md, op, rule)
    bad = _non_finite(value)
    if bad is not None:
        raise RegoCompileError(f'{op}: json: invalid number literal "{bad}"', rule.location)
    return value


def _non_finite(v: Any) -> str | None:
    t = type(v)
    if t is float and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    if t is dict:
        v = v.values()
    elif t is not list:
        return None
    for x in v:
        bad = _non_finite(x)
        if bad is not None:
            return bad
    return None


def _metadata_value(md: Any, op: str, rule: ast.Rule) -> Any:
    own = md.rules.get(rule.location)
    path = md.rule_paths.get(rule.location, ())
    docs = md.documents.get(path, [])
    if op == "rego.metadata.rule":
        # Only the rule's own annotation (a document-scope one is in the chain only).
        return normalise_annotation(own) if own else {}
    chain: list[Any] = []
    # Every rule-scope block above the rule, the last first (as OPA lists them).
    for a in reversed(md.more_rules.get(rule.location, [])):
        chain.append({"path": list(path), "annotations": normalise_annotation(a)})
    entry: dict[Any, Any] = {"path": list(path)}
    if own is not None:
        entry["annotations"] = normalise_annotation(own)
    chain.append(entry)
    for a in docs:
        chain.append({"path": list(path), "annotations": normalise_annotation(a)})
    pkg = md.rule_packages.get(rule.location, ())
    for a in md.packages.get(pkg, []):
        chain.append({"path": list(pkg), "annotations": normalise_annotation(a)})
    for i in range(len(pkg), -1, -1):
        for a in md.subpackages.get(pkg[:i], []):
            chain.append({"path": list(pkg[:i]), "annotations": normalise_annotation(a)})
    return chain
