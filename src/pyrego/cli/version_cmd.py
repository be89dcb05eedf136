"""``pyrego version``."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # (not typing's: this command imports as little as it can)
if TYPE_CHECKING:
    import argparse
    from typing import Any, TextIO


def package_version() -> str:
    """The pyrego version: ``pyrego.__version__``, the distribution's version
    (a test checks the two agree; reading the installed metadata would cost
    ``importlib.metadata``, several times what this command does)."""
    import pyrego

    return pyrego.__version__


def cmd_version(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego version``."""
    print(f"pyrego {package_version()}", file=out)
    print("Rego version: v1 (v0 with --v0-compatible)", file=out)
    print(f"Python: {sys.version.split()[0]}", file=out)
    return 0


def register(sub: Any) -> None:
    """Add ``version`` to the subcommand parsers ``sub``."""
    ve = sub.add_parser("version", help="print the version")
    ve.set_defaults(func=cmd_version)
