"""The ``pyrego`` command line: ``eval``, ``parse``, ``version`` and ``bench``.

``pyrego eval`` follows ``opa eval`` for the common case::

    pyrego eval -d policy.rego -d data/ -i input.json "data.authz.allow"

- ``-d/--data PATH`` (repeatable): a ``.rego`` policy, a ``.json``/``.yaml``/
  ``.yml`` data file, or a folder searched recursively for those. As in OPA,
  a data file found in a folder is merged at the path of its sub-folders
  relative to that folder (``-d dir`` with ``dir/a/b/data.json`` sets
  ``data.a.b``); a data file named directly is merged at the root. A
  ``prefix.path:`` in front (``-d users:people.json``) mounts the content
  under ``data.users``.
- ``-i/--input FILE`` (JSON or YAML), ``-I/--stdin-input``.
- ``-f/--format json|pretty|raw``; ``--v0-compatible``;
  ``--strict-builtin-errors``; ``--fail`` (exit 1 when the result is
  undefined or empty); ``--fail-defined`` (exit 1 when it is defined).

Errors are printed as OPA prints them: a JSON ``{"errors": [...]}`` object in
``json`` format, ``N error(s) occurred: file:row:col: code: message`` with a
caret line otherwise; the exit status is 1 (2 for usage errors).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from .errors import RegoError
from .loader import LoadError, data_document, iter_files, read_document, read_policy, split_prefix


class UsageError(Exception):
    """A command-line mistake that is not a Rego error (exit status 2)."""


# ---------------------------------------------------------------- loading files


def load_data_args(engine: Any, args: Sequence[str]) -> None:
    """Load every ``-d`` argument into ``engine``: the data, then all policies in one compilation."""
    policies: dict[str, str] = {}
    for arg in args:
        prefix, raw = split_prefix(arg)
        for file in iter_files(Path(raw), prefix):
            if file.is_policy:
                policies[file.name] = read_policy(file)
            else:
                engine.add_data(data_document(file))
    if policies:
        engine.add_policies(policies)


# ---------------------------------------------------------------- output


def _dumps(value: Any, indent: int | None = 2) -> str:
    """JSON text as ``opa eval`` prints it.

    Rego values (sets, non-string keys) are rendered as OPA renders them, with
    object keys sorted; the dicts this module builds for the output envelope
    keep their own key order (``value``, ``text``, ``location``, as OPA's).
    """
    return _render(value, indent, 0)


class _Envelope(dict):  # type: ignore[type-arg]
    """A dict of the output envelope: printed in insertion order, values as Rego values."""


def _render(v: Any, indent: int | None, level: int) -> str:
    from .runtime.convert import to_json_value
    from .runtime.numbers import format_number

    if isinstance(v, _Envelope):
        items = [(k, _render(x, indent, level + 1)) for k, x in v.items()]
        return _join_items(items, indent, level)
    if isinstance(v, list) and v and all(isinstance(x, _Envelope) for x in v):
        return _join([_render(x, indent, level + 1) for x in v], "[", "]", indent, level)
    try:
        plain = to_json_value(v)
    except Exception:  # noqa: BLE001 - anything unusual is shown as text
        plain = str(v)
    return _render_plain(plain, indent, level, format_number)


def _render_plain(v: Any, indent: int | None, level: int, fmt_num: Any) -> str:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float, Decimal)):
        try:
            return str(fmt_num(v))
        except Exception:  # noqa: BLE001 - NaN/inf cannot occur in Rego values
            return json.dumps(str(v))
    if isinstance(v, list):
        return _join([_render_plain(x, indent, level + 1, fmt_num) for x in v], "[", "]", indent, level)
    if isinstance(v, dict):
        items = [(str(k), _render_plain(x, indent, level + 1, fmt_num)) for k, x in v.items()]
        return _join_items(items, indent, level)
    return json.dumps(str(v), ensure_ascii=False)


def _join_items(items: list[tuple[str, str]], indent: int | None, level: int) -> str:
    colon = ": " if indent is not None else ":"
    return _join([json.dumps(k, ensure_ascii=False) + colon + x for k, x in items], "{", "}", indent, level)


def _join(parts: list[str], open_: str, close: str, indent: int | None, level: int) -> str:
    if not parts:
        return open_ + close
    if indent is None:
        return open_ + ",".join(parts) + close
    pad = " " * (indent * (level + 1))
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * (indent * level) + close


def _clean_results(result: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for row in result.get("result") or []:
        exprs = []
        for e in row.get("expressions", []):
            out_e = _Envelope(value=e.get("value"), text=e.get("text", ""))
            loc = e.get("location")
            if loc is not None:
                out_e["location"] = _Envelope(row=loc.get("row"), col=loc.get("col"))
            exprs.append(out_e)
        out = _Envelope(expressions=exprs)
        if row.get("bindings"):
            out["bindings"] = row["bindings"]
        rows.append(out)
    return _Envelope(result=rows) if rows else _Envelope()


def _raw_text(value: Any) -> str:
    return value if isinstance(value, str) else _dumps(value, indent=None)


def format_result(result: dict[str, Any], fmt: str) -> str:
    """Render an ``eval_query`` result as ``opa eval`` does in format ``fmt``."""
    doc = _clean_results(result)
    rows = doc.get("result", [])
    if fmt == "json":
        return _dumps(doc)
    if fmt == "raw":
        lines = []
        for row in rows:
            exprs = row["expressions"]
            if len(exprs) == 1:
                lines.append(_raw_text(exprs[0]["value"]))
            else:
                lines.append(_dumps([e["value"] for e in exprs], indent=None))
        return "\n".join(lines)
    # pretty
    if not rows:
        return "undefined"
    names = sorted({k for row in rows for k in row.get("bindings", {})})
    if not names:
        out = []
        for row in rows:
            exprs = row["expressions"]
            value = exprs[0]["value"] if len(exprs) == 1 else [e["value"] for e in exprs]
            out.append(_dumps(value))
        return "\n".join(out)
    table = [[_dumps(row.get("bindings", {}).get(n), indent=None) if n in row.get("bindings", {}) else "" for n in names] for row in rows]
    return _ascii_table(names, table)


def _ascii_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str], center: bool = False) -> str:
        parts = [(c.center(w) if center else c.ljust(w)) for c, w in zip(cells, widths, strict=True)]
        return "| " + " | ".join(parts) + " |"

    return "\n".join([sep, line(header, center=True), sep, *(line(r) for r in rows), sep])


def format_errors(errors: Sequence[RegoError], fmt: str) -> str:
    """Render errors as ``opa eval`` does: JSON in ``json`` format, text otherwise."""
    if fmt == "json":
        return _dumps(_Envelope(errors=[_error_dict(e) for e in errors]))
    n = len(errors)
    head = "1 error occurred: " if n == 1 else f"{n} errors occurred:\n"
    return head + "\n".join(str(e) for e in errors)


def _error_dict(err: RegoError) -> dict[str, Any]:
    out = _Envelope(message=err.message, code=err.code)
    if err.location is not None:
        loc = err.location
        out["location"] = _Envelope(file=loc.file, row=loc.row, col=loc.col)
    return out


# ---------------------------------------------------------------- commands


def cmd_eval(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego eval``: evaluate a query and print the result."""
    import pyrego

    fmt: str = ns.format
    engine = pyrego.Engine()
    try:
        engine.set_rego_v0(bool(ns.v0_compatible))
        engine.set_strict_builtin_errors(bool(ns.strict_builtin_errors))
        # As `opa eval` does, the command line reports its environment through opa.runtime().
        from pyrego.builtins.misc import cli_runtime

        engine.set_runtime(cli_runtime())
        load_data_args(engine, ns.data or [])
        if ns.input is not None and ns.stdin_input:
            raise UsageError("specify --input or --stdin-input, not both")
        if ns.input is not None:
            engine.set_input(read_document(Path(ns.input)))
        elif ns.stdin_input:
            from .runtime.convert import loads

            engine.set_input(loads(sys.stdin.read(), what="JSON input"))
        result = engine.eval_query(ns.query)
    except LoadError:
        raise  # a path that cannot be read: a message, not a policy error
    except RegoError as exc:
        print(format_errors([exc], fmt), file=out if fmt == "json" else err)
        return 1
    for line in engine.take_prints() if hasattr(engine, "take_prints") else []:
        print(line, file=err)
    text = format_result(result, fmt)
    if text:
        print(text, file=out)
    defined = bool(result.get("result"))
    if ns.fail and not defined:
        return 1
    if ns.fail_defined and defined:
        return 1
    return 0


def ast_to_json(node: Any) -> Any:
    """A JSON-ready view of an AST node: ``{"type": ClassName, field: ...}`` for dataclasses."""
    from .errors import Location

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
    from .parser import parse_module

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


def package_version() -> str:
    """The installed pyrego version."""
    try:
        from importlib.metadata import version

        return version("pyrego")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return getattr(sys.modules.get("pyrego"), "__version__", "unknown")


def cmd_version(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego version``."""
    print(f"pyrego {package_version()}", file=out)
    print("Rego version: v1 (v0 with --v0-compatible)", file=out)
    print(f"Python: {sys.version.split()[0]}", file=out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pyrego`` command."""
    ap = argparse.ArgumentParser(prog="pyrego", description="A Rego policy engine that compiles policies to Python.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ev = sub.add_parser("eval", help="evaluate a Rego query", description="Evaluate a Rego query (like opa eval).")
    ev.add_argument("query", help="the query, e.g. data.authz.allow")
    ev.add_argument("-d", "--data", action="append", metavar="PATH", help="policy or data file, or folder (repeatable)")
    ev.add_argument("-i", "--input", metavar="FILE", help="input document (JSON or YAML)")
    ev.add_argument("-I", "--stdin-input", action="store_true", help="read the input document from stdin")
    ev.add_argument("-f", "--format", choices=("json", "pretty", "raw"), default="json", help="output format (default json)")
    ev.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    ev.add_argument("--strict-builtin-errors", action="store_true", help="builtin errors end the evaluation")
    ev.add_argument("--fail", action="store_true", help="exit 1 when the result is undefined or empty")
    ev.add_argument("--fail-defined", action="store_true", help="exit 1 when the result is defined")
    ev.set_defaults(func=cmd_eval)

    pa = sub.add_parser("parse", help="print a policy's AST as JSON")
    pa.add_argument("file", help="a .rego file")
    pa.add_argument("-f", "--format", choices=("json", "pretty"), default="pretty", help="error format")
    pa.add_argument("--v0-compatible", action="store_true", help="parse with Rego v0 syntax")
    pa.set_defaults(func=cmd_parse)

    ve = sub.add_parser("version", help="print the version")
    ve.set_defaults(func=cmd_version)

    # `pyrego bench ...` hands its arguments to the benchmark runner (see main()).
    sub.add_parser("bench", help="run the benchmark suite (pyrego bench --help)", add_help=False)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pyrego`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["bench"]:
        from .bench.cli import main as bench_main

        return bench_main(args[1:])
    ap = build_parser()
    try:
        ns = ap.parse_args(args)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        return int(ns.func(ns, sys.stdout, sys.stderr))
    except UsageError as exc:
        print(f"pyrego {ns.command}: {exc}", file=sys.stderr)
        return 2
    except LoadError as exc:
        print(f"pyrego {ns.command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
