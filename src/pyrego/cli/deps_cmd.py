"""``pyrego deps QUERY -d PATH...``: a query's dependencies, as ``opa deps`` prints them.

``--format pretty`` (the default) prints OPA's table of base and virtual
documents; ``--format json`` prints ``{"base": [...], "virtual": [...]}``
with each ref as a list of OPA AST terms. Errors (files that cannot be read,
parse and compile errors) are printed on stderr as OPA words them, exit
status 1.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
from typing import Any, TextIO

from pyrego.cli.box_table import render_table
from pyrego.errors import RegoError
from pyrego.go_json import marshal

DESCRIPTION = """\
Print dependencies of provided query.

Dependencies are categorized as either base documents, which is any data loaded
from the outside world, or virtual documents, i.e values that are computed from rules.

Given a policy like this:

    package policy

    allow if is_admin

    is_admin if "admin" in input.user.roles

To evaluate the dependencies of a simple query (e.g. data.policy.allow),
we'd run pyrego deps like demonstrated below:

    $ pyrego deps --data policy.rego data.policy.allow
    ┌──────────────────┬──────────────────────┐
    │  BASE DOCUMENTS  │  VIRTUAL DOCUMENTS   │
    ├──────────────────┼──────────────────────┤
    │ input.user.roles │ data.policy.allow    │
    │                  │ data.policy.is_admin │
    └──────────────────┴──────────────────────┘

From the output we're able to determine that the allow rule depends on
the input.user.roles base document, as well as the virtual document (rule)
data.policy.is_admin.

-d/--data takes .rego files or folders (searched recursively for .rego
files; data files play no part); -b/--bundle takes bundle folders or .tar.gz
bundles, whose manifest may set the Rego version.
"""


class DepsError(Exception):
    """An error to print as it is (OPA's wording)."""


def _ignored(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def _rego_files(path: str, ignore: list[str]) -> list[str]:
    if not os.path.exists(path):
        raise DepsError(f"stat {path}: no such file or directory")
    if os.path.isfile(path):
        return [path]
    out = []
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not _ignored(d, ignore))
        for f in sorted(files):
            if f.endswith(".rego") and not _ignored(f, ignore):
                out.append(os.path.join(folder, f))
    return out


def _errors_text(errs: list[RegoError]) -> str:
    from pyrego.bundle.inspect import errors_text

    return errors_text(errs)


def load_modules(ns: argparse.Namespace) -> list[Any]:
    """The modules of every ``-d`` and ``-b`` path, parsed."""
    from pyrego.bundle.inspect import InspectError
    from pyrego.parse.parser import parse_module

    rego_v1 = not ns.v0_compatible
    modules = []
    for path in ns.data or []:
        for name in _rego_files(path, ns.ignore or []):
            if not name.endswith(".rego") and os.path.isfile(path):
                continue  # a data file: no part in the analysis
            try:
                with open(name, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as exc:
                raise DepsError(f"{name}: {exc}") from None
            try:
                modules.append(parse_module(text, name, rego_v1=rego_v1))
            except RegoError as exc:
                raise DepsError(_errors_text(getattr(exc, "errors", None) or [exc])) from None
    for path in ns.bundle or []:
        try:
            modules.extend(_bundle_modules(path, rego_v1))
        except InspectError as exc:
            raise DepsError(str(exc)) from None
    return modules


def _bundle_modules(path: str, rego_v1: bool) -> list[Any]:
    from pyrego.bundle.inspect import bundle_modules

    return bundle_modules(path, rego_v1)


def cmd_deps(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego deps QUERY``."""
    from pyrego.compile.deps import query_dependencies, ref_text
    from pyrego.compile.pipeline import compile_modules
    from pyrego.parse.parser import parse_query

    if len(ns.query) != 1:
        print("Error: specify exactly one query argument", file=err)
        return 1
    try:
        try:
            query = parse_query(ns.query[0], rego_v1=not ns.v0_compatible)
        except RegoError as exc:
            raise DepsError(_errors_text(getattr(exc, "errors", None) or [exc])) from None
        modules = load_modules(ns)
        try:
            tree = compile_modules(modules)
        except RegoError as exc:
            raise DepsError(_errors_text(getattr(exc, "errors", None) or [exc])) from None
        base, virtual = query_dependencies(tree, query)
    except DepsError as exc:
        print(exc, file=err)
        return 1
    if ns.format == "json":
        doc: dict[str, Any] = {}
        if base:
            doc["base"] = base
        if virtual:
            doc["virtual"] = virtual
        print(marshal(doc), file=out)
        return 0
    text = pretty_dependencies([ref_text(r) for r in base], [ref_text(r) for r in virtual])
    if text:
        print(text, file=out)
    return 0


def pretty_dependencies(base: list[str], virtual: list[str]) -> str:
    """OPA's table: two columns when there are both kinds, else one."""
    if base and virtual:
        n = max(len(base), len(virtual))
        rows = [[base[i] if i < len(base) else "", virtual[i] if i < len(virtual) else ""] for i in range(n)]
        return render_table(["Base Documents", "Virtual Documents"], rows)
    if base:
        return render_table(["Base Documents"], [[b] for b in base])
    if virtual:
        return render_table(["Virtual Documents"], [[v] for v in virtual])
    return ""


def register(sub: Any) -> None:
    """Add ``deps`` to the subcommand parsers ``sub``."""
    de = sub.add_parser(
        "deps",
        help="print the base and virtual documents a query depends on",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    de.add_argument("query", nargs="*", metavar="QUERY", help="the query, e.g. data.policy.allow")
    de.add_argument("-d", "--data", action="append", metavar="PATH", help="policy file or folder (repeatable)")
    de.add_argument("-b", "--bundle", action="append", metavar="PATH", help="bundle folder or .tar.gz (repeatable)")
    de.add_argument("--ignore", action="append", metavar="GLOB", help="file and folder names to leave out (repeatable)")
    de.add_argument(
        "-f", "--format", choices=("pretty", "json"), default="pretty", help="set output format (default pretty)"
    )
    de.add_argument("--v0-compatible", action="store_true", help="read policies and the query with Rego v0 syntax")
    de.add_argument("--v1-compatible", action="store_true", help="read them with Rego v1 syntax (the default)")
    de.set_defaults(func=cmd_deps)
