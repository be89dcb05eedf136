"""OPA capabilities documents: what pyrego supports, in OPA's JSON shape.

A capabilities document (``opa capabilities``) lists the builtins with their
type declarations, the future keywords, the Wasm ABI versions and the
language features of an OPA version. pyrego ships OPA v1.20.2's document
(``data/capabilities/v1.20.2.json``) and implements every builtin in it;
:func:`current_capabilities` is that document restricted to the builtins
pyrego registers. Documents are written as Go marshals OPA's
``Capabilities`` struct: ``builtins``, ``future_keywords``,
``wasm_abi_versions``, ``features``, ``allow_net`` (empty ones left out),
each builtin as ``name``, ``description``, ``categories``, ``decl``,
``infix``, ``relation``, ``deprecated``, ``nondeterministic``, type
declarations with sorted keys.

:func:`required_capabilities` is the ``capabilities`` entry of ``opa
inspect``: the builtins a set of modules calls and the features they need.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.go_json import sorted_map

__all__ = [
    "CURRENT_VERSION",
    "known_versions",
    "load_version",
    "current_capabilities",
    "normalise_capabilities",
    "required_capabilities",
    "CapabilitiesError",
]

CURRENT_VERSION = "v1.20.2"
_DATA = Path(__file__).resolve().parent / "data" / "capabilities"

_CAPS_KEYS = ("builtins", "future_keywords", "wasm_abi_versions", "features", "allow_net")
_BUILTIN_KEYS = ("name", "description", "categories", "decl", "infix", "relation", "deprecated", "nondeterministic")

# OPA's CapabilitiesForThisVersion for Rego v0: every future keyword, and the
# features that let v0 code use ref heads and `import rego.v1`.
_V0_FUTURE_KEYWORDS = ["and", "contains", "every", "if", "in", "not", "or"]
_V0_FEATURES = ["keywords_in_refs", "rego_v1", "rego_v1_import", "rule_head_ref_string_prefixes", "rule_head_refs"]


class CapabilitiesError(Exception):
    """A capabilities version or file that cannot be had (OPA's wording)."""


def known_versions() -> list[str]:
    """The capabilities versions pyrego ships (``opa capabilities`` with no flags)."""
    return sorted(p.stem for p in _DATA.glob("v*.json"))


@lru_cache(maxsize=4)
def _version_text(version: str) -> str:
    return (_DATA / f"{version}.json").read_text(encoding="utf-8")


def load_version(version: str) -> dict[str, Any]:
    """The capabilities document of ``version`` (``--version``)."""
    if version not in known_versions():
        raise CapabilitiesError(f"no capabilities version found {version}")
    return normalise_capabilities(json.loads(_version_text(version)))


def current_capabilities(rego_v1: bool = True) -> dict[str, Any]:
    """This version's capabilities (``--current``): OPA v1.20.2's entries for
    the builtins pyrego implements, and the keywords and features of the
    Rego version (v0 adds every future keyword and the v0 features)."""
    from pyrego.builtins.table import MODULES  # (every builtin registered: their modules need not load)

    doc = json.loads(_version_text(CURRENT_VERSION))
    implemented = set(MODULES)
    doc["builtins"] = [b for b in doc["builtins"] if b["name"] in implemented]
    if not rego_v1:
        doc["future_keywords"] = list(_V0_FUTURE_KEYWORDS)
        doc["features"] = list(_V0_FEATURES)
    return normalise_capabilities(doc)


def normalise_capabilities(doc: Any) -> dict[str, Any]:
    """A capabilities document as OPA writes it after reading it (``--file``):
    the struct's keys in order, unknown keys dropped, empty lists left out."""
    if not isinstance(doc, dict):
        raise CapabilitiesError("json: cannot unmarshal capabilities: not an object")
    out: dict[str, Any] = {}
    for key in _CAPS_KEYS:
        value = doc.get(key)
        if not value:
            continue
        if key == "builtins":
            out[key] = [_builtin(b) for b in value]
        elif key == "wasm_abi_versions":
            out[key] = [{"version": v.get("version", 0), "minor_version": v.get("minor_version", 0)} for v in value]
        else:
            out[key] = list(value)
    return out


def _builtin(b: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": b.get("name", "")}
    for key in _BUILTIN_KEYS[1:]:
        value = b.get(key)
        if key == "decl":
            out[key] = _sorted_deep(value) if value is not None else None
        elif value:
            out[key] = value
    return out


def _sorted_deep(v: Any) -> Any:
    """Type declarations are Go maps: sorted keys throughout."""
    if isinstance(v, dict):
        return sorted_map({k: _sorted_deep(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_sorted_deep(x) for x in v]
    return v


# ---------------------------------------------------------------- required by modules

_STATEMENT_CALLS = {ast.Assign: "assign", ast.Unify: "eq"}


def required_capabilities(modules: Iterable[ast.Module]) -> dict[str, Any]:
    """The builtins ``modules`` call and the features they need (``opa
    inspect``'s ``capabilities``): builtins sorted by name, as capabilities
    entries; ``rego_v1`` for Rego v1 modules, ``rego_v1_import`` for v0
    modules importing ``rego.v1``, ``template_strings`` where they are used."""
    entries = {b["name"]: b for b in json.loads(_version_text(CURRENT_VERSION))["builtins"]}
    names: set[str] = set()
    features: set[str] = set()
    for module in modules:
        if module.rego_v1:
            features.add("rego_v1")
        elif any(_is_rego_v1_import(i) for i in module.imports):
            features.add("rego_v1_import")
        for node in _walk(module):
            if isinstance(node, ast.Call) and node.op in entries:
                names.add(node.op)
            elif isinstance(node, ast.SomeIn):
                names.add("internal.member_2" if node.key is None else "internal.member_3")
            elif isinstance(node, ast.TemplateString):
                features.add("template_strings")
            else:
                name = _STATEMENT_CALLS.get(type(node))
                if name is not None:
                    names.add(name)
    out: dict[str, Any] = {}
    if names:
        out["builtins"] = [_builtin(entries[n]) for n in sorted(names)]
    if features:
        out["features"] = sorted(features)
    return out


def _is_rego_v1_import(imp: ast.Import) -> bool:
    path = imp.path
    return isinstance(path.head, ast.Var) and path.head.name == "rego"


def _walk(node: Any) -> Iterable[Any]:
    """Every AST node under ``node`` (dataclass fields, tuples)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
            continue
        if not hasattr(n, "__dataclass_fields__"):
            continue
        yield n
        for name in n.__dataclass_fields__:
            if name in ("location", "op_ref"):
                continue
            value = getattr(n, name)
            if isinstance(value, (tuple, list)) or hasattr(value, "__dataclass_fields__"):
                stack.append(tuple(value) if isinstance(value, list) else value)
