"""``pyrego sign PATH... --signing-key KEY``: write a bundle's ``.signatures.json``, as ``opa sign`` does.

Every file of the bundle folders (or archives) given is hashed (JSON and
YAML documents in OPA's canonical form) and listed in one JWT, signed with
``--signing-key`` (an HMAC secret, or a PEM file of an RSA or EC private
key) and ``--signing-alg`` (default RS256), with the claims of
``--claims-file``. The file is written to ``-o/--output-file-path`` (a
folder, default ``.``) as ``.signatures.json``.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, TextIO

__all__ = ["cmd_sign", "register"]


def cmd_sign(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego sign``: returns the exit status (1 on an error, printed as ``error: ...``)."""
    from pyrego.bundle.model import BundleError
    from pyrego.bundle.signing import ALGORITHMS, SigningConfig, signatures_json
    from pyrego.bundle.writer import sign_paths

    if not ns.signing_key:
        print("error: specify the secret (HMAC) or path of the PEM file containing the private key (RSA and ECDSA)", file=err)
        return 1
    if ns.signing_alg not in ALGORITHMS:
        print(f"error: unknown signature algorithm: {ns.signing_alg}", file=err)
        return 1
    if ns.signing_plugin:
        print("error: --signing-plugin is not supported: pyrego signs with its own JWT signer", file=err)
        return 1
    claims = None
    try:
        if ns.claims_file:
            with open(ns.claims_file, encoding="utf-8") as f:
                claims = json.load(f)
        token = sign_paths(ns.paths, SigningConfig(ns.signing_key, ns.signing_alg, claims), bundle_mode=bool(ns.bundle))
        target = ns.output_file_path
        if os.path.isdir(target):
            target = os.path.join(target, ".signatures.json")
        with open(target, "wb") as f:
            f.write(signatures_json(token))
    except (BundleError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=err)
        return 1
    return 0


def register(sub: Any) -> None:
    """Add ``sign`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "sign",
        help="generate an OPA bundle signature",
        description="Generate an OPA bundle signature file, .signatures.json (like opa sign).",
        epilog="Example: pyrego sign --bundle --signing-key private.pem policies/",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="bundle folders (or archives)")
    p.add_argument("-b", "--bundle", action="store_true", help="load paths as bundle files or root directories")
    p.add_argument("--signing-key", metavar="KEY", help="the secret (HMAC) or path of the PEM file of the private key (RSA, ECDSA)")
    p.add_argument("--signing-alg", default="RS256", metavar="ALG", help="name of the signing algorithm (default RS256)")
    p.add_argument("--claims-file", metavar="FILE", help="JSON file of extra claims for the signature")
    p.add_argument("--signing-plugin", metavar="NAME", help="not supported (refused)")
    p.add_argument("-o", "--output-file-path", default=".", metavar="PATH", help="where to write .signatures.json (default .)")
    p.set_defaults(func=cmd_sign)
