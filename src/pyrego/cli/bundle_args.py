"""The bundle flags ``pyrego eval``, ``test`` and ``build`` share (OPA's names).

``-b/--bundle PATH`` (a bundle folder or ``.tar.gz``), and the signature
checks: ``--verification-key`` (a PEM file of the public key, or the HMAC
secret itself), ``--verification-key-id`` (default ``default``),
``--signing-alg`` (the key's algorithm, default RS256), ``--scope``,
``--exclude-files-verify`` (repeatable globs), ``--skip-verify``.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyrego.bundle.signing import VerificationConfig

__all__ = ["add_verification_arguments", "verification_config", "is_archive_path", "read_cli_bundles"]


def add_verification_arguments(p: argparse.ArgumentParser, *, signing_alg: bool = True) -> None:
    """Add the signature verification flags to ``p``."""
    p.add_argument("--verification-key", metavar="KEY", help="PEM file of the public key (or the HMAC secret) that verifies bundle signatures")
    p.add_argument("--verification-key-id", default="default", metavar="ID", help="name of the verification key (default \"default\")")
    if signing_alg:
        p.add_argument("--signing-alg", default="RS256", metavar="ALG", help="algorithm of the verification key (default RS256)")
    p.add_argument("--scope", default="", help="scope the bundle signature must have")
    p.add_argument("--exclude-files-verify", action="append", default=[], metavar="GLOB", help="files not checked against the signature (repeatable)")
    p.add_argument("--skip-verify", action="store_true", help="do not check bundle signatures")


def verification_config(ns: argparse.Namespace) -> VerificationConfig | None:
    """The verification settings of the command line (None without ``--verification-key``)."""
    key = getattr(ns, "verification_key", None)
    if not key:
        return None
    from pyrego.bundle.signing import KeyConfig, VerificationConfig

    text = key
    if os.path.isfile(key):
        with open(key, encoding="utf-8") as f:
            text = f.read()
    alg = getattr(ns, "signing_alg", None) or "RS256"
    kid = ns.verification_key_id or "default"
    return VerificationConfig({kid: KeyConfig(text, alg, ns.scope or "")}, kid, ns.scope or "", list(ns.exclude_files_verify or []))


def is_archive_path(path: str) -> bool:
    """Whether a ``-d`` path is a bundle archive (OPA's loader reads ``.tar.gz`` files as bundles)."""
    if path.endswith((".tar.gz", ".tgz")) and os.path.isfile(path):
        return True
    from pyrego.bundle.reader import is_bundle_archive

    return os.path.isfile(path) and not path.endswith((".rego", ".json", ".yaml", ".yml")) and is_bundle_archive(path)


def read_cli_bundles(paths: list[str], ns: argparse.Namespace, rego_v1: bool) -> Any:
    """Read the bundles ``paths`` with the command line's verification
    settings and plan their activation (:class:`~pyrego.bundle.activate.ActivationPlan`)."""
    from pyrego.bundle.activate import plan_activation
    from pyrego.bundle.reader import read_bundle

    vc = verification_config(ns)
    bundles = {
        p: read_bundle(p, verification=vc, skip_verify=bool(getattr(ns, "skip_verify", False)), rego_v1=rego_v1) for p in paths
    }
    return plan_activation(bundles, prefix_module_names=False)
