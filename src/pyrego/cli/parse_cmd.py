"""``pyrego parse FILE``: print a module's AST."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, TextIO

from ..errors import RegoError
from .output import format_errors


def ast_to_json(node: Any) -> Any:
    """A JSON-ready view of an AST node: ``{"type": ClassName, field: ...}`` for dataclasses."""
    from ..errors import Location

    if isinstance(node, Location):
        return {"file": node.file, "row": node.row, "col": node.col}
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        out: dict[str, Any] = {"type": type(node).__name__}
        for f in dataclasses.fields(node):
            out[f.name] = ast_to_json(getattr(node, f.name))
        return out
    if isinstance(node, (list, tuple)):
        return [ast_to_json(x) for x in node]
    if isinstance(node, dict):
        return {str(k): ast_to_json(v) for k, v in node.items()}
    if node is None or isinstance(node, (bool, int, str)):
        return node
    if isinstance(node, float):
        return node if node == node and node not in (float("inf"), float("-inf")) else str(node)
    return str(node)


def _parse_module(path: str, text: str, v0: bool) -> Any:
    """Parse policy text with the project's parser."""
    from ..parser import parse_module

    return parse_module(text, path, rego_v1=not v0)


def cmd_parse(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego parse FILE``: print the module's AST as JSON."""
    fmt = ns.format
    try:
        text = Path(ns.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"pyrego parse: {exc}", file=err)
        return 1
    try:
        module = _parse_module(ns.file, text, bool(ns.v0_compatible))
    except RegoError as exc:
        print(format_errors([exc], fmt), file=out if fmt == "json" else err)
        return 1
    print(json.dumps(ast_to_json(module), indent=2, ensure_ascii=False), file=out)
    return 0


def register(sub: Any) -> None:
    """Add ``parse`` to the subcommand parsers ``sub``."""
    pa = sub.add_parser("parse", help="print a policy's AST as JSON")
    pa.add_argument("file", help="a .rego file")
    pa.add_argument("-f", "--format", choices=("json", "pretty"), default="pretty", help="error format")
    pa.add_argument("--v0-compatible", action="store_true", help="parse with Rego v0 syntax")
    pa.set_defaults(func=cmd_parse)
