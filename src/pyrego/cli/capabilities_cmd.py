"""``pyrego capabilities``: print capabilities documents as ``opa capabilities`` does.

With no flag, the capabilities versions pyrego knows, one per line (OPA
lists the versions it embeds; pyrego ships the one it implements);
``--current`` this version's document, ``--version vX`` a known version's,
``--file PATH`` a file's (read and written back as OPA normalises it).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from pyrego.go_json import marshal

DESCRIPTION = """\
Show capabilities for pyrego.

The 'capabilities' command prints capabilities documents: the builtins (with
their type declarations), future keywords, Wasm ABI versions and language
features of a version, in the JSON form of OPA's capabilities files. pyrego
implements every builtin of OPA v1.20.2, so its current capabilities are OPA
v1.20.2's.

Print a list of all existing capabilities version names

    $ pyrego capabilities
    v1.20.2

Print the capabilities of the current version

    $ pyrego capabilities --current
    {
      "builtins": [...],
      "future_keywords": [...],
      "wasm_abi_versions": [...],
      "features": [...]
    }

Print the capabilities of a specific version

    $ pyrego capabilities --version v1.20.2

Print the capabilities of a capabilities file

    $ pyrego capabilities --file ./capabilities.json

With --v0-compatible, --current prints the capabilities for Rego v0 code
(every future keyword; the ref-head and rego.v1-import features).
"""


def cmd_capabilities(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego capabilities``."""
    from pyrego.capabilities import (
        CapabilitiesError,
        current_capabilities,
        known_versions,
        load_version,
        normalise_capabilities,
    )

    doc: dict[str, Any]
    try:
        # The same precedence as OPA: --version, then --file, then --current.
        if ns.version:
            doc = load_version(ns.version)
        elif ns.file:
            doc = normalise_capabilities(_read_json(ns.file))
        elif ns.current:
            doc = current_capabilities(rego_v1=not ns.v0_compatible)
        else:
            print("\n".join(known_versions()), file=out)
            return 0
    except CapabilitiesError as exc:
        print(f"error: {exc}", file=err)
        return 1
    print(marshal(doc), file=out)
    return 0


def _read_json(path: str) -> Any:
    from pyrego.capabilities import CapabilitiesError

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise CapabilitiesError(f"open {path}: no such file or directory") from None
    except OSError as exc:
        raise CapabilitiesError(f"open {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CapabilitiesError(f"{path}: invalid JSON: {exc}") from None


def register(sub: Any) -> None:
    """Add ``capabilities`` to the subcommand parsers ``sub``."""
    ca = sub.add_parser(
        "capabilities",
        help="print the capabilities of pyrego (builtins, keywords, features)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ca.add_argument("--current", action="store_true", help="print current capabilities")
    ca.add_argument("--version", metavar="VERSION", default="", help="print capabilities of a specific version")
    ca.add_argument("--file", metavar="PATH", default="", help="print capabilities defined by a file")
    ca.add_argument("--v0-compatible", action="store_true", help="with --current: the capabilities for Rego v0 code")
    ca.set_defaults(func=cmd_capabilities)
