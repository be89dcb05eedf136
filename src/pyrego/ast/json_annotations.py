"""``# METADATA`` annotations in OPA's JSON shapes.

OPA reads an annotation's YAML into its ``Annotations`` struct and marshals
it as a Go map (keys sorted): ``authors`` as ``{"name", "email"}`` objects,
``related_resources`` as ``{"ref", "description"}``, ``schemas`` as
``{"path", "schema"|"definition"}`` with the path as location-free terms,
``custom`` and ``labels`` as the YAML values. :func:`annotation_json` builds
that; :func:`rule_annotations` attaches annotations to rules as OPA's parser
does; :func:`annotations_ref_json` is the ``AnnotationsRef`` of ``opa
inspect`` (an annotation with the path and location of what it describes).
"""

from __future__ import annotations

import base64
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.go_json import sorted_map

__all__ = ["annotation_json", "rule_annotations", "annotations_ref_json", "rule_path", "target_path", "schema_value"]



def annotation_json(
    a: ast.Annotation, file: str, locations: bool = False, location_text: str | None = None
) -> dict[str, Any]:
    """An annotation as OPA's ``Annotations.MarshalJSON`` writes it; with
    ``locations``, the location of its ``# METADATA`` line (whose text is
    ``location_text``, base64-encoded as OPA writes location texts)."""
    data = a.data
    out: dict[str, Any] = {"scope": a.scope}
    if data.get("title") not in (None, ""):
        out["title"] = _go_str(data["title"])
    if data.get("description") not in (None, ""):
        out["description"] = _go_str(data["description"])
    if data.get("entrypoint") is True:
        out["entrypoint"] = True
    orgs = data.get("organizations")
    if isinstance(orgs, list) and orgs:
        out["organizations"] = [str(o) for o in orgs]
    resources = data.get("related_resources")
    if isinstance(resources, list) and resources:
        out["related_resources"] = [_related_resource(r) for r in resources]
    authors = data.get("authors")
    if isinstance(authors, list) and authors:
        out["authors"] = [_author(x) for x in authors]
    schemas = data.get("schemas")
    if isinstance(schemas, list) and schemas:
        out["schemas"] = [s for s in (_schema(x) for x in schemas) if s is not None]
    if isinstance(data.get("compile"), dict):
        out["compile"] = go_value(data["compile"])
    custom = data.get("custom")
    if isinstance(custom, dict) and custom:
        out["custom"] = go_value(custom)
    labels = data.get("labels")
    if isinstance(labels, dict) and labels:
        out["labels"] = go_value(labels)
    if locations:
        loc = a.location
        location: dict[str, Any] = {"file": file, "row": loc.row, "col": loc.col}
        if location_text:
            location["text"] = base64.b64encode(location_text.encode("utf-8", "surrogatepass")).decode("ascii")
        out["location"] = location
    return sorted_map(out)


def go_value(v: Any) -> Any:
    """A YAML value as Go marshals the ``any`` it decodes to (maps sorted)."""
    if isinstance(v, dict):
        return sorted_map({str(k): go_value(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return [go_value(x) for x in v]
    return v


def _go_str(value: Any) -> str:
    """A YAML scalar decoded into a Go string field (``true``, not ``True``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _author(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        # OPA omits an empty name or email
        out = {}
        if value.get("name"):
            out["name"] = str(value["name"])
        if value.get("email"):
            out["email"] = str(value["email"])
        return out
    # As OPA splits "Name <email>": the last of the text's words is the
    # email when it is enclosed in <>, the other words (one space apart) the name.
    words = str(value).split()
    email = ""
    if words and len(words[-1]) >= 2 and words[-1][0] == "<" and words[-1][-1] == ">":
        email = words.pop()[1:-1]
    out = {"name": " ".join(words)} if words else {}
    if email:
        out["email"] = email
    return out


def _related_resource(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        # OPA keeps a description only when it is a string
        if isinstance(value.get("description"), str) and value["description"]:
            out["description"] = value["description"]
        out["ref"] = str(value.get("ref") or "")
        return out
    return {"ref": str(value)}


def _schema(item: Any) -> dict[str, Any] | None:
    """``- input.x: schema.y`` (a schema ref) or ``- input.x: {...}`` (a definition)."""
    if not isinstance(item, dict) or len(item) != 1:
        return None
    ((path, value),) = item.items()
    out: dict[str, Any] = {"path": _path_terms(str(path))}
    if isinstance(value, str):
        out["schema"] = _path_terms(value)
    else:
        out["definition"] = go_value(value)
    return out


def schema_value(item: Any) -> dict[str, Any] | None:
    """A ``schemas`` entry as ``rego.metadata`` returns it: ``path`` (and
    ``schema``, for a schema ref) as arrays of the ref's names, or the inline
    ``definition``; None for an entry that is not a one-key map."""
    out = _schema(item)
    if out is None:
        return None
    for key in ("path", "schema"):
        if key in out:
            out[key] = [t["value"] for t in out[key]]
    return out


def _path_terms(text: str) -> list[dict[str, Any]]:
    """A dotted path (``input.a.b``, ``schema["x"]``) as ref terms."""
    from pyrego.parse.parser import parse_query  # noqa: PLC0415 - the parser is only needed for schema paths

    try:
        body = parse_query(text)
        stmt = body[0].statement if len(body) == 1 else None
    except Exception:  # noqa: BLE001 - an unparsable path is kept as one name
        stmt = None
    if isinstance(stmt, ast.Ref):
        parts: list[Any] = [stmt.head, *stmt.path]
    elif isinstance(stmt, ast.Var):
        parts = [stmt]
    else:
        return [{"type": "var", "value": text}]
    out = []
    for p in parts:
        if isinstance(p, ast.Var):
            out.append({"type": "var", "value": p.name})
        elif isinstance(p, ast.Scalar) and isinstance(p.value, str):
            out.append({"type": "string", "value": p.value})
        else:
            out.append({"type": "string", "value": str(getattr(p, "value", p))})
    return out


# ---------------------------------------------------------------- targets


def package_path(module: ast.Module) -> list[str]:
    """The package's names after ``data``."""
    return [str(p.value) for p in module.package.path if isinstance(p, ast.Scalar)]


def rule_path(module: ast.Module, rule: ast.Rule) -> list[Any]:
    """``data``, the package names and the ground prefix of the rule's head
    ref (OPA's ``rule.Ref().GroundPrefix()``), as JSON-ready path parts:
    strings, or terms past the first non-string part are cut off."""
    out: list[Any] = package_path(module)
    head = rule.head.ref.head
    if isinstance(head, ast.Var):
        out.append(head.name)
    for part in rule.head.ref.path:
        if isinstance(part, ast.Scalar) and isinstance(part.value, str):
            out.append(part.value)
        else:
            break
    return out


def _rule_target(module: ast.Module, rules: list[ast.Rule], a: ast.Annotation) -> ast.Rule | None:
    """The rule an annotation sits above (the first statement after it, when a rule)."""
    row = a.location.row
    if module.location.row > row:
        return None  # the package follows
    after = [r for r in rules if r.location.row > row]
    return min(after, key=lambda r: (r.location.row, r.location.col)) if after else None


def target_path(module: ast.Module, a: ast.Annotation) -> list[str]:
    """The path an annotation applies to: its package, or its rule's path."""
    if a.scope in ("package", "subpackages"):
        return package_path(module)
    rule = _rule_target(module, list(module.rules), a)
    return [str(x) for x in rule_path(module, rule)] if rule is not None else package_path(module)


def rule_annotations(module: ast.Module) -> list[list[ast.Annotation]]:
    """The annotations OPA attaches to each rule of ``module`` (in order): the
    ``document`` ones of its path, and a ``rule`` one above it for the first
    rule of that path after the annotation (OPA's attachRuleAnnotations)."""
    rules = list(module.rules)
    remaining = [(a, target_path(module, a)) for a in module.annotations]
    out: list[list[ast.Annotation]] = []
    for rule in rules:
        path = [str(x) for x in rule_path(module, rule)]
        mine: list[ast.Annotation] = []
        found: int | None = None
        for i, (a, target) in enumerate(remaining):
            if target != path:
                continue
            if a.scope == "document":
                mine.append(a)
            elif a.scope == "rule" and rule.location.row > a.location.row:
                found = i
                mine.append(a)
        if found is not None:
            del remaining[found]
        out.append(mine)
    return out


def annotations_ref_json(
    module: ast.Module, a: ast.Annotation, file: str, with_location: bool
) -> tuple[dict[str, Any], list[str], ast.Rule | None]:
    """OPA's ``AnnotationsRef`` of one annotation (``path``, ``annotations``,
    the ``location`` of what it describes), its path, and its rule (if any)."""
    rule = None if a.scope in ("package", "subpackages") else _rule_target(module, list(module.rules), a)
    if rule is None:
        names = package_path(module)
        node_loc = module.location
    else:
        names = [str(x) for x in rule_path(module, rule)]
        node_loc = rule.location
    path = [{"type": "var", "value": "data"}] + [{"type": "string", "value": n} for n in names]
    out: dict[str, Any] = {"annotations": annotation_json(a, file)}
    if with_location:
        out["location"] = {"file": file, "row": node_loc.row, "col": node_loc.col}
    out["path"] = path
    return out, names, rule
