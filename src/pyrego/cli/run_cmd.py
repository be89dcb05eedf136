"""``pyrego run --server``: an OPA-compatible policy server (``opa run --server``).

``pyrego run --server --addr 127.0.0.1:8181 policies/ data.json`` loads the
files and folders as ``opa run`` does and serves OPA's REST API (see
docs/server.md). ``-b/--bundle`` takes the paths as bundles. Starlette and
uvicorn are imported only when the server starts.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from pyrego.cli.output import UsageError


def cmd_run(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not ns.server:
        raise UsageError("the interactive shell is not supported: use --server (-s)")
    if ns.workers < 1:
        raise UsageError("--workers must be at least 1")
    if bool(ns.tls_cert_file) != bool(ns.tls_private_key_file):
        raise UsageError("--tls-cert-file and --tls-private-key-file must be specified together")
    from pyrego.bundle.model import BundleError
    from pyrego.errors import RegoError
    from pyrego.plugins.logs.config import DecisionLogConfigError
    from pyrego.server.config import ConfigError
    from pyrego.server.listeners import AddressError, split_values
    from pyrego.server.serve import ServeSettings, serve
    from pyrego.server.tlsconf import TLSConfigError, TLSSettings, parse_duration

    try:
        refresh = parse_duration(ns.tls_cert_refresh_period)
    except TLSConfigError as exc:
        raise UsageError(str(exc)) from None
    tls = None
    if ns.tls_cert_file:
        tls = TLSSettings(
            ns.tls_cert_file,
            ns.tls_private_key_file,
            ca_cert_file=ns.tls_ca_cert_file,
            client_certificates=ns.authentication == "tls",
            min_version=ns.min_tls_version,
            cipher_suites=split_values(ns.tls_cipher_suites, ()),
            refresh_period=refresh,
        )

    settings = ServeSettings(
        paths=[] if ns.bundle else list(ns.paths),
        bundles=list(ns.paths) if ns.bundle else [],
        config_file=ns.config_file,
        overrides=list(ns.set or []),
        authentication=ns.authentication,
        authorization=ns.authorization,
        rego_v0=bool(ns.v0_compatible),
        workers=ns.workers,
        eval_timeout=ns.eval_timeout,
        max_concurrency=ns.max_concurrency,
        verification_key=ns.verification_key,
        verification_key_id=ns.verification_key_id,
        signing_alg=ns.signing_alg,
        scope=ns.scope or "",
        exclude_files_verify=list(ns.exclude_files_verify or []),
        skip_verify=bool(ns.skip_verify),
        shutdown_grace_period=ns.shutdown_grace_period,
    )
    try:
        serve(
            settings,
            addrs=split_values(ns.addr, ["localhost:8181"]),
            diagnostic_addrs=split_values(ns.diagnostic_addr, ()),
            tls=tls,
            unix_socket_perm=ns.unix_socket_perm,
            log_level=ns.log_level,
            shutdown_grace_period=ns.shutdown_grace_period,
        )
    except (RegoError, ConfigError, BundleError, DecisionLogConfigError, AddressError, TLSConfigError, OSError) as exc:
        print(f"error: {exc}", file=err)
        return 1
    return 0


def register(sub: Any) -> None:
    """Add ``run`` to the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "run",
        help="serve policies over OPA's REST API (pyrego run --server)",
        description="Start an OPA-compatible policy server (opa run --server) on the policies and data in PATH...",
        epilog="Example: pyrego run --server --addr 127.0.0.1:8181 policies/ data.json",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="policy and data files or folders (bundles with -b)")
    p.add_argument("-s", "--server", action="store_true", help="start the policy server (required)")
    p.add_argument("-a", "--addr", action="append", metavar="ADDR", help="address to listen on: [http(s)://]host:port or unix:///path (repeatable; default localhost:8181)")
    p.add_argument("--diagnostic-addr", action="append", metavar="ADDR", help="address serving only /health and /metrics (repeatable)")
    p.add_argument("--unix-socket-perm", default="755", metavar="MODE", help="permissions of Unix socket files (octal, default 755)")
    p.add_argument("-b", "--bundle", action="store_true", help="load the paths as bundle files or bundle folders")
    p.add_argument("-c", "--config-file", metavar="FILE", help="OPA configuration file (YAML or JSON)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a configuration value (repeatable)")
    p.add_argument("--authentication", choices=("off", "token", "tls"), default="off", help="authentication scheme (default off)")
    p.add_argument("--authorization", choices=("off", "basic"), default="off", help="authorization scheme (default off)")
    p.add_argument("--tls-cert-file", metavar="FILE", help="TLS certificate (PEM); serves HTTPS with --tls-private-key-file")
    p.add_argument("--tls-private-key-file", metavar="FILE", help="TLS private key (PEM)")
    p.add_argument("--tls-ca-cert-file", metavar="FILE", help="CA certificates (PEM) client certificates are verified against (--authentication=tls)")
    p.add_argument("--tls-cert-refresh-period", default="0s", metavar="DURATION", help="how often the TLS files are checked for changes (Go duration: 30s, 5m; default 0s: every second)")
    p.add_argument("--min-tls-version", choices=("1.0", "1.1", "1.2", "1.3"), default="1.2", help="lowest TLS version accepted (default 1.2)")
    p.add_argument("--tls-cipher-suites", action="append", metavar="NAMES", help="TLS 1.0-1.2 cipher suites allowed, IANA names, comma-separated")
    p.add_argument("-l", "--log-level", choices=("debug", "info", "warn", "error"), default="info", help="log level (default info)")
    p.add_argument("--shutdown-grace-period", type=float, default=10.0, metavar="SECONDS", help="time in-flight requests get to finish on shutdown (default 10)")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes (default 1; with more, writes through the API are refused)")
    p.add_argument("--eval-timeout", type=float, metavar="SECONDS", help="time limit of one evaluation (default none)")
    p.add_argument("--max-concurrency", type=int, metavar="N", help="evaluations running at once (default 4 per CPU, at most 32)")
    p.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    from pyrego.cli.bundle_args import add_verification_arguments

    add_verification_arguments(p)
    p.set_defaults(func=cmd_run)
