"""``pyrego eval``: evaluate a query, as ``opa eval`` does.

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
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..errors import RegoError
from ..loader import LoadError, data_document, iter_files, read_document, read_policy, split_prefix
from .output import UsageError, format_errors, format_result


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


def cmd_eval(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego eval``: evaluate a query and print the result."""
    import pyrego

    fmt: str = ns.format
    engine = pyrego.Engine()
    try:
        engine.set_rego_v0(bool(ns.v0_compatible))
        engine.set_strict_builtin_errors(bool(ns.strict_builtin_errors))
        # As `opa eval` does, the command line reports its environment through opa.runtime().
        from ..builtins.misc import cli_runtime

        engine.set_runtime(cli_runtime())
        load_data_args(engine, ns.data or [])
        if ns.input is not None and ns.stdin_input:
            raise UsageError("specify --input or --stdin-input, not both")
        if ns.input is not None:
            engine.set_input(read_document(Path(ns.input)))
        elif ns.stdin_input:
            from ..runtime.convert import loads

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


def register(sub: Any) -> None:
    """Add ``eval`` to the subcommand parsers ``sub``."""
    ev = sub.add_parser("eval", help="evaluate a Rego query", description="Evaluate a Rego query (like opa eval).")
    ev.add_argument("query", help="the query, e.g. data.authz.allow")
    ev.add_argument("-d", "--data", action="append", metavar="PATH", help="policy or data file, or folder (repeatable)")
    ev.add_argument("-i", "--input", metavar="FILE", help="input document (JSON or YAML)")
    ev.add_argument("-I", "--stdin-input", action="store_true", help="read the input document from stdin")
    ev.add_argument(
        "-f", "--format", choices=("json", "pretty", "raw"), default="json", help="output format (default json)"
    )
    ev.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    ev.add_argument("--strict-builtin-errors", action="store_true", help="builtin errors end the evaluation")
    ev.add_argument("--fail", action="store_true", help="exit 1 when the result is undefined or empty")
    ev.add_argument("--fail-defined", action="store_true", help="exit 1 when the result is defined")
    ev.set_defaults(func=cmd_eval)
