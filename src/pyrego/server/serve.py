"""Running the policy server: :func:`serve` (uvicorn), and the factory its worker processes call.

One process (``workers=1``) serves one :class:`~pyrego.server.runtime.ServerRuntime`
whose policies and data the REST API can change. With several worker
processes each holds its own copy loaded at start-up from the same files;
writes through the API are then refused (``invalid_operation``), since a
write reaching one worker would make the workers answer differently.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from pyrego.server.tlsconf import TLSSettings

#: The environment variable that hands the settings to worker processes.
SETTINGS_ENV = "PYREGO_SERVER_SETTINGS"


@dataclass
class ServeSettings:
    """What ``pyrego run --server`` was asked for (JSON-able, for worker processes)."""

    paths: list[str] = field(default_factory=list)
    bundles: list[str] = field(default_factory=list)
    config_file: str | None = None
    overrides: list[str] = field(default_factory=list)
    authentication: str = "off"
    authorization: str = "off"
    rego_v0: bool = False
    workers: int = 1
    eval_timeout: float | None = None
    max_body: int | None = None
    max_concurrency: int | None = None
    verification_key: str | None = None
    verification_key_id: str = "default"
    signing_alg: str = "RS256"
    scope: str = ""
    exclude_files_verify: list[str] = field(default_factory=list)
    skip_verify: bool = False
    shutdown_grace_period: float = 10.0

    def verification(self) -> Any:
        """The signature checks of ``-b`` bundles (a :class:`~pyrego.bundle.signing.VerificationConfig`, or None)."""
        if not self.verification_key:
            return None
        from pyrego.bundle.signing import KeyConfig, VerificationConfig

        text = self.verification_key
        if os.path.isfile(text):
            with open(text, encoding="utf-8") as f:
                text = f.read()
        kid = self.verification_key_id or "default"
        return VerificationConfig({kid: KeyConfig(text, self.signing_alg or "RS256", self.scope)}, kid, self.scope, list(self.exclude_files_verify))


def load_sources(paths: Sequence[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """Policies (by file name) and data from files and folders, as ``opa run PATH...`` loads them."""
    from pathlib import Path

    from pyrego.loader import data_document, iter_files, read_policy, split_prefix
    from pyrego.runtime.convert import from_python

    policies: dict[str, str] = {}
    data: dict[str, Any] = {}
    for arg in paths:
        prefix, raw = split_prefix(arg)
        for file in iter_files(Path(raw), prefix):
            if file.is_policy:
                policies[file.name] = read_policy(file)
            else:
                data = _deep_merge(data, from_python(data_document(file)), file.name)
    return policies, data


def _deep_merge(a: dict[str, Any], b: dict[str, Any], name: str) -> dict[str, Any]:
    from pyrego.errors import DataError

    out = dict(a)
    for k, v in b.items():
        if k in out and isinstance(out[k], dict) and isinstance(v, dict):
            out[k] = _deep_merge(out[k], v, name)
        elif k in out:
            raise DataError(f"{name}: merge error: {k} is defined twice")
        else:
            out[k] = v
    return out


def build_app(settings: ServeSettings) -> Starlette:
    """The application for ``settings`` (loads the files, compiles, checks)."""
    from pyrego.server.app import ServerOptions, create_app
    from pyrego.server.config import load_config, server_setting
    from pyrego.server.plugins import configure_plugins
    from pyrego.server.runtime import ServerRuntime

    config = load_config(settings.config_file, settings.overrides)
    policies, data = load_sources(settings.paths)
    timeout = settings.eval_timeout if settings.eval_timeout is not None else server_setting(config, "eval_timeout")
    runtime = ServerRuntime(
        policies,
        data,
        eval_timeout=float(timeout) if timeout else None,
        rego_v0=settings.rego_v0,
        read_only=settings.workers > 1,
        config=config,
    )
    configure_plugins(
        runtime,
        config,
        bundle_paths=settings.bundles,
        verification=settings.verification(),
        skip_verify=settings.skip_verify,
        flush_timeout=settings.shutdown_grace_period,
    )
    options = ServerOptions.from_config(
        config,
        authentication=settings.authentication,
        authorization=settings.authorization,
        max_body=settings.max_body,
        max_concurrency=settings.max_concurrency,
    )
    return create_app(runtime, options=options)


def worker_app() -> Starlette:
    """The application of a worker process (uvicorn's factory; settings from :data:`SETTINGS_ENV`)."""
    settings = ServeSettings(**json.loads(os.environ[SETTINGS_ENV]))
    return build_app(settings)


def _exit_quietly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


#: The environment variable that hands the TLS settings to worker processes.
TLS_ENV = "PYREGO_SERVER_TLS"


def worker_ssl_context(config: Any, default: Any) -> Any:
    """The TLS context of a worker process (uvicorn's ``ssl_context_factory``; settings from :data:`TLS_ENV`)."""
    from pyrego.server.tlsconf import ReloadingContext, TLSSettings

    reloading = ReloadingContext(TLSSettings(**json.loads(os.environ[TLS_ENV])))
    reloading.start()
    return reloading.context


def serve(
    settings: ServeSettings,
    *,
    host: str = "localhost",
    port: int = 8181,
    addrs: Sequence[str] | None = None,
    diagnostic_addrs: Sequence[str] = (),
    tls_cert_file: str | None = None,
    tls_private_key_file: str | None = None,
    tls: TLSSettings | None = None,
    unix_socket_perm: str | None = "755",
    log_level: str = "info",
    shutdown_grace_period: float = 10.0,
) -> None:
    """Serve until interrupted; in-flight requests get ``shutdown_grace_period`` seconds to finish.

    ``addrs``: OPA's ``--addr`` values (default ``host:port``): ``host:port``,
    ``http://``/``https://host:port``, ``unix:///path``; ``diagnostic_addrs``:
    listeners that serve only ``/health`` and ``/metrics`` (``--diagnostic-addr``);
    ``tls``: certificates, client certificates, TLS versions and suites
    (``tls_cert_file`` and ``tls_private_key_file`` alone: a certificate only).
    An address or TLS setting that cannot be honoured raises
    :class:`~pyrego.server.listeners.AddressError` or
    :class:`~pyrego.server.tlsconf.TLSConfigError` before anything is loaded; an address
    that cannot be bound (in use), ``OSError`` once the files are loaded."""
    import uvicorn

    from pyrego.server.listeners import (
        Address,
        AddressError,
        Listener,
        bind,
        parse_address,
        remove_socket_file,
        run_listeners,
    )
    from pyrego.server.tlsconf import ReloadingContext, TLSSettings

    if tls is None and tls_cert_file and tls_private_key_file:
        tls = TLSSettings(tls_cert_file, tls_private_key_file)
    if addrs is None:
        addrs = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    main = [parse_address(a, tls is not None) for a in addrs]
    diag = [parse_address(a, tls is not None) for a in diagnostic_addrs]
    reloading = ReloadingContext(tls) if tls is not None else None
    ctx = reloading.context if reloading is not None else None
    identity = tls is not None and tls.client_certificates
    kwargs: dict[str, Any] = {
        "log_level": {"warn": "warning"}.get(log_level, log_level),
        "timeout_graceful_shutdown": shutdown_grace_period,
        "server_header": False,
    }
    # uvicorn raises SIGTERM again once it has drained: exit 0 then, as OPA does after a graceful shutdown.
    signal.signal(signal.SIGTERM, _exit_quietly)
    if settings.workers > 1:
        if len(main) != 1 or diag:
            raise AddressError("--workers above 1 serves one --addr and no --diagnostic-addr")
        build_app(settings)  # (errors in the files are reported once, before any worker starts)
        os.environ[SETTINGS_ENV] = json.dumps(asdict(settings))
        addr = main[0]
        if addr.scheme == "unix":
            unix_socket = bind(addr, unix_socket_perm)[0]  # (kept open while the workers serve)
            kwargs["fd"] = unix_socket.fileno()
        else:
            kwargs.update(host=addr.host or "0.0.0.0", port=addr.port)
            if addr.scheme == "https" and tls is not None:
                os.environ[TLS_ENV] = json.dumps(asdict(tls))
                kwargs["ssl_context_factory"] = worker_ssl_context
                if identity:
                    kwargs["http"] = "pyrego.server.tlsproto:IdentityProtocol"
        try:
            uvicorn.run("pyrego.server.serve:worker_app", factory=True, workers=settings.workers, **kwargs)
        finally:
            remove_socket_file(addr.socket_file)
        return
    app = build_app(settings)
    sockets: list[tuple[Address, list[socket.socket]]] = []
    try:
        for a in main + diag:
            sockets.append((a, bind(a, unix_socket_perm)))
    except BaseException:
        for a, socks in sockets:  # (what was bound before the failure is let go)
            for sock in socks:
                sock.close()
            remove_socket_file(a.socket_file)
        raise
    listeners = []
    for i, (addr, socks) in enumerate(sockets):
        from pyrego.server.app import diagnostic_app

        target = app if i < len(main) else diagnostic_app(app)
        secure = addr.scheme == "https"
        listeners.append(Listener(target, socks, ctx if secure else None, identity and secure, [addr.socket_file] if addr.socket_file else []))
    if reloading is not None:
        reloading.start()
    if not run_listeners(listeners, **kwargs):
        raise SystemExit(3)  # (uvicorn's exit status when the server did not start)
