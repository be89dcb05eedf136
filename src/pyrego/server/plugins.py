"""The server's plugins, set up from OPA's configuration: bundles and decision logs.

:func:`configure_plugins` reads the sections OPA's ``run`` reads and fills a
:class:`~pyrego.server.runtime.ServerRuntime`:

- bundles given on the command line (``-b PATH``) are read (signatures checked
  with ``--verification-key``... unless ``--skip-verify``) and activated before
  the server starts: an error stops the start-up, as OPA's;
- ``bundles`` (with ``services``, ``keys``, ``persistence_directory``):
  a :class:`~pyrego.plugins.bundle.BundleDownloader` whose activations go
  (with the command line's) into :meth:`ServerRuntime.activate_bundles` (atomic; a bundle that fails leaves
  the previous one serving, and ``/v1/status`` says why). The ``bundle``
  plugin is ``NOT_READY`` (``/health?bundles`` 500) until every configured
  bundle has been activated once, then ``OK``;
- ``status`` with ``console: true``: the status report on standard error
  whenever it changes (:class:`StatusConsole`); ``GET /v1/status`` always
  answers it (reporting to a status service is not supported);
- ``decision_logs`` (with ``services``): a
  :class:`~pyrego.plugins.logs.DecisionLogger` masking with the current
  snapshot's ``data.system.log`` and labelled with the instance's labels.

The plugins are started with the application (its lifespan) and stopped
after the last request: the downloads end, then the decision logs are
flushed to their service.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TextIO

    from pyrego.bundle.model import Bundle
    from pyrego.bundle.signing import VerificationConfig
    from pyrego.server.runtime import ServerRuntime

__all__ = ["BundlePlugin", "DecisionLogPlugin", "StatusConsole", "configure_plugins", "read_local_bundles"]

log = logging.getLogger("pyrego.server")


def read_local_bundles(
    paths: Sequence[str], *, verification: VerificationConfig | None = None, skip_verify: bool = False, rego_v1: bool = True
) -> dict[str, Bundle]:
    """The bundles at ``paths`` (folders or ``.tar.gz`` archives), by path, read and verified."""
    from pyrego.bundle.reader import read_bundle

    return {p: read_bundle(p, verification=verification, skip_verify=skip_verify, rego_v1=rego_v1) for p in paths}


class BundlePlugin:
    """The command line's bundles and the configured ones, activated together into the runtime."""

    def __init__(
        self,
        runtime: ServerRuntime,
        config: Mapping[str, Any],
        local: Mapping[str, Bundle] | None = None,
        on_status: Callable[[], None] | None = None,
    ) -> None:
        from pyrego.plugins.bundle import BundleDownloader

        self.runtime = runtime
        self.local = dict(local or {})
        self.bundles: dict[str, Bundle] = dict(self.local)
        self.activation_seconds: list[float] = []  # (each downloaded activation's duration, newest last)
        self._activated: set[str] = set()
        self._lock = threading.Lock()
        if self.local:
            self._activate(self.bundles)
        self.downloader: BundleDownloader | None = None
        if config.get("bundles"):
            self.downloader = BundleDownloader(config, self.on_bundle, rego_v1=not runtime.rego_v0, on_status=on_status)
            runtime.bundle_status = self.downloader.status
            runtime.set_plugin_status("bundle", "NOT_READY")

    def _activate(self, bundles: Mapping[str, Bundle]) -> None:
        from pyrego.bundle.activate import plan_activation

        # (the command line's bundles keep their modules' paths: they name the files already)
        self.runtime.activate_bundles(plan_activation(bundles, unprefixed=self.local.keys()))

    def on_bundle(self, name: str, bundle: Bundle) -> None:
        """Activate a downloaded bundle beside the others (raises, changing nothing, when it cannot be)."""
        start = time.perf_counter()
        with self._lock:
            bundles = {**self.bundles, name: bundle}
            self._activate(bundles)
            self.bundles = bundles
            elapsed = time.perf_counter() - start
            self.activation_seconds = [*self.activation_seconds[-99:], elapsed]
            self._activated.add(name)
            ready = self.downloader is not None and all(s.name in self._activated for s in self.downloader.sources)
        log.info("Bundle %s revision %r activated in %.1f ms.", name, bundle.revision, elapsed * 1000)
        if ready and self.runtime.plugin_statuses().get("bundle", {}).get("state") != "OK":
            self.runtime.set_plugin_status("bundle", "OK")

    def start(self) -> None:
        """Activate the persisted bundles, then start polling."""
        if self.downloader is not None:
            self.downloader.start()

    def stop(self) -> None:
        """Stop polling (a request in flight is waited for, up to 10 s)."""
        if self.downloader is not None:
            self.downloader.stop()


class DecisionLogPlugin:
    """The decision logger, started and stopped (flushed) with the server."""

    def __init__(self, runtime: ServerRuntime, logger: Any, flush_timeout: float = 10.0) -> None:
        self.runtime = runtime
        self.logger = logger
        self.flush_timeout = flush_timeout
        runtime.decision_logger = logger
        runtime.set_plugin_status("decision_logs", "NOT_READY")

    def start(self) -> None:
        self.logger.start()
        self.runtime.set_plugin_status("decision_logs", "OK")

    def stop(self) -> None:
        """Stop the logger: what is buffered is uploaded (retried up to ``flush_timeout`` seconds)."""
        self.logger.stop(timeout=self.flush_timeout)
        self.runtime.set_plugin_status("decision_logs", "NOT_READY")


_TIMES = ("last_request", "last_successful_request", "last_successful_download", "last_successful_activation")


class StatusConsole:
    """``status: {console: true}``: the status report written to standard error as
    OPA's ``Status Log`` lines, when it changes (download times aside)."""

    def __init__(self, runtime: ServerRuntime, stream: TextIO | None = None) -> None:
        self.runtime = runtime
        self.stream = stream
        self._last: str | None = None
        self._lock = threading.Lock()

    def report(self) -> None:
        """Write the status report if it changed since the last one written."""
        import json
        import sys
        from datetime import datetime

        status = self.runtime.status_report()
        bundles = {name: {k: v for k, v in b.items() if k not in _TIMES} for name, b in status["bundles"].items()}
        key = json.dumps({**status, "bundles": bundles}, sort_keys=True, default=str)
        with self._lock:
            if key == self._last:
                return
            self._last = key
            record = {**status, "level": "info", "msg": "Status Log", "type": "openpolicyagent.org/status"}
            record["time"] = datetime.now().astimezone().isoformat(timespec="seconds")
            stream = self.stream if self.stream is not None else sys.stderr
            stream.write(json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
            stream.flush()

    def start(self) -> None:
        self.report()

    def stop(self) -> None:
        pass


def configure_plugins(
    runtime: ServerRuntime,
    config: Mapping[str, Any],
    *,
    bundle_paths: Sequence[str] = (),
    verification: VerificationConfig | None = None,
    skip_verify: bool = False,
    flush_timeout: float = 10.0,
) -> None:
    """Set up ``runtime``'s plugins from ``config`` (see the module's docstring).

    Raises :class:`~pyrego.bundle.model.BundleError`,
    :class:`~pyrego.plugins.logs.DecisionLogConfigError` or a
    :class:`~pyrego.errors.RegoError` for a configuration OPA refuses or a
    command-line bundle that cannot be read, verified or compiled."""
    status_config = config.get("status") or {}
    console = StatusConsole(runtime) if isinstance(status_config, dict) and status_config.get("console") else None
    local = read_local_bundles(bundle_paths, verification=verification, skip_verify=skip_verify, rego_v1=not runtime.rego_v0) if bundle_paths else {}
    if local or config.get("bundles"):
        runtime.plugins.append(BundlePlugin(runtime, config, local, on_status=console.report if console else None))
    if config.get("decision_logs") is not None:
        from pyrego.plugins.logs import DecisionLogger

        logger = DecisionLogger.from_config(
            config.get("decision_logs"),
            config.get("services"),
            engine_provider=lambda: runtime.snapshot.engine,
            labels=dict(runtime.labels),
        )
        if logger is not None:
            runtime.plugins.append(DecisionLogPlugin(runtime, logger, flush_timeout))
    if console is not None:
        runtime.plugins.append(console)
