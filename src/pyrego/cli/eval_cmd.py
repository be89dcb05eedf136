"""``pyrego eval``: evaluate a query, as ``opa eval`` does.

- ``-d/--data PATH`` (repeatable): a ``.rego`` policy, a ``.json``/``.yaml``/
  ``.yml`` data file, or a folder searched recursively for those. As in OPA,
  a data file found in a folder is merged at the path of its sub-folders
  relative to that folder (``-d dir`` with ``dir/a/b/data.json`` sets
  ``data.a.b``); a data file named directly is merged at the root. A
  ``prefix.path:`` in front (``-d users:people.json``) mounts the content
  under ``data.users``.
- ``-b/--bundle PATH`` (repeatable): a bundle folder or ``.tar.gz`` archive
  (:mod:`pyrego.bundle`); a ``-d`` argument that is a ``.tar.gz`` archive is
  read as a bundle too, as in OPA. Signed bundles are checked with
  ``--verification-key``, ``--verification-key-id``, ``--signing-alg``,
  ``--scope``, ``--exclude-files-verify``; ``--skip-verify`` skips it.
- ``-i/--input FILE`` (JSON or YAML), ``-I/--stdin-input``; ``--stdin``
  reads the query from standard input.
- ``-f/--format json|values|bindings|pretty|raw|source|discard`` (OPA's
  presentations); ``--package``, ``--import``: the package and imports the
  query is resolved in; ``--timeout`` (a Go duration such as ``5s``);
  ``--capabilities FILE`` (only the builtins that file lists);
  ``--v0-compatible``; ``-S/--strict`` (OPA's strict mode:
  :mod:`pyrego.compile.checks`); ``--strict-builtin-errors``; ``--fail`` (exit 1 when
  the result is undefined or empty); ``--fail-defined`` (exit 1 when it is
  defined); ``--fail-non-empty`` (exit 1 when it is not empty). Errors exit
  with status 2, as in OPA. ``--no-cache``: do not use the on-disk cache of
  compiled code (:mod:`pyrego.codegen.disk_cache`).
- OPA's type checker runs on the policies and the query, as in ``opa eval``
  (:mod:`pyrego.typecheck`); ``-s/--schema FILE|DIR``: the input's JSON
  schema, or a folder of schemas ``# METADATA`` blocks name.
- ``--explain``, ``--metrics``, ``--instrument``, ``--profile``,
  ``--coverage``: see :mod:`pyrego.cli.eval_extras`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pyrego.cli.eval_extras import EvalExtras, add_arguments
from pyrego.cli.output import PlainError, UsageError, format_errors
from pyrego.cli.partial_output import add_partial_arguments, run_partial
from pyrego.errors import RegoError
from pyrego.loader import LoadError, data_document, iter_files, read_policy, split_prefix

#: ``--format`` values, as ``opa eval`` names them.
FORMATS = ("json", "values", "bindings", "pretty", "source", "raw", "discard")


def load_data_args(
    engine: Any,
    args: Sequence[str],
    timers: dict[str, int] | None = None,
    *,
    bundles: Sequence[str] = (),
    ns: argparse.Namespace | None = None,
) -> None:
    """Load every ``-d`` argument into ``engine``: the data, then all policies in one compilation.

    ``bundles`` (``-b``), and ``-d`` arguments that are ``.tar.gz`` archives,
    are read as bundles (:mod:`pyrego.bundle`), checked with the
    verification flags of ``ns``. ``timers``: adds the nanoseconds spent
    parsing (``"parse"``) and compiling (``"compile"``) the policies to it."""
    from pyrego.cli.bundle_args import is_archive_path

    archives = [a for a in args if is_archive_path(a)]
    if bundles or archives:
        _load_with_bundles(engine, [a for a in args if a not in archives], [*bundles, *archives], ns, timers)
        return
    policies = _read_files(engine, args)
    if policies:
        from pyrego.codegen import disk_cache

        disk_cache.use_context(policies, "eval")  # the code cache's pack for this policy set, when enabled
        start = time.perf_counter_ns()
        try:
            engine.add_policies(policies)
        finally:
            if timers is not None:
                timers["parse"] += time.perf_counter_ns() - start
        start = time.perf_counter_ns()
        try:
            engine.compile()  # errors of the whole program are loading errors, as in opa eval
        finally:
            if timers is not None:
                timers["compile"] += time.perf_counter_ns() - start


def _read_files(engine: Any, args: Sequence[str]) -> dict[str, str]:
    """The ``-d`` paths' files, as ``opa eval`` reads them: data files merged
    into ``engine`` as they come, policy texts returned by module name."""
    policies: dict[str, str] = {}
    for arg in args:
        prefix, raw = split_prefix(arg)
        try:
            files = list(iter_files(Path(raw), prefix))
        except LoadError:
            raise PlainError(f"stat {raw}: no such file or directory") from None
        for file in files:
            if file.is_policy:
                policies[file.name] = read_policy(file)
            else:
                engine.add_data(data_document(file))
    return policies


def _load_with_bundles(
    engine: Any, args: Sequence[str], bundle_paths: Sequence[str], ns: argparse.Namespace | None, timers: dict[str, int] | None
) -> None:
    """:func:`load_data_args` with bundles: each read, verified and checked
    (roots), then every module parsed with its own Rego version and compiled
    together with the plain ``-d`` files."""
    from pyrego.bundle.model import BundleError
    from pyrego.cli.bundle_args import read_cli_bundles
    from pyrego.parse.parser import parse_module

    rego_v1 = not bool(getattr(ns, "v0_compatible", False))
    for path in bundle_paths:
        if not Path(path).exists():
            raise PlainError(f"stat {path}: no such file or directory")
    start = time.perf_counter_ns()
    try:
        plan = read_cli_bundles(list(bundle_paths), ns or argparse.Namespace(), rego_v1)
    except BundleError as exc:
        raise PlainError(f"bundle {', '.join(bundle_paths)}: {exc}") from None
    policies: dict[str, tuple[str, Any]] = dict(plan.policies)
    engine.add_data(plan.data)
    for name, text in _read_files(engine, args).items():
        policies[name] = (text, parse_module(text, name, rego_v1=rego_v1))
    if timers is not None:
        timers["parse"] += time.perf_counter_ns() - start
    start = time.perf_counter_ns()
    try:
        engine.install_modules(policies)
    finally:
        if timers is not None:
            timers["compile"] += time.perf_counter_ns() - start


def parse_input_text(text: str | bytes) -> Any:
    """The input document in ``text``, read as ``opa eval`` reads ``-i`` and ``-I``
    (OPA's ``util.Unmarshal``): JSON when the text is valid JSON, else YAML,
    whatever the file is called; a leading UTF-8 byte order mark is dropped.

    Raises :class:`~pyrego.errors.DataError` when the text is neither."""
    from pyrego.errors import DataError
    from pyrego.runtime.convert import loads

    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    try:
        return loads(text, what="JSON input")
    except DataError:
        pass
    from pyrego.yaml_safe import load_yaml  # (YAML only when the text is no JSON)

    try:
        return load_yaml(text)
    except Exception as exc:  # noqa: BLE001 - yaml raises many kinds
        raise DataError(f"error converting YAML to JSON: {_yaml_message(exc)}") from None


def _yaml_message(exc: Exception) -> str:
    """A YAML error on one line, as Go's YAML library words it (``yaml: line N: problem``)."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"yaml: line {mark.line + 1}: {problem}"
    return "yaml: " + " ".join(str(exc).split())


def _read_input(ns: argparse.Namespace) -> tuple[bool, Any]:
    """(whether an input was given, the input document)."""
    if ns.input is not None and ns.stdin_input:
        raise UsageError("specify --input or --stdin-input, not both")
    if ns.input is not None:
        path = Path(ns.input)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise PlainError(f"open {ns.input}: no such file or directory") from None
        except OSError as exc:
            raise PlainError(f"open {ns.input}: {exc.strerror or exc}") from None
        return True, parse_input_text(raw)
    if ns.stdin_input:
        return True, parse_input_text(sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read())
    return False, None


def _query_text(ns: argparse.Namespace) -> str:
    if ns.stdin:
        if ns.stdin_input:
            raise UsageError("specify --stdin or --stdin-input, not both")
        if ns.query is not None:
            raise UsageError("specify a query argument or --stdin, not both")
        return sys.stdin.read()
    if ns.query is None:
        raise UsageError("specify a query argument or --stdin")
    return str(ns.query)


def _timeout_seconds(text: str) -> float | None:
    """A Go duration (``5s``, ``1m30s``, ``250ms``); ``0`` means no limit."""
    from pyrego.builtins.time_parse import TimeError, parse_duration

    try:
        ns = parse_duration(text)
    except TimeError as exc:
        raise UsageError(f"invalid argument {text!r} for --timeout: {exc}") from None
    return ns / 1e9 if ns > 0 else None


def _capabilities(path: str) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError:
        raise PlainError(f"open {path}: no such file or directory") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlainError(f"{path}: invalid capabilities file: {exc}") from None
    if not isinstance(doc, dict):
        raise PlainError(f"{path}: invalid capabilities file: not an object")
    return doc


def cmd_eval(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego eval``: evaluate a query and print the result."""
    from pyrego.engine import Engine

    fmt: str = ns.format
    if fmt == "source" and not ns.partial:
        raise UsageError("format source is the output of partial evaluation (--partial)")
    engine = Engine()
    engine.set_type_check(True)  # as opa eval: an ill-typed policy or query is an error
    extras = EvalExtras(ns, engine)
    errors_to = out if fmt == "json" else err
    try:
        query = _query_text(ns)
        engine.set_rego_v0(bool(ns.v0_compatible))
        engine.set_strict_builtin_errors(bool(ns.strict_builtin_errors))
        engine.set_strict(bool(ns.strict))
        if ns.timeout is not None:
            engine.set_eval_timeout(_timeout_seconds(ns.timeout))
        if ns.capabilities is not None:
            engine.set_capabilities(_capabilities(ns.capabilities))
        if ns.schema is not None:
            engine.load_schemas(ns.schema)  # (and so the type check)
        # As `opa eval` does, the command line reports its environment through opa.runtime().
        from pyrego.builtins.misc import cli_runtime

        engine.set_runtime(cli_runtime())
        if not ns.no_cache:
            from pyrego.codegen import disk_cache

            disk_cache.enable_default()
        with extras.loading() as timers:
            load_data_args(engine, ns.data or [], timers, bundles=ns.bundle or [], ns=ns)
        if ns.input_lines is not None:
            from pyrego.cli import eval_lines

            eval_lines.check_arguments(ns)
            return eval_lines.run_input_lines(engine, query, ns, out, err)
        try:
            given, document = _read_input(ns)
        except (RegoError, PlainError) as exc:
            # As opa eval: an input that cannot be read or parsed is told
            # plainly on stderr, whatever the format.
            print(exc.message if isinstance(exc, PlainError) else f"unable to parse input: {exc.message}", file=err)
            return 2
        if given:  # otherwise input stays undefined, as in OPA
            engine.set_input(document)
        if ns.partial:
            return run_partial(engine, query, ns, out)
        result = extras.eval_query(query, package=ns.package, imports=tuple(ns.imports or ()))
    except (RegoError, PlainError) as exc:
        # opa eval's exit status for errors is 2 (1 is for --fail and --fail-defined).
        print(format_errors([exc], fmt), file=errors_to)
        return 2
    for line in engine.take_prints():
        print(line, file=err)
    text = extras.format(result, fmt)
    if text:
        print(text, file=out)
    rows = result.get("result") or []
    defined = bool(rows)
    if ns.fail and not defined:
        return 1
    if ns.fail_defined and defined:
        return 1
    if ns.fail_non_empty and _non_empty(rows):
        return 1
    return 0


def _non_empty(rows: list[dict[str, Any]]) -> bool:
    """OPA's ``--fail-non-empty``: some expression value is not an empty collection (or false)."""
    for row in rows:
        for e in row.get("expressions", []):
            v = e.get("value")
            if isinstance(v, (list, dict, set, frozenset, tuple)):
                if v:
                    return True
            elif v is not False:
                return True
    return False


def register(sub: Any) -> None:
    """Add ``eval`` to the subcommand parsers ``sub``."""
    ev = sub.add_parser(
        "eval",
        help="evaluate a Rego query",
        description="Evaluate a Rego query and print the result (like opa eval).",
        epilog="Example: pyrego eval -d policy.rego -i input.json 'data.authz.allow'",
    )
    ev.add_argument("query", nargs="?", help="the query, e.g. data.authz.allow (or --stdin)")
    ev.add_argument("-d", "--data", action="append", metavar="PATH", help="policy or data file, or folder (repeatable)")
    ev.add_argument("-b", "--bundle", action="append", metavar="PATH", help="bundle folder or .tar.gz archive (repeatable)")
    ev.add_argument("-i", "--input", metavar="FILE", help="input document (JSON or YAML)")
    ev.add_argument("-I", "--stdin-input", action="store_true", help="read the input document from stdin")
    ev.add_argument("--stdin", action="store_true", help="read the query from stdin")
    ev.add_argument("-f", "--format", choices=FORMATS, default="json", help="output format (default json)")
    ev.add_argument("--package", metavar="PKG", help="resolve the query in this package (e.g. authz)")
    ev.add_argument("--import", dest="imports", action="append", metavar="IMPORT", help="import for the query (repeatable)")
    ev.add_argument("--timeout", metavar="DURATION", help="evaluation time limit, e.g. 5s (0: none)")
    ev.add_argument("--capabilities", metavar="FILE", help="allow only the builtins an OPA capabilities file lists")
    ev.add_argument("-s", "--schema", metavar="FILE|DIR", help="JSON schema of the input (a file), or schemas # METADATA names (a folder)")
    ev.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache of compiled policies")
    ev.add_argument("--strict-builtin-errors", action="store_true", help="builtin errors end the evaluation")
    ev.add_argument("-S", "--strict", action="store_true", help="enable compiler strict mode")
    ev.add_argument("--fail", action="store_true", help="exit 1 when the result is undefined or empty")
    ev.add_argument("--fail-defined", action="store_true", help="exit 1 when the result is defined")
    ev.add_argument("--fail-non-empty", action="store_true", help="exit 1 when the result is not empty")
    from pyrego.cli.bundle_args import add_verification_arguments

    add_verification_arguments(ev)
    add_arguments(ev)
    add_partial_arguments(ev)
    ev.add_argument(
        "--input-lines", metavar="FILE|-", help="evaluate a rule path once per JSON line of FILE (- for stdin): one result per line"
    )
    ev.add_argument("--processes", type=int, metavar="N", help="with --input-lines: evaluate in N worker processes")
    ev.set_defaults(func=cmd_eval)
