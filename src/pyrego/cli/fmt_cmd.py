"""``pyrego fmt [PATH...]``: format Rego files as ``opa fmt`` does.

Without a path (or with ``-``) the module is read from stdin and written to
stdout (the other options are about files, as in OPA). Folders are searched recursively for ``.rego`` files; a file that is
not ``.rego`` is skipped. ``-l`` lists the files whose formatting differs,
``-d`` shows a unified diff, ``-w`` rewrites the files, ``--fail`` makes a
difference an error (alone or with ``-w``, before anything is written). The first file that cannot be formatted stops the run
(exit status 2; 1 for a missing path or stdin), as in OPA.
"""

from __future__ import annotations

import argparse
import difflib
import os
from pathlib import Path
from typing import Any, TextIO

from pyrego.cli.output import format_errors
from pyrego.errors import RegoError

__all__ = ["register", "cmd_fmt"]


class _Failure(Exception):
    """Stops the run: the message is printed to stderr. As ``opa fmt``: a file
    that cannot be formatted, or differs under ``--fail``, exits with 2; a
    path that does not exist, or stdin that cannot be formatted, with 1."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def _errors(exc: RegoError) -> list[RegoError]:
    return list(getattr(exc, "errors", None) or [exc])


def _format(ns: argparse.Namespace, name: str, text: str) -> str:
    from pyrego.formatter import format_module

    v0_to_v1 = bool(ns.v0_v1)
    rego_v1 = not ns.v0_compatible
    formatted = format_module(text, name, rego_v1=rego_v1, v0_to_v1=v0_to_v1)
    # As `opa fmt --check-result`: the output must parse in the output's version.
    from pyrego.parse.parser import parse_module

    try:
        parse_module(formatted, "formatted", rego_v1=rego_v1 or v0_to_v1)
    except RegoError as exc:
        raise _Failure(
            f"{name} was successfully formatted, but the result is invalid: {format_errors(_errors(exc), 'pretty')}"
        ) from None
    return formatted


def _rego_files(path: Path) -> list[Path]:
    """The ``.rego`` files at ``path``, walked in lexical order as Go's filepath.Walk does."""
    if not path.exists():
        raise _Failure(f"lstat {path}: no such file or directory", 1)
    if path.is_file():
        return [path] if path.suffix == ".rego" else []
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found.extend(Path(root, f) for f in sorted(files) if f.endswith(".rego"))
    return sorted(found, key=lambda p: p.parts)


def _format_file(ns: argparse.Namespace, path: Path, out: TextIO) -> bool:
    """Format one file as asked; True when its formatting differs."""
    name = str(path)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _Failure(f"failed to open file: {exc}") from None
    try:
        formatted = _format(ns, name, text)
    except RegoError as exc:
        raise _Failure(f"failed to format Rego source file: {format_errors(_errors(exc), 'pretty')}") from None
    changed = formatted != text
    if ns.list:
        if changed:
            print(name, file=out)
    elif ns.diff:
        if changed:
            diff = difflib.unified_diff(
                text.splitlines(keepends=True),
                formatted.splitlines(keepends=True),
                fromfile=f"{name} (original)",
                tofile=f"{name} (formatted)",
            )
            out.write("".join(_terminated(line) for line in diff))
    elif changed and ns.fail:
        raise _Failure("unexpected diff")  # (as OPA: before anything is written)
    elif ns.write:
        if changed:
            path.write_text(formatted, encoding="utf-8")
    else:
        out.write(formatted)
    if changed and ns.fail:
        raise _Failure("unexpected diff")
    return changed


def _terminated(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def cmd_fmt(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego fmt``: see the module docs."""
    import sys

    paths: list[str] = ns.paths or ["-"]
    try:
        for arg in paths:
            if arg == "-":
                text = sys.stdin.read()
                try:
                    formatted = _format(ns, "stdin", text)
                except RegoError as exc:
                    raise _Failure(format_errors(_errors(exc), "pretty"), 1) from None
                out.write(formatted)  # (as OPA: -l, -d, -w and --fail are about files)
                continue
            for path in _rego_files(Path(arg)):
                _format_file(ns, path, out)
    except _Failure as exc:
        out.flush()
        print(str(exc), file=err)
        return exc.status
    return 0


def register(sub: Any) -> None:
    """Add ``fmt`` to the subcommand parsers ``sub``."""
    fm = sub.add_parser("fmt", help="format Rego source files (as opa fmt)")
    fm.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (none or '-': stdin to stdout)")
    fm.add_argument("-w", "--write", action="store_true", help="overwrite the original source file")
    fm.add_argument("-l", "--list", action="store_true", help="list all files who would change when formatted")
    fm.add_argument("-d", "--diff", action="store_true", help="only display a diff of the changes")
    fm.add_argument(
        "--fail", action="store_true", help="exit with status 2 when a file would be reformatted (as opa fmt --fail)"
    )
    fm.add_argument(
        "--v0-compatible", action="store_true", help="read and write Rego v0 (as OPA before v1.0)"
    )
    fm.add_argument(
        "--v0-v1",
        action="store_true",
        help="read Rego v0 and write code that is valid v0 and v1 (if, contains, import rego.v1)",
    )
    fm.set_defaults(func=cmd_fmt)
