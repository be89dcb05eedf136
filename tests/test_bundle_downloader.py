"""The bundle plugin against a real bundle service on 127.0.0.1 (a small
``http.server`` in a thread): ETags and 304s, new revisions activated, a
service down then up, 500s with back-off, truncated, unsigned and
non-compiling bundles keeping the previous one (the status says why), long
polling, bearer tokens, and persistence across a restart."""

from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pyrego.bundle.model import Bundle, BundleError
from pyrego.bundle.signing import SigningConfig
from pyrego.bundle.writer import write_bundle
from pyrego.plugins.bundle import BUNDLE_CONTENT_TYPE, BundleActivator, BundleDownloader, _backoff, parse_bundle_config

TOKEN = "t0ken"


def archive(revision: str, value: int, *, sign_key: str | None = None, policy: str | None = None) -> bytes:
    b = Bundle()
    b.manifest.revision = revision
    b.manifest.roots = ["authz"]
    b.modules["/authz/p.rego"] = policy or "package authz\n\nlevel := data.authz.settings.level\n"
    b.data = {"authz": {"settings": {"level": value}}}
    buf = io.BytesIO()
    write_bundle(b, buf, SigningConfig(sign_key, "HS256") if sign_key else None, "k1" if sign_key else "")
    return buf.getvalue()


class BundleService:
    """A bundle server: serves ``self.body`` with ``self.etag``; ``mode`` may be
    ``"500"``; holds requests that ask ``Prefer: wait=N`` until the bundle changes."""

    def __init__(self, port: int = 0) -> None:
        self.body = b""
        self.etag = ""
        self.mode = "ok"
        self.requests: list[tuple[float, dict[str, str]]] = []
        self.responses: list[int] = []
        self.changed = threading.Condition()
        self.releasing = False
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                service.requests.append((time.monotonic(), {k.lower(): v for k, v in self.headers.items()}))
                if self.path != "/v1/bundles/authz.tar.gz" or self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self.reply(404 if self.path != "/v1/bundles/authz.tar.gz" else 401)
                if service.mode == "500":
                    return self.reply(500)
                wait = self.headers.get("Prefer", "")
                if self.headers.get("If-None-Match") == service.etag and wait.startswith("wait="):
                    with service.changed:
                        service.changed.wait_for(
                            lambda: self.headers.get("If-None-Match") != service.etag or service.releasing, timeout=float(wait[5:])
                        )
                if self.headers.get("If-None-Match") == service.etag:
                    return self.reply(304, long_poll=bool(wait))
                self.reply(200, service.body, long_poll=bool(wait))

            def reply(self, code: int, body: bytes = b"", long_poll: bool = False) -> None:
                service.responses.append(code)
                self.send_response(code)
                if code == 200 or code == 304:
                    self.send_header("ETag", service.etag)
                self.send_header("Content-Type", BUNDLE_CONTENT_TYPE if long_poll else "application/gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def publish(self, body: bytes, etag: str) -> None:
        with self.changed:
            self.body, self.etag = body, etag
            self.changed.notify_all()

    def close(self) -> None:
        with self.changed:
            self.releasing = True
            self.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config(port: int, **bundle: Any) -> dict[str, Any]:
    polling = {"min_delay_seconds": 0.05, "max_delay_seconds": 0.2}
    polling.update(bundle.pop("polling", {}))
    return {
        "services": {"acme": {"url": f"http://127.0.0.1:{port}/v1", "credentials": {"bearer": {"token": TOKEN}}}},
        "bundles": {"authz": {"resource": "bundles/authz.tar.gz", "polling": polling, **bundle}},
        **({"keys": bundle.pop("keys")} if "keys" in bundle else {}),
    }


class Server:
    """What the server's runtime would do: keep the engine the activator hands over."""

    def __init__(self) -> None:
        self.engines: list[Any] = []
        self.activator = BundleActivator(lambda engine, plan: self.engines.append(engine))

    def level(self) -> Any:
        return self.engines[-1].eval_rule("data.authz.level") if self.engines else None


@pytest.fixture
def service() -> Iterator[BundleService]:
    s = BundleService()
    yield s
    s.close()


def run(cfg: dict[str, Any], server: Server, tmp_path: Path) -> BundleDownloader:
    d = BundleDownloader(cfg, server.activator, persist_dir=str(tmp_path / "persist"))
    d.start()
    return d


def revision(d: BundleDownloader, rev: str, timeout: float = 10.0) -> bool:
    return d.wait_for(lambda s: s["authz"]["active_revision"] == rev, timeout)


def errored(d: BundleDownloader, text: str, timeout: float = 10.0) -> bool:
    return d.wait_for(lambda s: text in s["authz"]["message"], timeout)


def test_etag_304_and_new_revision(service: BundleService, tmp_path: Path) -> None:
    server = Server()
    service.publish(archive("r1", 1), '"e1"')
    d = run(config(service.port), server, tmp_path)
    try:
        assert revision(d, "r1") and server.level() == 1
        assert d.wait_for(lambda s: s["authz"]["http_code"] == "304", 5)
        later = [h for _, h in service.requests[1:]]
        assert later and all(h.get("if-none-match") == '"e1"' for h in later)
        assert all(h.get("authorization") == f"Bearer {TOKEN}" for _, h in service.requests)
        assert len(server.engines) == 1  # unchanged bundles are not activated again
        service.publish(archive("r2", 2), '"e2"')
        assert revision(d, "r2") and server.level() == 2
        st = d.status()["authz"]
        assert st["code"] == "" and st["message"] == "" and st["errors"] == []
        assert st["last_successful_activation"] > "2000" and st["last_successful_download"] > "2000"
        assert set(st) >= {"name", "active_revision", "last_successful_download", "last_successful_activation", "last_request", "code", "message", "errors", "http_code"}
    finally:
        d.stop()


def test_bad_bundles_keep_the_previous_one(service: BundleService, tmp_path: Path) -> None:
    server = Server()
    good = archive("r1", 1)
    service.publish(good, '"e1"')
    d = run(config(service.port), server, tmp_path)
    try:
        assert revision(d, "r1")
        service.publish(archive("r2", 2)[:-40], '"cut"')
        assert errored(d, "bundle read failed: unexpected EOF")
        st = d.status()["authz"]
        assert st["code"] == "bundle_error" and st["active_revision"] == "r1" and server.level() == 1
        service.publish(archive("r3", 3, policy="package authz\n\nlevel := undefined_thing\n"), '"bad"')
        assert errored(d, "rego_unsafe_var_error")
        assert d.status()["authz"]["errors"] and d.status()["authz"]["active_revision"] == "r1" and server.level() == 1
        service.publish(archive("r4", 4, policy="package other\n\nx := 1\n"), '"outside"')
        assert errored(d, "manifest roots [authz] do not permit 'package other'")
        service.publish(archive("r5", 5), '"e5"')
        assert revision(d, "r5") and server.level() == 5 and d.status()["authz"]["code"] == ""
    finally:
        d.stop()


def test_unsigned_bundle_refused_when_keys_are_configured(service: BundleService, tmp_path: Path) -> None:
    server = Server()
    service.publish(archive("r1", 1, sign_key="shh"), '"e1"')
    cfg = config(service.port, signing={"keyid": "k1"}, keys={"k1": {"algorithm": "HS256", "key": "shh"}})
    d = run(cfg, server, tmp_path)
    try:
        assert revision(d, "r1") and server.level() == 1
        service.publish(archive("r2", 2), '"e2"')
        assert errored(d, "bundle missing .signatures.json file")
        assert d.status()["authz"]["active_revision"] == "r1" and server.level() == 1
        service.publish(archive("r3", 3, sign_key="wrong"), '"e3"')
        assert errored(d, "failed to verify message")
        service.publish(archive("r4", 4, sign_key="shh"), '"e4"')
        assert revision(d, "r4") and server.level() == 4
    finally:
        d.stop()


def test_server_errors_back_off(service: BundleService, tmp_path: Path) -> None:
    server = Server()
    service.mode = "500"
    d = run(config(service.port, polling={"min_delay_seconds": 0.01, "max_delay_seconds": 0.8}), server, tmp_path)
    try:
        assert errored(d, "server replied with Internal Server Error")
        assert d.status()["authz"]["http_code"] == "500"
        assert d.wait_for(lambda s: len(service.requests) >= 6, 15)
        times = [t for t, _ in service.requests[:6]]
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert gaps[3] > gaps[0] * 1.5, gaps  # exponential: 0.16 s, 0.26 s, 0.41 s, 0.66 s (±20 %)
        assert all(g >= 0.1 for g in gaps), gaps
        service.mode = "ok"
        service.publish(archive("r1", 1), '"e1"')
        assert revision(d, "r1") and server.level() == 1
    finally:
        d.stop()


def test_backoff_schedule() -> None:
    for retries, base in [(1, 0.16), (2, 0.256), (3, 0.4096)]:
        for _ in range(20):
            assert base * 0.8 - 1e-9 <= _backoff(retries, 10) <= base * 1.2 + 1e-9
    assert all(_backoff(50, 2.0) <= 2.4 for _ in range(20))
    assert _backoff(0, 5) == 0


def test_service_down_then_up(tmp_path: Path) -> None:
    port = free_port()
    server = Server()
    d = run(config(port), server, tmp_path)
    try:
        assert d.wait_for(lambda s: s["authz"]["code"] == "bundle_error", 10)
        assert "ConnectError" in d.status()["authz"]["message"] and server.level() is None
        service = BundleService(port)
        try:
            service.publish(archive("up", 7), '"u"')
            assert revision(d, "up", 20) and server.level() == 7
        finally:
            service.close()
    finally:
        d.stop()


def test_persisted_bundle_serves_after_a_restart_while_the_service_is_down(tmp_path: Path) -> None:
    service = BundleService()
    port = service.port
    server = Server()
    service.publish(archive("kept", 9), '"k"')
    cfg = config(port, persist=True)
    d = run(cfg, server, tmp_path)
    try:
        assert revision(d, "kept")
    finally:
        d.stop()
        service.close()
    persisted = tmp_path / "persist" / "bundles" / "authz" / "bundle.tar.gz"
    assert persisted.is_file()
    restarted = Server()
    d2 = BundleDownloader(cfg, restarted.activator, persist_dir=str(tmp_path / "persist"))
    d2.start()
    try:
        assert d2.status()["authz"]["active_revision"] == "kept" and restarted.level() == 9  # activated from disk at start
        assert d2.wait_for(lambda s: s["authz"]["code"] == "bundle_error", 10)  # the service is down
        assert restarted.level() == 9
    finally:
        d2.stop()
    persisted.write_bytes(b"\x1f\x8bcorrupt")
    third = Server()
    d3 = BundleDownloader(cfg, third.activator, persist_dir=str(tmp_path / "persist"))
    d3.start()
    try:
        assert "bundle read failed" in d3.status()["authz"]["message"] and third.level() is None
    finally:
        d3.stop()


def test_long_polling(service: BundleService, tmp_path: Path) -> None:
    server = Server()
    service.publish(archive("r1", 1), '"e1"')
    cfg = config(service.port, polling={"min_delay_seconds": 30, "max_delay_seconds": 60, "long_polling_timeout_seconds": 20})
    d = run(cfg, server, tmp_path)
    try:
        assert revision(d, "r1")
        assert d.wait_for(lambda s: len(service.requests) >= 2, 5)  # the next poll starts at once (long polling)
        assert service.requests[1][1].get("prefer") == "wait=20"
        start = time.monotonic()
        service.publish(archive("r2", 2), '"e2"')
        assert revision(d, "r2", 10)
        assert time.monotonic() - start < 10 and server.level() == 2  # not the 30 s polling delay
    finally:
        service.close()  # releases the held request
        d.stop()


def test_config_errors() -> None:
    with pytest.raises(BundleError, match="unknown service"):
        parse_bundle_config({"services": {"a": {"url": "http://x"}}, "bundles": {"b": {"service": "z"}}})
    with pytest.raises(BundleError, match="minimum polling interval is greater than maximum"):
        parse_bundle_config({"services": [{"name": "a", "url": "http://x"}], "bundles": {"b": {"polling": {"min_delay_seconds": 9, "max_delay_seconds": 1}}}})
    (src,) = parse_bundle_config({"services": [{"name": "a", "url": "http://x/"}], "bundles": {"b": None}})
    assert src.url == "http://x/bundles/b" and src.min_delay == 60 and src.max_delay == 120 and src.verification is None


def test_activator_refuses_overlaps_and_keeps_the_engine() -> None:
    from pyrego.bundle.reader import read_bundle_bytes

    server = Server()
    a = read_bundle_bytes(archive("a", 1))
    server.activator.activate("one", a)
    with pytest.raises(BundleError, match=r"detected overlapping roots in bundle manifest with: \[one two\]"):
        server.activator.activate("two", read_bundle_bytes(archive("b", 2)))
    assert list(server.activator.bundles) == ["one"] and len(server.engines) == 1 and server.level() == 1


def test_activator_with_an_atomic_apply_callback(service: BundleService, tmp_path: Path) -> None:
    """The server's way: the activator hands the plan (texts, data, revisions)
    to a runtime's atomic activation, which compiles it or raises."""
    from pyrego.engine import Engine

    class Runtime:  # what pyrego.server's ServerRuntime.activate does: build, compile, swap
        def __init__(self) -> None:
            self.engine: Engine | None = None
            self.bundles: dict[str, str] = {}

        def activate(self, policies: dict[str, str], data: dict[str, Any], *, bundles: dict[str, str]) -> None:
            eng = Engine()
            eng.add_policies(policies)
            eng.add_data(data)
            eng.compile()
            self.engine, self.bundles = eng, dict(bundles)

    runtime = Runtime()
    activator = BundleActivator(apply=lambda plan: runtime.activate(plan.texts, plan.data, bundles=plan.revisions))
    service.publish(archive("r1", 1), '"e1"')
    d = BundleDownloader(config(service.port), activator, persist_dir=str(tmp_path))
    d.start()
    try:
        assert revision(d, "r1") and runtime.bundles == {"authz": "r1"}
        assert runtime.engine is not None and runtime.engine.eval_rule("data.authz.level") == 1
        service.publish(archive("r2", 2, policy="package authz\n\nlevel := nope\n"), '"e2"')
        assert errored(d, "rego_unsafe_var_error")
        assert runtime.bundles == {"authz": "r1"} and runtime.engine.eval_rule("data.authz.level") == 1
        assert activator.engine is None and activator.plan is not None and activator.plan.revisions == {"authz": "r1"}
    finally:
        d.stop()
    activator.remove("authz")
    assert runtime.bundles == {} and activator.bundles == {}
