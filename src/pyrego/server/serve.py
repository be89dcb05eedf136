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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

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


def serve(
    settings: ServeSettings,
    *,
    host: str = "127.0.0.1",
    port: int = 8181,
    tls_cert_file: str | None = None,
    tls_private_key_file: str | None = None,
    log_level: str = "info",
    shutdown_grace_period: float = 10.0,
) -> None:
    """Serve until interrupted; in-flight requests get ``shutdown_grace_period`` seconds to finish."""
    import uvicorn

    kwargs: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": {"warn": "warning"}.get(log_level, log_level),
        "timeout_graceful_shutdown": shutdown_grace_period,
        "ssl_certfile": tls_cert_file,
        "ssl_keyfile": tls_private_key_file,
        "server_header": False,
    }
    # uvicorn raises SIGTERM again once it has drained: exit 0 then, as OPA does after a graceful shutdown.
    signal.signal(signal.SIGTERM, _exit_quietly)
    if settings.workers > 1:
        build_app(settings)  # (errors in the files are reported once, before any worker starts)
        os.environ[SETTINGS_ENV] = json.dumps(asdict(settings))
        uvicorn.run("pyrego.server.serve:worker_app", factory=True, workers=settings.workers, **kwargs)
    else:
        uvicorn.run(build_app(settings), **kwargs)
