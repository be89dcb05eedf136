"""Unknowns and mask rules declared in a policy's ``# METADATA``.

OPA's Compile API reads them from the annotations of the queried rule, its
document, its package and the packages above (the first that has them):

.. code-block:: rego

    # METADATA
    # compile:
    #   unknowns: [input.tickets, input.users]
    #   mask_rule: masks
    include if ...

A ``mask_rule`` not starting with ``data.`` is relative to the rule's package.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.partial.unknowns import UnknownsError


def query_path(query: Any) -> tuple[str, ...] | None:
    """The rule path a query names (``data.filters.include`` -> ``("filters", "include")``), or None."""
    from pyrego.errors import RegoError
    from pyrego.parse.parser import parse_term
    from pyrego.partial.unknowns import ground_path

    if not isinstance(query, str):
        return None
    try:
        path = ground_path(parse_term(query))
    except RegoError:
        return None
    if path is None or path[0] != "data" or not all(isinstance(p, str) for p in path):
        return None
    return tuple(path[1:])


def _chain(tree: CompiledTree, path: tuple[str, ...]) -> list[tuple[ast.Annotation, tuple[str, ...]]]:
    node = tree.nodes.get(path)
    if node is None or not node.has_rules():
        return []
    rule = node.rules[0] if node.rules else node.default
    assert rule is not None
    md = tree.metadata
    pkg = md.rule_packages.get(rule.location, path[:-1])
    out: list[tuple[ast.Annotation, tuple[str, ...]]] = []
    a = md.rules.get(rule.location)
    if a is not None:
        out.append((a, pkg))
    for a in md.documents.get(path, []):
        out.append((a, pkg))
    for a in md.packages.get(pkg, []):
        out.append((a, pkg))
    for i in range(len(pkg), 0, -1):
        for a in md.subpackages.get(pkg[:i], []):
            out.append((a, pkg))
    return out


def _compile_section(a: ast.Annotation) -> dict[str, Any] | None:
    section = a.data.get("compile")
    return section if isinstance(section, dict) else None


def declared_unknowns(tree: CompiledTree, path: tuple[str, ...]) -> list[str] | None:
    """The unknowns the annotations of ``data.<path>`` declare, or None."""
    found: list[str] = []
    any_declared = False
    for a, _ in _chain(tree, path):
        section = _compile_section(a)
        if section is None or "unknowns" not in section:
            continue
        any_declared = True
        for u in section.get("unknowns") or []:
            text = str(u)
            if not (text == "input" or text == "data" or text.startswith(("input.", "input[", "data.", "data["))):
                raise UnknownsError(f"unknowns must be prefixed with `input` or `data`: {text}", a.location)
            found.append(text)
    return found if any_declared else None


def declared_mask_rule(tree: CompiledTree, path: tuple[str, ...]) -> str | None:
    """The mask rule the annotations of ``data.<path>`` declare (absolute), or None."""
    for a, pkg in _chain(tree, path):
        section = _compile_section(a)
        if section is None or section.get("mask_rule") is None:
            continue
        rule = str(section["mask_rule"])
        if rule == "data" or rule.startswith(("data.", "data[")):
            return rule
        return ".".join(("data",) + pkg) + "." + rule
    return None
