"""``pyrego compile``: a data filter from a policy, as OPA's Compile API answers.

``pyrego compile data.filters.include -d policy.rego --unknowns input.tickets
--target sql --dialect postgresql -i input.json`` prints the API's response
body: ``{"result": {"query": "WHERE ..."}}`` (``masks`` next to ``query``
when a mask rule gives some; ``{}`` when no row can ever pass). ``--target
ucast`` (dialects ``all``, ``minimal``, ``prisma``, ``linq``) gives a UCAST
object. ``--mappings FILE`` renames tables and columns (JSON), ``--mask-rule``
names the rule whose value are the column masks. Without ``--unknowns``,
those the rule's ``# METADATA`` declares (``compile: unknowns:``); when it
declares none either, the command stops with an error naming ``--unknowns``
(exit 2): OPA's Compile API then has no unknowns at all and evaluates the whole
decision, which is no filter, and taking all of ``input`` as unknown would turn
the known request fields into table columns.

Errors (a policy a filter cannot express) print as ``pyrego eval`` prints
them and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from pyrego.cli.eval_cmd import load_data_args
from pyrego.cli.output import PlainError, UsageError, format_errors
from pyrego.errors import RegoError
from pyrego.loader import read_document

#: Told when neither --unknowns nor the rule's metadata names the unknown rows.
NO_UNKNOWNS = (
    "no unknowns: name the table rows the filter is about with --unknowns "
    "(e.g. --unknowns input.tickets, repeatable), or declare them in the rule's "
    "# METADATA (compile: {unknowns: [input.tickets]})"
)


def cmd_compile(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pyrego.engine import Engine
    from pyrego.go_json import marshal

    fmt = ns.format
    engine = Engine()
    try:
        engine.set_rego_v0(bool(ns.v0_compatible))
        load_data_args(engine, ns.data or [])
        document: Any = None
        if ns.input is not None:
            path = Path(ns.input)
            if not path.exists():
                raise PlainError(f"open {ns.input}: no such file or directory")
            document = read_document(path)
        mappings = None
        if ns.mappings is not None:
            try:
                mappings = json.loads(Path(ns.mappings).read_text(encoding="utf-8"))
            except OSError:
                raise PlainError(f"open {ns.mappings}: no such file or directory") from None
            except ValueError as exc:
                raise PlainError(f"{ns.mappings}: invalid JSON: {exc}") from None
        if ns.unknowns is None and not _declares_unknowns(engine, ns.query):
            raise UsageError(NO_UNKNOWNS)
        filters = engine.compile_filters(
            ns.query,
            document,
            unknowns=ns.unknowns,
            target=ns.target,
            dialect=ns.dialect,
            mappings=mappings,
            mask_rule=ns.mask_rule,
        )
    except (RegoError, PlainError) as exc:
        print(format_errors([exc], fmt), file=out if fmt == "json" else err)
        return 2
    print(marshal(response(filters)), file=out)
    return 0


def _declares_unknowns(engine: Any, query: str) -> bool:
    """Whether the ``# METADATA`` of the rule ``query`` names (``data.x.y``) declares unknowns."""
    from pyrego.partial.annotations import declared_unknowns, query_path

    path = query_path(query)
    return path is not None and declared_unknowns(engine.program().tree, path) is not None


def response(filters: dict[str, Any]) -> dict[str, Any]:
    """The Compile API's response body for a filter: no ``result`` when nothing can
    pass, ``masks`` only when there are some (OPA's ``omitempty`` fields)."""
    if filters["query"] is None:
        return {}
    result: dict[str, Any] = {"query": _go_map(filters["query"])}
    if filters.get("masks"):
        result["masks"] = _go_map(filters["masks"])
    return {"result": result}


def _go_map(v: Any) -> Any:
    """Objects with their keys sorted, as Go writes a map."""
    from pyrego.go_json import sorted_map

    if isinstance(v, dict):
        return sorted_map({k: _go_map(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_go_map(x) for x in v]
    return v


def register(sub: Any) -> None:
    """Add ``compile`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "compile",
        help="compile a policy decision into a data filter (SQL or UCAST)",
        description="Partially evaluate a query with table rows unknown and print the filter (OPA's Compile API).",
        epilog="Example: pyrego compile -d filters.rego --unknowns input.tickets -i input.json data.filters.include",
    )
    p.add_argument("query", help="the decision, e.g. data.filters.include")
    p.add_argument("-d", "--data", action="append", metavar="PATH", help="policy or data file, or folder (repeatable)")
    p.add_argument("-i", "--input", metavar="FILE", help="the known input (JSON or YAML)")
    p.add_argument(
        "-u",
        "--unknowns",
        action="append",
        metavar="REF",
        help="unknown rows, e.g. input.tickets (repeatable; needed unless the rule's # METADATA declares them)",
    )
    p.add_argument("--target", default="sql", choices=("sql", "ucast"), help="sql (default) or ucast")
    p.add_argument("--dialect", default="postgresql", help="postgresql (default), mysql, sqlserver, sqlite; ucast: all, minimal, prisma, linq")
    p.add_argument("--mappings", metavar="FILE", help="JSON table and column mappings")
    p.add_argument("--mask-rule", metavar="RULE", help="rule whose value are the column masks, e.g. data.filters.masks")
    p.add_argument("-f", "--format", choices=("json", "pretty"), default="json", help="format of errors (default json)")
    p.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    p.set_defaults(func=cmd_compile)
