"""``pyrego parse FILE``: print a module's AST as ``opa parse`` does.

``--format pretty`` (the default) prints OPA's indented tree
(:mod:`pyrego.ast.pretty`); ``--format json`` prints OPA's AST JSON
(:mod:`pyrego.ast.opa_json`), with ``--json-include locations`` adding every
node's location and ``--json-include -comments`` leaving comments out.
Errors are printed as ``opa parse`` prints them whatever the format: a JSON
``{"errors": [...]}`` object on stderr, exit status 1.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from pyrego.errors import RegoError
from pyrego.go_json import marshal

DESCRIPTION = """\
Parse Rego source file and print AST.

The AST is printed as OPA prints it: with --format pretty (the default) as an
indented tree of the module's nodes; with --format json as OPA's AST JSON,
where OPA's parser rewrites show (x := 1 is a call of assign, some x in xs a
declaration of internal.member_2(x, xs), a rule without a body gets the body
true, and so on).

--json-include takes a comma-separated list of optional elements: by default
comments are included and locations are not; a leading '-' excludes one.
E.g. --json-include locations,-comments includes every node's location (with
its source text, base64-encoded) and leaves the comments out.

Parse errors are printed as a JSON object {"errors": [...]} on stderr, for
either format, and the exit status is 1.

Example:

    $ pyrego parse --format json policy.rego
"""


def parse_json_include(spec: str) -> tuple[bool, bool]:
    """``(locations, comments)`` from a ``--json-include`` value, read as OPA does."""
    locations, comments = False, True
    for opt in spec.split(","):
        value = not opt.startswith("-")
        if opt.endswith("locations"):
            locations = value
        if opt.endswith("comments"):
            comments = value
    return locations, comments


def error_json(errors: list[dict[str, Any]]) -> str:
    """OPA's error output: ``{"errors": [...]}`` as its JSON encoder writes it."""
    return marshal({"errors": errors}) + "\n"


def rego_error_entry(err: RegoError) -> dict[str, Any]:
    """One error as OPA's presentation layer writes it (message, code, location, details)."""
    out: dict[str, Any] = {"message": err.message, "code": err.code}
    loc = err.location
    if loc is not None:
        out["location"] = {"file": loc.file, "row": loc.row, "col": loc.col}
        if err.code == "rego_parse_error" and err.source_line is not None:
            line = err.source_line.rstrip("\n")
            idx = len(line[: max(loc.col - 1, 0)].encode("utf-8", "surrogatepass"))
            out["details"] = {"line": line, "idx": idx}
    return out


def cmd_parse(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego parse FILE``: print the module's AST."""
    from pyrego.ast.opa_json import module_json
    from pyrego.ast.pretty import pretty_module
    from pyrego.parse.parser import deep_recursion, parse_module

    path: str = ns.file
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        err.write(error_json([{"message": f"open {path}: no such file or directory"}]))
        return 1
    except IsADirectoryError:
        err.write(error_json([{"message": f"read {path}: is a directory"}]))
        return 1
    except (OSError, UnicodeDecodeError) as exc:
        err.write(error_json([{"message": f"{path}: {exc}"}]))
        return 1
    rego_v1 = not ns.v0_compatible  # v0 wins over v1, as in OPA
    locations, comments = parse_json_include(ns.json_include or "")
    try:
        module = parse_module(text, path, rego_v1=rego_v1)
    except RegoError as exc:
        errs = getattr(exc, "errors", None) or [exc]
        err.write(error_json([rego_error_entry(e) for e in errs]))
        return 1
    try:
        with deep_recursion():  # (an else chain thousands of branches long nests as deep)
            if ns.format == "json":
                written = marshal(module_json(module, text, locations=locations, comments=comments)) + "\n"
            else:
                written = pretty_module(module_json(module, text, comments=comments))
    except RecursionError:
        err.write(error_json([{"message": "policy too deeply nested to print"}]))
        return 1
    out.write(written)
    return 0


def register(sub: Any) -> None:
    """Add ``parse`` to the subcommand parsers ``sub``."""
    pa = sub.add_parser(
        "parse",
        help="parse a Rego file and print its AST",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pa.add_argument("file", metavar="FILE", help="the .rego file to parse")
    pa.add_argument(
        "-f", "--format", choices=("pretty", "json"), default="pretty", help="set output format (default pretty)"
    )
    pa.add_argument(
        "--json-include",
        default="",
        metavar="ITEMS",
        help="include or exclude optional elements. By default comments are included. Current options: "
        "locations, comments. E.g. --json-include locations,-comments will include locations and exclude "
        "comments (a value that starts with '-' is written --json-include=-comments).",
    )
    pa.add_argument(
        "--v0-compatible", action="store_true", help="parse with Rego v0 syntax (wins over --v1-compatible)"
    )
    pa.add_argument("--v1-compatible", action="store_true", help="parse with Rego v1 syntax (the default)")
    pa.set_defaults(func=cmd_parse)
