"""``pyrego build PATH...``: write an OPA bundle, as ``opa build`` does.

The paths are loaded (``-b``: as bundles), the policies compiled together
with the data (a policy that does not compile writes nothing), the modules
formatted, and the bundle written to ``-o`` (default ``bundle.tar.gz``):
``/data.json``, the modules at their paths, ``/.manifest`` (``-r`` sets the
revision; roots ``[""]`` unless the bundles read name theirs), and
``/.signatures.json`` with ``--signing-key`` (``--signing-alg``,
``--claims-file``). See :mod:`pyrego.bundle.writer`.

Only OPA's ``rego`` target at optimisation level 0 is made: ``-t wasm``,
``-t plan`` and ``-O 1`` or more are refused with a message. ``-t python``
is pyrego's own: a compiled artifact, as a ``.py`` file or a wheel (see
:mod:`pyrego.cli.build_python`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

__all__ = ["cmd_build", "register"]


def _fail(err: TextIO, message: str) -> int:
    print(f"error: {message}", file=err)
    return 1


def cmd_build(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego build``: build a bundle from ``ns.paths``; returns the exit status."""
    from pyrego.bundle.model import BundleError
    from pyrego.bundle.signing import ALGORITHMS, SigningConfig
    from pyrego.bundle.writer import BuildOptions, build_bundle, write_bundle
    from pyrego.errors import RegoError

    if ns.target == "python":
        # pyrego's own target: the compiled policies as one Python file (pyrego.artifact).
        from pyrego.cli import build_python

        if ns.output is None:
            return _fail(err, "--target python needs -o FILE")
        return build_python.run(ns, out, err)
    if ns.module is not None:
        return _fail(err, "--module names the module of a python target's wheel (-t python -o NAME-VERSION-py3-none-any.whl)")
    if ns.target != "rego":
        return _fail(err, f"target {ns.target!r} is not supported by pyrego build: only rego (OPA's bundle) and python (a compiled artifact)")
    if ns.output is None:
        ns.output = "bundle.tar.gz"
    if ns.optimize > 0:
        return _fail(err, f"optimization level {ns.optimize} is not supported by pyrego build: only -O 0 (no partial-evaluation optimizer)")
    if ns.signing_plugin:
        return _fail(err, "--signing-plugin is not supported: pyrego signs with its own JWT signer")
    if ns.v0_compatible and ns.v1_compatible:
        return _fail(err, "specify --v0-compatible or --v1-compatible, not both")
    signing = None
    if ns.claims_file and not ns.signing_key:
        return _fail(err, "specify the secret (HMAC) or path of the PEM file containing the private key (RSA and ECDSA)")
    if ns.signing_key:
        if ns.signing_alg not in ALGORITHMS:
            return _fail(err, f"unknown signature algorithm: {ns.signing_alg}")
        claims = None
        if ns.claims_file:
            try:
                with open(ns.claims_file, encoding="utf-8") as f:
                    claims = json.load(f)
            except (OSError, ValueError) as exc:
                return _fail(err, f"{ns.claims_file}: {exc}")
            if not isinstance(claims, dict):
                return _fail(err, f"{ns.claims_file}: the claims must be a JSON object")
        signing = SigningConfig(ns.signing_key, ns.signing_alg, claims)
    options = BuildOptions(
        bundle_mode=bool(ns.bundle),
        revision=ns.revision,
        ignore=[p for arg in ns.ignore or [] for p in arg.split(",") if p],
        rego_v1=not ns.v0_compatible,
    )
    try:
        b = build_bundle(ns.paths, options)
        _compile(b)
        write_bundle(b, ns.output, signing)
    except BundleError as exc:
        return _fail(err, str(exc))
    except RegoError as exc:
        from pyrego.cli.output import format_errors

        print(format_errors([exc], "pretty"), file=err)
        return 1
    except OSError as exc:
        return _fail(err, f"open {ns.output}: {exc.strerror or exc}")
    return 0


def _compile(b: Any) -> None:
    """Compile the bundle's modules with its data (as ``opa build`` compiles before writing)."""
    from pyrego.engine import Engine
    from pyrego.parse.parser import parse_module

    engine = Engine()
    engine.add_data(b.data)
    policies = {name: (text, parse_module(text, name, rego_v1=b.module_rego_v1.get(name, True))) for name, text in b.modules.items()}
    if policies:
        engine.install_modules(policies)


def register(sub: Any) -> None:
    """Add ``build`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "build",
        help="build an OPA bundle",
        description="Build an OPA bundle (.tar.gz) from policy and data files or bundles (like opa build).",
        epilog="Example: pyrego build -b policies/ -r v1 -o bundle.tar.gz",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="policy and data files or folders (bundles with -b)")
    p.add_argument("-b", "--bundle", action="store_true", help="load paths as bundle files or root directories")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default bundle.tar.gz; required with -t python)")
    p.add_argument("-r", "--revision", metavar="REV", help="set the bundle's revision")
    p.add_argument("--ignore", action="append", metavar="GLOB", help="file and folder names to ignore (repeatable)")
    p.add_argument(
        "-t",
        "--target",
        default="rego",
        help="rego: an OPA bundle (default); python: the compiled policies as one importable Python file, "
        "or as a wheel when -o ends in .whl (wasm and plan are not made)",
    )
    p.add_argument("--module", metavar="NAME", help="with -o NAME-VERSION-py3-none-any.whl: the module's name (default NAME)")
    p.add_argument("-O", "--optimize", type=int, default=0, help="optimization level: only 0")
    p.add_argument("-e", "--entrypoint", action="append", metavar="PATH", help="accepted for compatibility (rego target, -O 0: unused)")
    p.add_argument("--signing-key", metavar="KEY", help="the secret (HMAC) or path of the PEM file of the private key (RSA, ECDSA)")
    p.add_argument("--signing-alg", default="RS256", metavar="ALG", help="name of the signing algorithm (default RS256)")
    p.add_argument("--claims-file", metavar="FILE", help="JSON file of extra claims for the signature")
    p.add_argument("--signing-plugin", metavar="NAME", help="not supported (refused)")
    p.add_argument("--v0-compatible", action="store_true", help="read policies with Rego v0 syntax (manifest rego_version 0)")
    p.add_argument("--v1-compatible", action="store_true", help="read policies with Rego v1 syntax (the default)")
    p.set_defaults(func=cmd_build)
