"""``pyrego check PATH...``: parse and compile policies, as ``opa check`` does.

Every ``.rego`` file under the paths (other files are left out) is parsed and
the modules are compiled together, with OPA's type checker on. Nothing is
printed when all is well; otherwise the errors are printed on stderr as OPA
prints them and the exit status is 1:

- parse errors (one per file): ``1 error occurred during loading: x.rego:3:
  rego_parse_error: ...`` with OPA's detail lines (the source line and a
  caret), ``N errors occurred during loading:`` for several;
- compile errors, every error of the first compile stage that fails (up to
  ``--max-errors``, then OPA's ``error limit reached``): ``N errors
  occurred:`` and one ``file:row: code: message`` per line;
- ``-f json``: ``{"errors": [...]}``, each with message, code, location (and
  a parse error's details).

Options: ``-S/--strict`` (OPA's strict mode: :mod:`pyrego.compile.checks`),
``-m/--max-errors N`` (default 10; 0 or less: no limit), ``--ignore GLOB``
(file and folder names to leave out, repeatable or comma-separated),
``--capabilities FILE|VERSION`` (only the builtins it lists),
``--v0-compatible`` (Rego v0 syntax), ``--v0-v1`` (policies that must be both
v0 and v1: v0 syntax with v1's checks), ``--v1-compatible`` (the default),
``-s/--schema FILE|DIR`` (the input schema, or a folder of schemas that
``# METADATA`` blocks name: :mod:`pyrego.typecheck.schemas`).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, TextIO

from pyrego.cli.output import PlainError, UsageError, format_errors
from pyrego.errors import Location, RegoError, RegoParseError

#: --format values, as opa check names them.
FORMATS = ("pretty", "json")


class _Failed(Exception):
    """Errors to print (loading ones are told as such)."""

    def __init__(self, errors: Sequence[RegoError | PlainError], loading: bool = False) -> None:
        super().__init__(f"{len(errors)} errors")
        self.errors = list(errors)
        self.loading = loading


def cmd_check(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego check``: print the errors of the policies under the paths; exit 1 if there are any."""
    if not ns.paths:
        raise UsageError("specify at least one file")
    if sum(bool(x) for x in (ns.v0_compatible, ns.v0_v1)) > 1:
        raise UsageError("specify --v0-compatible or --v0-v1, not both")
    mode = "v0v1" if ns.v0_v1 else ("v0" if ns.v0_compatible else "v1")
    ignore = [p for arg in ns.ignore or [] for p in arg.split(",") if p]
    try:
        capabilities = _capabilities(ns.capabilities, mode) if ns.capabilities is not None else None
        schemas = _read_schemas(ns.schema) if ns.schema is not None else None
        check_policies(
            _rego_files(ns.paths, ignore),
            mode=mode,
            strict=bool(ns.strict),
            limit=ns.max_errors,
            capabilities=capabilities,
            schemas=schemas,
        )
    except _Failed as exc:
        print(_render(exc.errors, ns.format, exc.loading), file=err)
        return 1
    except PlainError as exc:
        print(_render([exc], ns.format, False), file=err)
        return 1
    return 0


def check_policies(
    texts: dict[str, str],
    *,
    mode: str = "v1",
    strict: bool = False,
    limit: int = 10,
    capabilities: dict[str, Any] | None = None,
    schemas: dict[tuple[str, ...], Any] | None = None,
) -> None:
    """Parse and compile ``texts`` (file name -> policy) as ``opa check`` does;
    raises :class:`_Failed` with the errors to report.

    ``mode``: ``v1``, ``v0`` or ``v0v1`` (v0 syntax that must also pass v1's checks);
    ``schemas``: by path, as :func:`pyrego.loader.read_schemas` reads them."""
    from pyrego.compile.checks import check_deprecated_builtins, check_modules
    from pyrego.engine import Engine

    modules = {}
    parse_errors: list[RegoError | PlainError] = []
    for name in sorted(texts):
        try:
            modules[name] = _parse(texts[name], name, mode)
        except RegoError as exc:
            exc.attach_text(texts[name])
            parse_errors.append(exc)
    if parse_errors:
        raise _Failed(parse_errors, loading=True)
    if not modules:
        return
    try:
        # OPA's early stages on the modules as parsed here (which know a
        # --v0-v1 module must pass v1's checks), with the error limit asked for
        check_modules(modules.values(), strict=strict, limit=limit)
        engine = Engine()
        engine.set_rego_v0(mode != "v1")
        engine.set_strict(strict)
        engine.set_type_check(True)
        if capabilities is not None:
            engine.set_capabilities(capabilities)
        for path, schema in (schemas or {}).items():
            engine.set_schema(path, schema)
        engine.add_policies(texts)
        engine.compile()
        check_deprecated_builtins(modules.values(), strict=strict, limit=limit)
    except RegoError as exc:
        raise _Failed(_limited(list(getattr(exc, "errors", None) or [exc]), limit)) from None


def _limited(errors: list[RegoError], limit: int) -> list[RegoError | PlainError]:
    """At most ``limit`` errors, then OPA's marker (as OPA's compiler adds it on
    reaching its limit). Stages that stop at ten by themselves keep their ten."""
    from pyrego.errors import RegoCompileError

    real = [e for e in errors if not (e.location is None and e.message == "error limit reached")]
    if 0 < limit <= len(real):
        return [*real[:limit], RegoCompileError("error limit reached")]
    return list(errors)


def _parse(text: str, name: str, mode: str) -> Any:
    from pyrego.parse.parser import Parser, parse_module

    if mode != "v0v1":
        return parse_module(text, name, rego_v1=mode == "v1")
    # OPA's RegoV0CompatV1: the v0 grammar (keywords only where imported),
    # with v1's rule checks (`if` and `contains` required, as after `import rego.v1`)
    parser = Parser(text, name, False)
    parser.v1_checks = True
    try:
        return parser.module()
    except RegoError:
        raise
    except RecursionError:
        raise RegoParseError("max parsing recursion depth exceeded", Location(name, 1, 1)) from None
    finally:
        parser.cache.clear()


def _rego_files(paths: Sequence[str], ignore: Sequence[str]) -> dict[str, str]:
    """The ``.rego`` files under ``paths``, named as OPA's loader names them
    (a path as given, files in folders joined to it); unreadable paths are loading errors."""
    texts: dict[str, str] = {}
    errors: list[RegoError | PlainError] = []
    for arg in paths:
        for name, error in _walk(arg, ignore, 0):
            if error is not None:
                errors.append(PlainError(error))
                continue
            try:
                texts[name] = Path(name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                errors.append(PlainError(f"{name}: {exc}"))
    if errors:
        raise _Failed(errors, loading=True)
    return texts


def _walk(path: str, ignore: Sequence[str], depth: int) -> Iterator[tuple[str, str | None]]:
    """(file name, None) for each ``.rego`` file, (path, message) for a path that cannot be read."""
    try:
        is_dir = os.path.isdir(path)
        if not is_dir and not os.path.exists(path):
            raise FileNotFoundError
    except OSError:
        yield path, f"stat {path}: no such file or directory"
        return
    base = os.path.basename(os.path.normpath(path))
    # OPA's --ignore applies below the paths given; non-Rego files are never loaded
    if depth > 0 and any(fnmatchcase(base, p) for p in ignore):
        return
    if not is_dir:
        if path.endswith(".rego"):
            yield path, None
        return
    try:
        names = sorted(os.listdir(path))
    except OSError as exc:
        yield path, f"open {path}: {exc.strerror.lower() if exc.strerror else exc}"
        return
    for child in names:
        yield from _walk(os.path.normpath(os.path.join(path, child)), ignore, depth + 1)


def _capabilities(arg: str, mode: str) -> dict[str, Any]:
    """A capabilities file, or a version pyrego ships (as OPA's --capabilities takes either)."""
    from pyrego.capabilities import CapabilitiesError, load_version

    path = Path(arg)
    if path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise PlainError(f"{arg}: invalid capabilities file: {exc}") from None
        if not isinstance(doc, dict):
            raise PlainError(f"{arg}: invalid capabilities file: not an object")
        return doc
    try:
        return load_version(arg)
    except CapabilitiesError:
        raise PlainError(f"no such file or capabilities version found: {arg}") from None


def _read_schemas(arg: str) -> dict[tuple[str, ...], Any]:
    """The schema files (JSON or YAML), read before any policy as OPA does."""
    from pyrego.errors import DataError
    from pyrego.loader import read_schemas

    try:
        return read_schemas(arg)
    except DataError as exc:
        raise PlainError(exc.message) from None


def _render(errors: Sequence[RegoError | PlainError], fmt: str, loading: bool) -> str:
    if fmt == "json":
        from pyrego.go_json import marshal

        return marshal({"errors": [_error_entry(e) for e in errors]})
    if not loading:
        return format_errors(errors, fmt)
    n = len(errors)
    head = "1 error occurred during loading: " if n == 1 else f"{n} errors occurred during loading:\n"
    return head + "\n".join(str(e) for e in errors)


def _error_entry(err: RegoError | PlainError) -> dict[str, Any]:
    """One error as OPA's presentation writes it: message, code, location, details."""
    if isinstance(err, PlainError):
        return {"message": err.message}
    out: dict[str, Any] = {"message": err.message, "code": err.code}
    loc = err.location
    if loc is not None:
        out["location"] = {"file": loc.file, "row": loc.row, "col": loc.col}
        detail = err.detail()
        if detail is not None:
            out["details"] = {"line": detail[0], "idx": detail[1]}
    return out


def register(sub: Any) -> None:
    """Add ``check`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "check",
        help="check Rego source files for parse and compile errors",
        description="Check Rego source files for parse and compilation errors (like opa check). "
        "Nothing is printed when they compile; otherwise the errors, and the exit status is 1.",
        epilog="Example: pyrego check --strict policies/",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="Rego files or folders")
    p.add_argument("-f", "--format", choices=FORMATS, default="pretty", help="output format (default pretty)")
    p.add_argument("-S", "--strict", action="store_true", help="enable compiler strict mode")
    p.add_argument(
        "-m", "--max-errors", type=int, default=10, metavar="N",
        help="set the number of errors to allow before compilation fails early (default 10; 0: no limit)",
    )
    p.add_argument("--ignore", action="append", metavar="GLOB", help="file and folder names to ignore (repeatable, or comma-separated)")
    p.add_argument("--capabilities", metavar="FILE|VERSION", help="capabilities file or version (only the builtins it lists)")
    p.add_argument("-s", "--schema", metavar="FILE|DIR", help="JSON schema of the input (a file), or schemas # METADATA names (a folder)")
    p.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    p.add_argument("--v0-v1", action="store_true", help="policies must be compatible with both Rego v0 and v1")
    p.add_argument("--v1-compatible", action="store_true", help="parse policies with Rego v1 syntax (the default)")
    p.set_defaults(func=cmd_check)
