"""What a bundle, a policy folder or a Rego file holds (``opa inspect``).

A path is read as OPA's loader reads it for ``opa inspect``:

- a ``.rego`` file: that one module;
- a folder: a bundle directory — every ``.rego`` file under it, the data
  files named ``data.json``/``data.yaml``, the ``.manifest`` and
  ``.signatures.json``;
- a ``.tar.gz`` file: a bundle archive with the same files (their paths start
  with ``/``).

:func:`inspect_path` gathers the namespaces (each package, and each data
file's place under ``data``, with the files contributing to it), the manifest,
the signatures configuration, the annotations (OPA's flattened annotation set:
each with the path and location of what it describes) and the capabilities
the modules need; :func:`inspection_json` is OPA's JSON of that (the
``Info`` struct of ``internal/bundle/inspect``).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import tarfile
from dataclasses import dataclass, field
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.ast.json_annotations import annotations_ref_json
from pyrego.ast.pretty import ref_string
from pyrego.capabilities import required_capabilities
from pyrego.errors import RegoError
from pyrego.go_json import sorted_map

__all__ = [
    "InspectError",
    "Inspection",
    "AnnotationEntry",
    "inspect_path",
    "inspection_json",
    "bundle_modules",
    "errors_text",
    "ref_string",
]



class InspectError(Exception):
    """A path that cannot be inspected; the message is OPA's."""


@dataclass
class AnnotationEntry:
    """One annotation of the flattened set, with what ``opa inspect`` shows of it."""

    ref_json: dict[str, Any]  # OPA's AnnotationsRef JSON
    annotation: ast.Annotation
    path: list[str]  # names after `data`
    package: list[str]
    rule_ref: str | None  # the rule's head ref as text, for rule annotations
    location: str  # "file:row" of what it describes
    sort_key: tuple[Any, ...] = ()


@dataclass
class Inspection:
    manifest: dict[str, Any] | None
    signatures: dict[str, Any]
    namespaces: dict[str, list[str]]
    annotations: list[AnnotationEntry] = field(default_factory=list)
    required: dict[str, Any] | None = None


# ---------------------------------------------------------------- reading


@dataclass
class _File:
    name: str  # the path OPA reports (a folder's files by their full path, an archive's from "/")
    rel: str  # the path inside the bundle, from "/"
    data: bytes


def _read_folder(root: str) -> list[_File]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(folder, f)
            rel = "/" + os.path.relpath(full, root).replace(os.sep, "/")
            try:
                with open(full, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                raise InspectError(f"open {full}: {exc.strerror or exc}") from None
            out.append(_File(os.path.normpath(full), rel, data))
    return out


def _read_archive(path: str) -> list[_File]:
    out = []
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name
                while name.startswith(("./", "/")):
                    name = name[2:] if name.startswith("./") else name[1:]
                rel = "/" + name
                fh = tar.extractfile(member)
                data = fh.read() if fh is not None else b""
                out.append(_File(rel, rel, data))
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InspectError(f"bundle {path}: {exc}") from None
    return sorted(out, key=lambda f: f.rel)


def _text(f: _File) -> str:
    try:
        return f.data.decode("utf-8")
    except UnicodeDecodeError:
        raise InspectError(f"{f.name}: not UTF-8 text") from None


def _parse(text: str, name: str, rego_v1: bool) -> ast.Module:
    from pyrego.parse.parser import parse_module

    try:
        return parse_module(text, name, rego_v1=rego_v1)
    except RegoError as exc:
        errs = getattr(exc, "errors", None) or [exc]
        raise InspectError(errors_text(errs)) from None


def errors_text(errs: list[RegoError]) -> str:
    """OPA's ast.Errors text: ``file:row: code: message``, counted."""
    lines = []
    for e in errs:
        loc = e.location
        prefix = (f"{loc.file}:{loc.row}" if loc.file else f"{loc.row}:{loc.col}") if loc is not None else ""
        lines.append(f"{prefix}: {e.code}: {e.message}" if prefix else f"{e.code}: {e.message}")
    head = "1 error occurred: " if len(lines) == 1 else f"{len(lines)} errors occurred:\n"
    return head + "\n".join(lines)


# ---------------------------------------------------------------- inspection


def _read_bundle(path: str) -> list[_File]:
    if os.path.isdir(path):
        return _read_folder(path)
    if os.path.exists(path):
        return _read_archive(path)
    raise InspectError(f"stat {path}: no such file or directory")


def _load_bundle(files: list[_File], rego_v1: bool) -> tuple[dict[str, Any], list[ast.Module]]:
    """A bundle's manifest and modules, each module parsed with the Rego
    version the manifest gives it (``rego_version``, ``file_rego_versions``
    globs), else ``rego_v1``."""
    manifest = _manifest(next((f for f in files if f.rel == "/.manifest"), None))
    if isinstance(manifest.get("rego_version"), int):
        rego_v1 = manifest["rego_version"] != 0
    per_file = manifest.get("file_rego_versions") or {}
    modules = []
    for f in files:
        if not f.rel.endswith(".rego"):
            continue
        version = rego_v1
        for pattern, v in per_file.items():
            if fnmatch.fnmatchcase(f.rel, pattern) or fnmatch.fnmatchcase(f.rel, "/" + pattern.lstrip("/")):
                version = v != 0
        modules.append(_parse(_text(f), f.name, version))
    return manifest, modules


def bundle_modules(path: str, rego_v1: bool = True) -> list[ast.Module]:
    """The modules of a bundle folder or archive (``opa deps -b``)."""
    return _load_bundle(_read_bundle(path), rego_v1)[1]


def inspect_path(path: str, rego_v1: bool = True, annotations: bool = False) -> Inspection:
    """Inspect a bundle archive, a bundle folder or a ``.rego`` file."""
    if path.endswith(".rego"):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise InspectError(f"stat {path}: no such file or directory") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InspectError(f"{path}: {exc}") from None
        name = os.path.normpath(path)
        module = _parse(text, name, rego_v1)
        ins = Inspection(None, {}, {_package(module): [name]})
        if annotations:
            ins.annotations = _annotations([module])
        ins.required = required_capabilities([module])
        return ins
    return _inspect_bundle(_read_bundle(path), rego_v1, annotations)


def _inspect_bundle(files: list[_File], rego_v1: bool, annotations: bool) -> Inspection:
    manifest, modules = _load_bundle(files, rego_v1)
    signatures: dict[str, Any] = {}
    sig = next((f for f in files if f.rel.endswith(".signatures.json")), None)
    if sig is not None:
        try:
            raw = json.loads(_text(sig))
        except json.JSONDecodeError as exc:
            raise InspectError(f"bundle load failed on signatures decode: {exc}") from None
        if isinstance(raw, dict):
            signatures = {k: raw[k] for k in ("signatures", "plugin") if raw.get(k)}
    namespaces: dict[str, list[str]] = {}
    for m in modules:
        namespaces.setdefault(_package(m), []).append(m.file)
    for f in files:
        base = f.rel.rsplit("/", 1)[-1]
        if base in ("data.json", "data.yaml"):
            parts = f.rel.strip("/").split("/")[:-1]
            namespaces.setdefault(ref_string(parts), []).append(f.name)
    for resolver in manifest.get("wasm") or []:
        if isinstance(resolver, dict):
            parts = str(resolver.get("entrypoint", "")).strip("/").split("/")
            namespaces.setdefault(ref_string(parts), []).append(str(resolver.get("module", "")))
    ins = Inspection(manifest, signatures, namespaces)
    if annotations:
        ins.annotations = _annotations(modules)
    ins.required = required_capabilities(modules)
    return ins


def _package(module: ast.Module) -> str:
    return ref_string([str(p.value) for p in module.package.path if isinstance(p, ast.Scalar)])


def _manifest(f: _File | None) -> dict[str, Any]:
    """A bundle manifest as OPA's Manifest struct marshals it (roots default to [""])."""
    raw: dict[str, Any] = {}
    if f is not None:
        try:
            loaded = json.loads(_text(f))
        except json.JSONDecodeError as exc:
            raise InspectError(f"bundle load failed on manifest decode: {exc}") from None
        if isinstance(loaded, dict):
            raw = loaded
    out: dict[str, Any] = {"revision": str(raw.get("revision") or "")}
    roots = raw.get("roots")
    out["roots"] = list(roots) if isinstance(roots, list) else [""]
    if raw.get("wasm"):
        out["wasm"] = [_wasm_resolver(w) for w in raw["wasm"] if isinstance(w, dict)]
    if isinstance(raw.get("rego_version"), int):
        out["rego_version"] = raw["rego_version"]
    if raw.get("file_rego_versions"):
        out["file_rego_versions"] = sorted_map(dict(raw["file_rego_versions"]))
    if raw.get("metadata"):
        out["metadata"] = _go_map(raw["metadata"])
    return out


def _wasm_resolver(w: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("entrypoint", "module"):
        if w.get(key):
            out[key] = str(w[key])
    if w.get("annotations"):
        out["annotations"] = [_go_map(a) for a in w["annotations"]]
    return out


def _go_map(v: Any) -> Any:
    if isinstance(v, dict):
        return sorted_map({k: _go_map(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_go_map(x) for x in v]
    return v


# ---------------------------------------------------------------- annotations


def _annotations(modules: list[ast.Module]) -> list[AnnotationEntry]:
    """OPA's flattened annotation set: sorted by path, then by where the annotation is."""
    entries = []
    for module in modules:
        package = [str(p.value) for p in module.package.path if isinstance(p, ast.Scalar)]
        for a in module.annotations:
            ref_json, names, rule = annotations_ref_json(module, a, module.file, True)
            node_loc = rule.location if rule is not None else module.location
            entry = AnnotationEntry(
                ref_json=ref_json,
                annotation=a,
                path=names,
                package=package,
                rule_ref=_head_ref_text(rule) if rule is not None else None,
                location=f"{module.file}:{node_loc.row}" if module.file else f"{node_loc.row}:{node_loc.col}",
                sort_key=(module.file, a.location.row, a.location.col),
            )
            entries.append(entry)
    return sorted(entries, key=functools.cmp_to_key(_compare_entries))


def _compare_entries(x: AnnotationEntry, y: AnnotationEntry) -> int:
    for a, b in zip(x.path, y.path):
        if a != b:
            ka, kb = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
            return -1 if ka < kb else 1
    if len(x.path) != len(y.path):
        return -1 if len(x.path) < len(y.path) else 1
    return (x.sort_key > y.sort_key) - (x.sort_key < y.sort_key)


def _head_ref_text(rule: ast.Rule) -> str:
    """A rule's head ref as OPA prints it (``p``, ``a.b[x]``)."""
    head = rule.head.ref.head
    out = head.name if isinstance(head, ast.Var) else "?"
    for part in rule.head.ref.path:
        if isinstance(part, ast.Scalar) and isinstance(part.value, str):
            out = ref_string([part.value], out)
        elif isinstance(part, ast.Var):
            out += "[" + ("_" if part.name.startswith("$") else part.name) + "]"
        elif isinstance(part, ast.Scalar):
            out += "[" + json.dumps(part.value) + "]"
        else:
            out += "[...]"
    return out


# ---------------------------------------------------------------- JSON


def inspection_json(ins: Inspection, with_annotations: bool) -> dict[str, Any]:
    """OPA's ``Info`` JSON: manifest, signatures_config, namespaces,
    annotations and capabilities, in that order (empty ones left out)."""
    out: dict[str, Any] = {}
    if ins.manifest is not None:
        out["manifest"] = ins.manifest
    out["signatures_config"] = ins.signatures
    if ins.namespaces:
        out["namespaces"] = sorted_map(ins.namespaces)
    if with_annotations and ins.annotations:
        out["annotations"] = [e.ref_json for e in ins.annotations]
    if ins.required is not None:
        out["capabilities"] = ins.required
    return out
