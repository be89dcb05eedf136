"""``pyrego inspect PATH``: summarise a bundle or Rego file as ``opa inspect`` does.

``--format pretty`` (the default) prints OPA's tables (``MANIFEST:``,
``NAMESPACES:``) and, with ``--annotations``, each annotation as OPA lists
it; ``--format json`` prints OPA's ``Info`` JSON
(:func:`pyrego.bundle.inspect.inspection_json`). Errors are printed as
``error: ...`` on stderr in either format, exit status 1.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from pyrego.cli.box_table import render_table
from pyrego.go_json import marshal

MAX_FIELD = 50
PAGE_WIDTH = 80

DESCRIPTION = """\
Inspect OPA bundle(s).

The 'inspect' command provides a summary of the contents in a bundle or a
single Rego file. Bundles are gzipped tarballs containing policies and data.
The 'inspect' command reads a bundle and lists the following:

* packages that are contributed by .rego files
* data locations defined by the data.json and data.yaml files
* manifest data
* signature data
* package- and rule annotations (with --annotations)

Example:

    $ ls
    bundle.tar.gz
    $ pyrego inspect bundle.tar.gz

You can provide exactly one bundle, a path to a bundle directory, or a direct
path to a Rego file. A directory is loaded as a bundle and summarised; a Rego
file is loaded and summarised on its own.
"""


def cmd_inspect(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego inspect PATH``."""
    from pyrego.bundle.inspect import InspectError, inspect_path, inspection_json

    if len(ns.paths) != 1:
        print("error: specify exactly one OPA bundle or path", file=err)
        return 1
    rego_v1 = not ns.v0_compatible
    try:
        ins = inspect_path(ns.paths[0], rego_v1=rego_v1, annotations=ns.annotations)
    except InspectError as exc:
        print(f"error: {exc}", file=err)
        return 1
    if ns.format == "json":
        print(marshal(inspection_json(ins, ns.annotations)), file=out)
        return 0
    text = pretty_inspection(ins, ns.annotations)
    if text:
        out.write(text)
    return 0


# ---------------------------------------------------------------- pretty


def truncate(s: str, limit: int) -> str:
    """OPA's truncateStr: strings at the limit or longer end in ``...``."""
    return s if len(s) < limit else s[: limit - 3] + "..."


def truncate_path(s: str, limit: int = MAX_FIELD) -> str:
    """OPA's truncateFileName: the middle of a long path becomes ``...``,
    keeping its first folder and as much of the rest as fits."""
    if len(s) < limit:
        return s
    folder = s.rsplit("/", 1)[0] if "/" in s else "."
    folder = folder[1:] if folder.startswith("/") else folder
    first = folder.find("/")
    common = folder[first + 1 :] if first > 0 else folder
    diff = limit - (len(s) - len(common) + 3)
    if diff > 0:
        common = "" if diff > len(common) else common[: len(common) - diff]
    if len(common) > 3:
        return s.replace(common, "...", 1)
    return s


def pretty_inspection(ins: Any, with_annotations: bool) -> str:
    parts: list[str] = []
    manifest = ins.manifest
    if manifest is not None and _has_manifest(manifest):
        rows = _manifest_rows(manifest)
        if rows:
            parts.append("MANIFEST:\n" + render_table(["Field", "Value"], rows, merge=[0, 1]) + "\n")
    if ins.namespaces:
        rows = [[k, truncate_path(f)] for k in sorted(ins.namespaces) for f in ins.namespaces[k]]
        parts.append("NAMESPACES:\n" + render_table(["Namespace", "File"], rows, merge=[0]) + "\n")
    if with_annotations and ins.annotations:
        parts.append("ANNOTATIONS:\n" + "".join(_annotation_text(e) for e in ins.annotations))
    return "".join(parts)


def _has_manifest(m: dict[str, Any]) -> bool:
    return bool(m.get("revision") or m.get("roots") or m.get("metadata") or "rego_version" in m)


def _manifest_rows(m: dict[str, Any]) -> list[list[str]]:
    rows = []
    if "rego_version" in m:
        rows.append(["Rego Version", truncate(str(m["rego_version"]), MAX_FIELD)])
    if m.get("revision"):
        rows.append(["Revision", truncate(m["revision"], MAX_FIELD)])
    roots = m.get("roots") or []
    if len(roots) == 1:
        if roots[0] != "":
            rows.append(["Roots", truncate_path(roots[0])])
    else:
        rows.extend(["Roots", truncate_path(r)] for r in sorted(roots))
    if m.get("metadata"):
        rows.append(["Metadata", truncate(marshal(m["metadata"], indent=None), MAX_FIELD)])
    return rows


def _annotation_text(e: Any) -> str:
    data = e.ref_json["annotations"]
    lines: list[str] = []
    title = str(data.get("title", "")).strip() or _drop_data(e.path)
    lines += [title, "=" * min(len(title), PAGE_WIDTH), ""]
    if data.get("description"):
        lines += [data["description"], ""]
    lines.append("Package:  " + _drop_data(e.package))
    if e.rule_ref is not None:
        lines.append("Rule:     " + e.rule_ref)
    lines.append("Location: " + e.location)
    if data.get("scope"):
        lines.append("Scope: " + data["scope"])
    if data.get("entrypoint"):
        lines.append("Entrypoint: true")
    lines.append("")
    if data.get("organizations"):
        lines += ["Organizations:"] + _list([("", o.replace("\n", " ")) for o in data["organizations"]], "") + [""]
    if data.get("authors"):
        authors = [("", _author(a).replace("\n", " ")) for a in data["authors"]]
        lines += ["Authors:"] + _list(authors, "") + [""]
    if data.get("schemas"):
        schemas = []
        for s in data["schemas"]:
            key = _path_text(s["path"])
            if s.get("schema"):
                value = _path_text(s["schema"])
            elif "definition" in s:
                value = marshal(s["definition"], indent=None)
            else:
                value = ""
            schemas.append((key, value))
        lines += ["Schemas:"] + _list(schemas, ": ") + [""]
    if data.get("related_resources"):
        resources = [(r["ref"].replace("\n", " "), r.get("description", "")) for r in data["related_resources"]]
        lines += ["Related Resources:"] + _list(resources, " ") + [""]
    if data.get("custom"):
        custom = [(k, marshal(v, indent=None)) for k, v in data["custom"].items()]
        lines += ["Custom:"] + _list(custom, ": ") + [""]
    return "\n".join(lines) + "\n"


def _drop_data(names: list[str]) -> str:
    """OPA's dropDataPrefix: the path without ``data``, its first name as a var."""
    from pyrego.bundle.inspect import ref_string

    if not names:
        return ""
    return ref_string(names[1:], names[0])


def _author(a: dict[str, Any]) -> str:
    name, email = a.get("name", ""), a.get("email", "")
    if not email:
        return name
    return f"<{email}>" if not name else f"{name} <{email}>"


def _path_text(terms: list[dict[str, Any]]) -> str:
    from pyrego.bundle.inspect import ref_string

    head = terms[0]["value"]
    names = [str(t["value"]) for t in terms[1:]]
    return ref_string(names, head)


def _list(entries: list[tuple[str, str]], separator: str) -> list[str]:
    """OPA's printList: one entry a line, values aligned after the longest key."""
    width = max((len(k) for k, _ in entries), default=0)
    out = []
    for key, value in entries:
        line = f" {key}{separator}{' ' * (width - len(key))}{value}" if value else f" {key}"
        out.append(truncate(line, PAGE_WIDTH))
    return out


def register(sub: Any) -> None:
    """Add ``inspect`` to the subcommand parsers ``sub``."""
    ip = sub.add_parser(
        "inspect",
        help="summarise a bundle, a bundle directory or a Rego file",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ip.add_argument("paths", nargs="+", metavar="PATH", help="a bundle (.tar.gz), a bundle directory or a .rego file")
    ip.add_argument(
        "-f", "--format", choices=("pretty", "json"), default="pretty", help="set output format (default pretty)"
    )
    ip.add_argument("-a", "--annotations", action="store_true", help="list annotations (rule and package METADATA)")
    ip.add_argument("--v0-compatible", action="store_true", help="read policies with Rego v0 syntax")
    ip.add_argument("--v1-compatible", action="store_true", help="read policies with Rego v1 syntax (the default)")
    ip.set_defaults(func=cmd_inspect)
