"""The ``pyrego`` command line.

One module per subcommand (``eval_cmd``, ``parse_cmd``, ...), each with a
``register(subparsers)`` function; :data:`COMMANDS` lists them in the order
``pyrego --help`` shows them. Output and error rendering shared by all of them
is in :mod:`pyrego.cli.output`.

Errors are printed as OPA prints them: a JSON ``{"errors": [...]}`` object in
``json`` format, ``N error(s) occurred: file:row:col: code: message`` with a
caret line otherwise; the exit status is 1 (2 for usage errors).

``pyrego`` alone prints the help and exits 0, as ``opa`` alone does (a root
command without an action of its own); ``pyrego --version`` prints what
``pyrego version`` prints.

:func:`main` imports only the module of the subcommand it runs: the other
subcommands get a parser with their one-line help (:data:`HELP`, checked by a
test against what their ``register`` says), so ``pyrego version`` never loads
the engine. :func:`build_parser` without a command registers them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys

TYPE_CHECKING = False  # (not typing's: pyrego version need not import typing)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from pyrego.cli.eval_cmd import load_data_args
    from pyrego.cli.output import UsageError, format_errors, format_result

__all__ = ["COMMANDS", "HELP", "UsageError", "build_parser", "format_errors", "format_result", "load_data_args", "main"]

#: Subcommand modules (relative to this package), in help order.
COMMANDS: tuple[str, ...] = ("eval_cmd", "test_cmd", "check_cmd", "parse_cmd", "fmt_cmd", "inspect_cmd", "capabilities_cmd", "deps_cmd", "compile_cmd", "build_cmd", "sign_cmd", "run_cmd", "version_cmd")

#: Each subcommand's line in ``pyrego --help`` (its module's ``register`` says the same).
HELP: dict[str, str] = {
    "eval": "evaluate a Rego query",
    "test": "run Rego tests",
    "check": "check Rego source files for parse and compile errors",
    "parse": "parse a Rego file and print its AST",
    "fmt": "format Rego source files (as opa fmt)",
    "inspect": "summarise a bundle, a bundle directory or a Rego file",
    "capabilities": "print the capabilities of pyrego (builtins, keywords, features)",
    "deps": "print the base and virtual documents a query depends on",
    "compile": "compile a policy decision into a data filter (SQL or UCAST)",
    "build": "build an OPA bundle",
    "sign": "generate an OPA bundle signature",
    "run": "serve policies over OPA's REST API (pyrego run --server)",
    "version": "print the version",
}


# Names this package re-exports, imported on first use (``pyrego version`` needs none).
_LAZY = {
    "load_data_args": "pyrego.cli.eval_cmd",
    "UsageError": "pyrego.cli.output",
    "format_errors": "pyrego.cli.output",
    "format_result": "pyrego.cli.output",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``pyrego`` command; with ``command``, only
    that subcommand's module is imported (the others parse nothing: they are
    listed for the help and the choices)."""
    ap = argparse.ArgumentParser(
        prog="pyrego", description="A Rego policy engine that compiles policies to Python.", allow_abbrev=False
    )
    ap.add_argument(
        "--version", action=_VersionAction, nargs=0, default=argparse.SUPPRESS, help="print the version (as pyrego version)"
    )
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        cmd = name.removesuffix("_cmd")
        if command is None or cmd == command:
            importlib.import_module(f"{__name__}.{name}").register(sub)
        else:
            sub.add_parser(cmd, help=HELP[cmd])
    # `pyrego bench ...` hands its arguments to the benchmark runner (see main()).
    sub.add_parser("bench", help="run the benchmark suite (pyrego bench --help)", add_help=False)
    return ap


class _VersionAction(argparse.Action):
    """``--version``: what ``pyrego version`` prints, then exit 0."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option_string: str | None = None) -> None:
        from pyrego.cli.version_cmd import cmd_version

        cmd_version(namespace, sys.stdout, sys.stderr)
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """Subcommand parser: no abbreviated long options (``--strict`` never means ``--strict-builtin-errors``)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def _subparser(ap: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    for action in ap._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]  # type: ignore[no-any-return]
    return ap


def _command(args: Sequence[str]) -> str:
    """The subcommand ``args`` name ("" for none): the first argument that is
    not an option (the top level's options take no values)."""
    for arg in args:
        if arg == "--":
            break
        if not arg.startswith("-"):
            return arg
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pyrego`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["bench"]:
        from pyrego.bench.cli import main as bench_main

        return bench_main(args[1:])
    ap = build_parser(_command(args))
    if not args:
        ap.print_help(sys.stdout)  # as opa: the bare command shows its help
        return 0
    try:
        ns, unknown = ap.parse_known_args(args)
        if unknown:
            # Told by the subcommand, with its own usage (not the top level's).
            sub = _subparser(ap, ns.command)
            flags = [a for a in unknown if a.startswith("-")]
            sub.error(f"unknown flag: {flags[0]}" if flags else f"unexpected arguments: {' '.join(unknown)}")
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        return int(ns.func(ns, sys.stdout, sys.stderr))
    except BrokenPipeError:
        return 1
    except Exception as exc:
        status = _error_status(exc)
        if status is None:
            raise
        print(f"pyrego {ns.command}: {exc}", file=sys.stderr)
        return status


def _error_status(exc: Exception) -> int | None:
    """The exit status of a usage error (2) or a load error (1); None for others.

    Their classes are looked up among the imported modules: an error whose
    module was never imported cannot have been raised, and importing them
    here would load for every command what few of them use."""
    output = sys.modules.get("pyrego.cli.output")
    if output is not None and isinstance(exc, output.UsageError):
        return 2
    loader = sys.modules.get("pyrego.loader")
    if loader is not None and isinstance(exc, loader.LoadError):
        return 1
    return None


if __name__ == "__main__":
    sys.exit(main())
