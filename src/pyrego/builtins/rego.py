"""The ``rego.*`` builtins: parsing modules and reading rule metadata.

``rego.metadata.chain()`` and ``rego.metadata.rule()`` depend on the rule they
are called from, which only the compiler knows: the code generator replaces
each call with a constant built by :func:`metadata_chain` /
:func:`metadata_rule`. The registered functions here are what a call outside
any rule (a query) sees.
"""

from __future__ import annotations

import math
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
    # OPA encodes the module as JSON and reads that back as a term: the same
    # JSON `opa parse` writes (OPA's wildcard names, sorted sets and objects,
    # the keys of `p[x]` heads), numbers as their source text.
    from pyrego.ast.opa_json import module_json as opa_module_json
    from pyrego.go_json import marshal
    from pyrego.runtime.convert import loads

    return loads(marshal(opa_module_json(module, text), indent=None))


# ---------------------------------------------------------------- metadata


def normalise_annotation(annotation: ast.Annotation) -> dict[str, Any]:
    """An annotation as OPA returns it: the fields OPA's ``Annotations`` struct
    keeps (as ``opa inspect`` writes them, ``compile`` left out), ``schemas``
    with name arrays for paths."""
    from pyrego.ast.json_annotations import annotation_json, schema_value  # noqa: PLC0415 - keeps import light

    out = dict(annotation_json(annotation, ""))
    out.pop("compile", None)
    schemas = annotation.data.get("schemas")
    if "schemas" in out and isinstance(schemas, list):
        out["schemas"] = [s for s in (schema_value(x) for x in schemas) if s is not None]
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
