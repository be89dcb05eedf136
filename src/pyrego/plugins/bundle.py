"""The bundle plugin: download bundles from HTTP services and activate them, as OPA's ``bundle`` plugin does.

Configuration is OPA's (the ``services``, ``bundles`` and ``keys`` sections
of an OPA config file, as a dict)::

    services:
      acme: {url: "https://bundles.example.com/v1", credentials: {bearer: {token: "..."}}}
    bundles:
      authz:
        service: acme
        resource: bundles/authz.tar.gz     # default bundles/<name>
        persist: true
        polling: {min_delay_seconds: 60, max_delay_seconds: 120, long_polling_timeout_seconds: 0}
        signing: {keyid: global_key, scope: write, exclude_files: []}
    keys:
      global_key: {algorithm: RS256, key: "-----BEGIN PUBLIC KEY-----..."}

:class:`BundleDownloader` runs one background **thread** per bundle (a
synchronous ``httpx.Client`` each). Each poll sends ``If-None-Match`` with
the last ``ETag`` (a ``304`` means unchanged), and with
``long_polling_timeout_seconds`` the header ``Prefer: wait=N``: a service
that answers with ``Content-Type: application/vnd.openpolicyagent.bundles``
holds the request until the bundle changes, and the next poll starts at
once. After a success the next poll waits a random time between
``min_delay_seconds`` and ``max_delay_seconds``; after an error, an
exponential back-off (OPA's: from 0.1 s, factor 1.6, jitter 0.2, at most
``max_delay_seconds``). A downloaded bundle is read and verified
(:mod:`pyrego.bundle`), handed to ``on_bundle(name, bundle)``, and, with
``persist``, written to ``<persist_dir>/bundles/<name>/bundle.tar.gz``; at
start a persisted bundle is read and activated first (so a service that is
down still leaves the last bundle serving). An exception from ``on_bundle``
(a bundle that does not compile, or overlaps another) keeps the previous
bundle; :meth:`BundleDownloader.status` says why, in OPA's status shape.

:class:`BundleActivator` is the ``on_bundle`` the server uses: it keeps the
active bundles, builds a new :class:`~pyrego.engine.Engine` from all of them
(:func:`build_engine`) and hands it to its callback only when it compiled.
"""

from __future__ import annotations

import datetime
import os
import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyrego.bundle.activate import ActivationPlan, plan_activation
from pyrego.bundle.model import Bundle, BundleError
from pyrego.bundle.signing import VerificationConfig

__all__ = [
    "BundleSource",
    "BundleDownloader",
    "BundleActivator",
    "build_engine",
    "parse_bundle_config",
    "BUNDLE_CONTENT_TYPE",
]

#: The content type of a long-polling answer (OPA's).
BUNDLE_CONTENT_TYPE = "application/vnd.openpolicyagent.bundles"

_MIN_RETRY_DELAY = 0.1


@dataclass
class BundleSource:
    """One entry of the ``bundles`` section, with its service resolved."""

    name: str
    url: str  # the service URL joined with the resource
    headers: dict[str, str] = field(default_factory=dict)
    min_delay: float = 60.0
    max_delay: float = 120.0
    long_polling_timeout: float = 0.0
    persist: bool = False
    verification: VerificationConfig | None = None
    timeout: float = 30.0


def _service_list(services: Any) -> dict[str, dict[str, Any]]:
    if isinstance(services, list):
        return {str(s.get("name")): s for s in services if isinstance(s, dict)}
    if isinstance(services, dict):
        return {str(k): v for k, v in services.items() if isinstance(v, dict)}
    return {}


def _service_headers(svc: dict[str, Any]) -> dict[str, str]:
    headers = {str(k): str(v) for k, v in (svc.get("headers") or {}).items()}
    bearer = (svc.get("credentials") or {}).get("bearer")
    if isinstance(bearer, dict):
        token = bearer.get("token")
        if token is None and bearer.get("token_path"):
            with open(str(bearer["token_path"]), encoding="utf-8") as f:
                token = f.read().strip()
        if token is not None:
            headers["Authorization"] = f"{bearer.get('scheme') or 'Bearer'} {token}"
    return headers


def parse_bundle_config(config: Mapping[str, Any]) -> list[BundleSource]:
    """The bundles of an OPA configuration (``services``, ``bundles``, ``keys``).

    Raises :class:`~pyrego.bundle.model.BundleError` for a bundle naming an
    unknown service (or none when there are several), an unknown key id, or
    a min delay above the max."""
    services = _service_list(config.get("services"))
    keys = config.get("keys") or {}
    out = []
    for name, raw in (config.get("bundles") or {}).items():
        raw = raw or {}
        svc_name = raw.get("service")
        if not svc_name:
            if len(services) != 1:
                raise BundleError(f"invalid configuration for bundle {name!r}: name the service (one of {sorted(services)})")
            svc_name = next(iter(services))
        svc = services.get(str(svc_name))
        if svc is None:
            raise BundleError(f"invalid configuration for bundle {name!r}: unknown service {svc_name!r}")
        resource = str(raw.get("resource") or f"bundles/{name}")
        url = str(svc.get("url", "")).rstrip("/") + "/" + resource.lstrip("/")
        polling = raw.get("polling") or {}
        min_delay = float(polling.get("min_delay_seconds", 60))
        max_delay = float(polling.get("max_delay_seconds", 120))
        if min_delay > max_delay:
            raise BundleError(f"invalid configuration for bundle {name!r}: minimum polling interval is greater than maximum")
        signing = raw.get("signing")
        verification = None
        if signing is not None or keys:
            verification = VerificationConfig.from_opa_config(keys, signing)
        out.append(
            BundleSource(
                name=str(name),
                url=url,
                headers=_service_headers(svc),
                min_delay=min_delay,
                max_delay=max_delay,
                long_polling_timeout=float(polling.get("long_polling_timeout_seconds") or 0),
                persist=bool(raw.get("persist", False)),
                verification=verification,
                timeout=float(svc.get("response_header_timeout_seconds") or 10),
            )
        )
    return out


def _now() -> str:
    """An RFC 3339 time in UTC with nanoseconds, as OPA's status shows times."""
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}000Z"


_EPOCH = "0001-01-01T00:00:00Z"  # Go's zero time, what OPA shows for "never"


def _backoff(retries: int, max_delay: float) -> float:
    """OPA's ``util.DefaultBackoff``: base 0.1 s, factor 1.6, jitter 0.2, capped at ``max_delay``."""
    if retries <= 0:
        return 0.0
    backoff = _MIN_RETRY_DELAY
    for _ in range(retries):
        if backoff >= max_delay:
            break
        backoff *= 1.6
    backoff = min(backoff, max_delay)
    return max(0.0, backoff * (1 + 0.2 * (random.random() * 2 - 1)))


class _Poller:
    """One bundle's download loop (its own thread and HTTP client)."""

    def __init__(self, owner: BundleDownloader, source: BundleSource) -> None:
        self.owner = owner
        self.source = source
        self.etag = ""
        self.retries = 0
        self.long_polling_active = False
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.client: Any = None
        self.status: dict[str, Any] = {
            "name": source.name,
            "active_revision": "",
            "last_successful_activation": _EPOCH,
            "type": "snapshot",
            "last_successful_download": _EPOCH,
            "last_successful_request": _EPOCH,
            "last_request": _EPOCH,
            "code": "",
            "message": "",
            "errors": [],
            "http_code": "",
        }

    # -- persistence ---------------------------------------------------------

    def persist_path(self) -> str | None:
        if not self.source.persist or self.owner.persist_dir is None:
            return None
        return os.path.join(self.owner.persist_dir, "bundles", self.source.name, "bundle.tar.gz")

    def load_persisted(self) -> None:
        path = self.persist_path()
        if path is None or not os.path.isfile(path):
            return
        try:
            with open(path, "rb") as f:
                raw = f.read()
            b = self.owner.read(raw, "", self.source)
            self.activate(b, len(raw), from_disk=True)
        except Exception as exc:  # noqa: BLE001 - a bad persisted bundle is reported, not fatal
            self.set_error(exc)

    def persist(self, raw: bytes) -> None:
        path = self.persist_path()
        if path is None:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"  # (worker processes may share the folder)
        with open(tmp, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)

    # -- status --------------------------------------------------------------

    def set_error(self, exc: BaseException, http_code: int | None = None) -> None:
        with self.owner.lock:
            self.status["code"] = "bundle_error"
            self.status["message"] = str(exc) or type(exc).__name__
            errors = getattr(exc, "errors", None)
            self.status["errors"] = [
                {"code": getattr(e, "code", ""), "message": getattr(e, "message", str(e))} for e in errors
            ] if isinstance(errors, list) else []
            if http_code is not None:
                self.status["http_code"] = str(http_code)

    def clear_error(self) -> None:
        with self.owner.lock:
            self.status["code"] = ""
            self.status["message"] = ""
            self.status["errors"] = []

    def activate(self, b: Bundle, size: int, from_disk: bool = False) -> None:
        self.owner.on_bundle(self.source.name, b)  # raises: the previous bundle stays
        with self.owner.lock:
            self.status["active_revision"] = b.revision
            self.status["last_successful_activation"] = _now()
            self.status["size"] = size
        self.clear_error()

    # -- polling ---------------------------------------------------------------

    def poll_once(self) -> bool:
        """One request; True when it succeeded (200 activated, or 304)."""
        import httpx

        src = self.source
        headers = dict(src.headers)
        if self.etag:
            headers["If-None-Match"] = self.etag
        timeout = src.timeout
        if src.long_polling_timeout:
            headers["Prefer"] = f"wait={int(src.long_polling_timeout)}"
            timeout = src.long_polling_timeout + src.timeout
        with self.owner.lock:
            self.status["last_request"] = _now()
        try:
            resp = self.client.get(src.url, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            self.set_error(BundleError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__))
            return False
        self.long_polling_active = bool(src.long_polling_timeout) and resp.headers.get("content-type", "").startswith(BUNDLE_CONTENT_TYPE)
        code = resp.status_code
        if code == 304:
            with self.owner.lock:
                self.status["last_successful_request"] = _now()
                self.status["http_code"] = "304"
            self.clear_error()
            return True
        if code != 200:
            from http import HTTPStatus

            try:
                text = HTTPStatus(code).phrase
            except ValueError:
                text = str(code)
            self.set_error(BundleError(f"server replied with {text}"), code)
            return False
        raw = resp.content
        with self.owner.lock:
            self.status["last_successful_request"] = _now()
            self.status["last_successful_download"] = _now()
            self.status["http_code"] = "200"
        etag = resp.headers.get("etag", "")
        try:
            b = self.owner.read(raw, etag, src)
            self.activate(b, len(raw))
        except Exception as exc:  # noqa: BLE001 - any failure keeps the previous bundle
            self.set_error(exc)
            return False
        self.etag = etag
        try:
            self.persist(raw)
        except OSError as exc:
            self.set_error(BundleError(f"failed to persist bundle: {exc}"))
        return True

    def run(self) -> None:
        import httpx

        self.client = httpx.Client(follow_redirects=True)
        try:
            while not self.stop_event.is_set():
                ok = self.poll_once()
                if ok:
                    self.retries = 0
                    if self.long_polling_active:
                        continue
                    delay = random.uniform(self.source.min_delay, self.source.max_delay)
                else:
                    self.retries += 1
                    delay = _backoff(self.retries, self.source.max_delay)
                self.owner.notify()
                self.stop_event.wait(delay)
        finally:
            self.client.close()


class BundleDownloader:
    """Download and activate the bundles of an OPA configuration in background threads.

    ``on_bundle(name, bundle)`` activates a bundle (raise to refuse it: the
    previous one keeps serving). ``persist_dir``: where bundles with
    ``persist: true`` are kept (OPA's ``persistence_directory``, default
    ``.opa``). ``rego_v1``: the Rego version of bundles whose manifest says
    none. ``on_status()``: called after each poll (the status may have changed)."""

    def __init__(
        self,
        config: Mapping[str, Any],
        on_bundle: Callable[[str, Bundle], None],
        *,
        persist_dir: str | None = None,
        rego_v1: bool = True,
        on_status: Callable[[], None] | None = None,
    ) -> None:
        self.sources = parse_bundle_config(config)
        self.on_bundle = on_bundle
        self.on_status = on_status
        self.persist_dir = persist_dir if persist_dir is not None else str(config.get("persistence_directory") or ".opa")
        self.rego_v1 = rego_v1
        self.lock = threading.Lock()
        self._changed = threading.Condition(threading.Lock())
        self._pollers = {s.name: _Poller(self, s) for s in self.sources}
        self._started = False

    def read(self, raw: bytes, etag: str, source: BundleSource) -> Bundle:
        """Read and verify a downloaded archive."""
        from pyrego.bundle.reader import read_bundle_bytes

        return read_bundle_bytes(raw, etag=etag, verification=source.verification, rego_v1=self.rego_v1)

    def start(self) -> None:
        """Activate the persisted bundles, then start one polling thread per bundle."""
        if self._started:
            return
        self._started = True
        for p in self._pollers.values():
            p.load_persisted()
        for p in self._pollers.values():
            p.thread = threading.Thread(target=p.run, name=f"pyrego-bundle-{p.source.name}", daemon=True)
            p.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling and wait for the threads (a long-poll request in flight ends with its timeout)."""
        for p in self._pollers.values():
            p.stop_event.set()
        for p in self._pollers.values():
            if p.thread is not None:
                p.thread.join(timeout)
        self._started = False

    def trigger(self, name: str | None = None) -> None:
        """Poll now (one bundle, or all), in the calling thread."""
        import httpx

        for p in self._pollers.values():
            if name is None or p.source.name == name:
                own = p.client is None
                if own:
                    p.client = httpx.Client(follow_redirects=True)
                try:
                    p.poll_once()
                finally:
                    if own:
                        p.client.close()
                        p.client = None
                self.notify()

    def status(self) -> dict[str, dict[str, Any]]:
        """Each bundle's status, as OPA's status API shows it (a copy)."""
        with self.lock:
            return {name: {k: (list(v) if isinstance(v, list) else v) for k, v in p.status.items()} for name, p in self._pollers.items()}

    def notify(self) -> None:
        """Wake :meth:`wait_for` (after each poll), and call ``on_status`` (errors are logged)."""
        with self._changed:
            self._changed.notify_all()
        if self.on_status is not None:
            try:
                self.on_status()
            except Exception:  # noqa: BLE001 - a status listener must not stop the polling
                import logging

                logging.getLogger("pyrego.bundle").exception("bundle status listener failed")

    def wait_for(self, predicate: Callable[[dict[str, dict[str, Any]]], bool], timeout: float) -> bool:
        """Wait until ``predicate(self.status())`` holds (after a poll), at most ``timeout`` seconds."""
        import time

        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self.status()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.05))
        return True


def build_engine(plan: ActivationPlan, *, engine_factory: Callable[[], Any] | None = None) -> Any:
    """A new engine holding ``plan``'s data and modules, compiled now
    (raises the compile errors; nothing is shared with a running engine)."""
    from pyrego.engine import Engine

    engine = engine_factory() if engine_factory is not None else Engine()
    engine.add_data(plan.data)
    if plan.policies:
        engine.install_modules(dict(plan.policies))
    return engine


class BundleActivator:
    """Keeps the active bundles and the engine built from them.

    :meth:`activate` (the downloader's ``on_bundle``) plans the new set
    (roots checks), builds and compiles a fresh engine, and only then swaps
    it in and calls ``on_activate(engine, plan)``. With ``apply`` instead,
    no engine is built here: ``apply(plan)`` must make the plan active
    atomically or raise (for the server:
    ``lambda plan: runtime.activate(plan.texts, plan.data, bundles=plan.revisions)``).
    Any failure raises and changes nothing.
    """

    def __init__(
        self,
        on_activate: Callable[[Any, ActivationPlan], None] | None = None,
        *,
        engine_factory: Callable[[], Any] | None = None,
        apply: Callable[[ActivationPlan], None] | None = None,
    ) -> None:
        self.on_activate = on_activate
        self.engine_factory = engine_factory
        self.apply = apply
        self.bundles: dict[str, Bundle] = {}
        self.engine: Any = None
        self.plan: ActivationPlan | None = None
        self._lock = threading.Lock()

    def activate(self, name: str, bundle: Bundle) -> Any:
        """Activate ``bundle`` as ``name`` beside the others; returns the new engine (None with ``apply``)."""
        with self._lock:
            bundles = {**self.bundles, name: bundle}
            plan = plan_activation(bundles)
            engine = None
            if self.apply is not None:
                self.apply(plan)
            else:
                engine = build_engine(plan, engine_factory=self.engine_factory)
            if self.on_activate is not None:
                self.on_activate(engine, plan)
            self.bundles, self.engine, self.plan = bundles, engine, plan
            return engine

    def remove(self, name: str) -> None:
        """Stop serving bundle ``name`` (the others are activated again without it)."""
        with self._lock:
            bundles = {k: v for k, v in self.bundles.items() if k != name}
            plan = plan_activation(bundles)
            engine = None
            if self.apply is not None:
                self.apply(plan)
            else:
                engine = build_engine(plan, engine_factory=self.engine_factory)
            if self.on_activate is not None:
                self.on_activate(engine, plan)
            self.bundles, self.engine, self.plan = bundles, engine, plan

    __call__ = activate
