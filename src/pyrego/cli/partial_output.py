"""``pyrego eval --partial``: partial evaluation results as ``opa eval`` prints them.

- ``json``: ``{"partial": {"queries": [...], "modules": [...]}}`` with the
  residual queries and support modules in OPA's AST JSON (empty parts left
  out, as OPA's ``omitempty`` fields);
- ``pretty``: a table with a row per query (``Query 1``) and per support
  module (``Support 1``), each formatted as ``opa fmt`` would, or
  ``undefined`` when there is no query;
- ``source``: ``# Query 1`` followed by the formatted query, then ``#
  Module 1`` and each support module.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from pyrego.ast import nodes as ast

if TYPE_CHECKING:  # (partial evaluation is loaded when --partial asks for it)
    from pyrego.partial import PartialResult

__all__ = ["add_partial_arguments", "run_partial", "format_partial"]


def add_partial_arguments(parser: argparse.ArgumentParser) -> None:
    """``--partial`` and ``--unknowns`` (repeatable) on the eval command."""
    parser.add_argument("--partial", action="store_true", help="partially evaluate the query (with --unknowns unknown)")
    parser.add_argument(
        "-u", "--unknowns", action="append", metavar="REF", help="a ref unknown in partial evaluation (repeatable; default input)"
    )


def run_partial(engine: Any, query: str, ns: argparse.Namespace, out: TextIO) -> int:
    """Partially evaluate ``query`` with the engine as loaded; print the result; the exit status."""
    result = engine.eval_partial(query, unknowns=ns.unknowns or ["input"])
    text = format_partial(result, ns.format)
    if text:
        print(text, file=out)
    defined = bool(result.queries)
    if getattr(ns, "fail", False) and not defined:
        return 1
    if getattr(ns, "fail_defined", False) and defined:
        return 1
    return 0


def format_partial(result: PartialResult, fmt: str) -> str:
    if fmt == "source":
        return source_text(result)
    if fmt == "pretty":
        return pretty_text(result)
    return json_text(result)


# -- json ------------------------------------------------------------------------------------


def json_text(result: PartialResult) -> str:
    from pyrego.ast.opa_json import ModuleJSON
    from pyrego.go_json import marshal

    empty = ast.Module(ast.Ref(ast.Var("data"), ()), (), ())
    writer = ModuleJSON(empty, "", False)
    partial: dict[str, Any] = {}
    if result.queries:
        partial["queries"] = [writer.body(q) for q in result.queries]
    if result.support:
        from pyrego.parse.parser import parse_module

        modules = []
        for m in result.support:
            # OPA's module JSON is made from a module and its text: the formatted text, parsed.
            text = formatted_module(m.text)
            modules.append(ModuleJSON(parse_module(text, ""), text, False).module(False))
        partial["modules"] = modules
    return marshal({"partial": partial})


# -- source and pretty -----------------------------------------------------------------------


def formatted_body(body: ast.Body) -> str:
    """A query as ``opa fmt`` writes a body: one expression per line."""
    if not body:
        return "true"
    from pyrego.formatter import format_module
    from pyrego.partial.output import expr_text

    text = "package p\n\nq if {\n" + "".join("\t" + expr_text(e) + "\n" for e in body) + "}\n"
    try:
        formatted = format_module(text)
    except Exception:  # noqa: BLE001 - fall back to the plain text
        return "\n".join(expr_text(e) for e in body)
    lines = formatted.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("q if"))
    inner = []
    for line in lines[start + 1 :]:
        if line == "}":
            break
        inner.append(line[1:] if line.startswith("\t") else line)
    if not inner:  # a one-line body `q if x`
        return lines[start][len("q if ") :].strip()
    return "\n".join(inner)


def formatted_module(text: str) -> str:
    from pyrego.formatter import format_module

    try:
        return format_module(text)
    except Exception:  # noqa: BLE001 - fall back to the plain text
        return text


def source_text(result: PartialResult) -> str:
    parts = []
    for i, q in enumerate(result.queries):
        parts.append(f"# Query {i + 1}\n{formatted_body(q)}\n")
    for i, m in enumerate(result.support):
        parts.append(f"# Module {i + 1}\n{formatted_module(m.text)}")
    return "".join(parts).rstrip("\n")


def pretty_text(result: PartialResult) -> str:
    if not result.queries:
        return "undefined"
    rows = [(f"Query {i + 1}", formatted_body(q)) for i, q in enumerate(result.queries)]
    rows += [(f"Support {i + 1}", formatted_module(m.text).strip("\n")) for i, m in enumerate(result.support)]
    rows = [(k, v.replace("\t", "  ")) for k, v in rows]
    left = max(len(k) for k, _ in rows)
    right = max(len(line) for _, v in rows for line in v.split("\n"))
    sep = "+" + "-" * (left + 2) + "+" + "-" * (right + 2) + "+"
    out = [sep]
    for key, value in rows:
        for n, line in enumerate(value.split("\n")):
            out.append(f"| {(key if n == 0 else '').ljust(left)} | {line.ljust(right)} |")
        out.append(sep)
    return "\n".join(out)

