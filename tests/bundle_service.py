"""A bundle service and a decision-log collector on 127.0.0.1 for the server's
fault tests (``http.server`` in a thread), and bundles whose policy and data
both carry their revision, so that an answer tells which revision made it."""

from __future__ import annotations

import gzip
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pyrego.bundle.model import Bundle
from pyrego.bundle.signing import SigningConfig
from pyrego.bundle.writer import write_bundle

SECRET = "bundle-signing-secret"

POLICY_V1 = """package app

policy_revision := "{rev}"

data_revision := data.app.settings.revision

allow if input.user in data.app.settings.users
"""

POLICY_V0 = """package app

policy_revision = "{rev}"

data_revision = data.app.settings.revision

default allow = false

allow {{ input.user == data.app.settings.users[_] }}
"""

MASK = """package system.log

mask contains "/input/password"

mask contains {"op": "upsert", "path": "/input/ssn", "value": "***"} if input.input.ssn
"""


def bundle_bytes(
    revision: str,
    *,
    signed: bool = True,
    v0: bool = False,
    policy: str | None = None,
    users: tuple[str, ...] = ("alice",),
    extra_modules: dict[str, str] | None = None,
    roots: tuple[str, ...] = ("app",),
) -> bytes:
    """A bundle archive of revision ``revision``: ``data.app`` answers with the
    revision from the policy and from the data (``signed``: HS256, key id ``k1``)."""
    b = Bundle()
    b.manifest.revision = revision
    b.manifest.roots = list(roots)
    if v0:
        b.manifest.rego_version = 0
    b.modules["/app/policy.rego"] = policy if policy is not None else (POLICY_V0 if v0 else POLICY_V1).format(rev=revision)
    b.modules.update(extra_modules or {})
    b.data = {"app": {"settings": {"revision": revision, "users": list(users)}}}
    buf = io.BytesIO()
    write_bundle(b, buf, SigningConfig(SECRET, "HS256") if signed else None, "k1" if signed else "")
    return buf.getvalue()


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass


class BundleService:
    """Serves ``self.body`` at ``path`` with an ETag; ``mode``:
    ``"ok"``, ``"500"``, or ``"slow"`` (waits ``slow_seconds`` first). Started
    on ``port`` (0: any) by :meth:`start`, so that it can be down at first."""

    def __init__(self, port: int = 0, path: str = "/bundles/app.tar.gz") -> None:
        self.port = port
        self.path = path
        self.body = b""
        self.etag = ""
        self.mode = "ok"
        self.slow_seconds = 1.0
        self.codes: list[int] = []
        self.server: ThreadingHTTPServer | None = None

    def publish(self, body: bytes, etag: str | None = None, mode: str = "ok") -> None:
        self.body, self.etag, self.mode = body, etag or f'"{hash(body) & 0xFFFFFFFF:x}"', mode

    def start(self) -> BundleService:
        service = self

        class Handler(_Quiet):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if service.mode == "slow":
                    time.sleep(service.slow_seconds)
                if self.path.split("?")[0] != service.path or not service.body:
                    return self.reply(404)
                if service.mode == "500":
                    return self.reply(500, b"boom")
                if self.headers.get("If-None-Match") == service.etag:
                    return self.reply(304)
                self.reply(200, service.body)

            def reply(self, code: int, body: bytes = b"") -> None:
                service.codes.append(code)
                self.send_response(code)
                if code in (200, 304):
                    self.send_header("ETag", service.etag)
                self.send_header("Content-Type", "application/gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


class Collector:
    """A decision-log service: keeps every event POSTed (gzip JSON arrays), answers ``code``."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.posts: list[dict[str, str]] = []
        self.code = 200
        self.lock = threading.Lock()
        collector = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with collector.lock:
                    collector.posts.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                    if collector.code == 200:
                        raw = gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body
                        collector.events.extend(json.loads(raw))
                self.send_response(collector.code)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def server_config(
    bundle_port: int, *, persist_dir: str | None = None, signed: bool = True, delays: tuple[float, float] = (0.05, 0.2), **extra: Any
) -> dict[str, Any]:
    """An OPA configuration: the bundle ``app`` from the service on ``bundle_port``."""
    bundle: dict[str, Any] = {
        "service": "bundles",
        "resource": "/bundles/app.tar.gz",
        "polling": {"min_delay_seconds": delays[0], "max_delay_seconds": delays[1]},
    }
    config: dict[str, Any] = {"services": {"bundles": {"url": f"http://127.0.0.1:{bundle_port}"}}, "bundles": {"app": bundle}}
    if signed:
        bundle["signing"] = {"keyid": "k1"}
        config["keys"] = {"k1": {"algorithm": "HS256", "key": SECRET}}
    if persist_dir is not None:
        bundle["persist"] = True
        config["persistence_directory"] = persist_dir
    config.update(extra)
    return config
