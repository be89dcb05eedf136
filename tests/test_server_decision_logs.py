"""The policy server's decision logs, through real HTTP on 127.0.0.1: events
uploaded to a collector (masked by the bundle's ``data.system.log.mask``, with
the response's decision id, the bundle revision, the client's address,
labels and metrics), a collector that fails then recovers, and the buffer
flushed when the server process gets SIGTERM."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from bundle_service import MASK, BundleService, Collector, bundle_bytes, server_config
from pyrego.server.serve import ServeSettings, build_app
from server_helpers import REPO, pyrego_server, serving


def wait_until(pred: Any, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def logged_bundle(revision: str) -> bytes:
    return bundle_bytes(revision, roots=("app", "system/log"), extra_modules={"/system/log/mask.rego": MASK})


def log_config(collector: Collector, delays: tuple[float, float]) -> dict[str, Any]:
    return {
        "services": {"logs": {"url": f"http://127.0.0.1:{collector.port}", "credentials": {"bearer": {"token": "s3cret"}}}},
        "decision_logs": {"service": "logs", "reporting": {"min_delay_seconds": delays[0], "max_delay_seconds": delays[1]}},
        "labels": {"team": "payments"},
        "default_decision": "/app/allow",
    }


def test_events_uploaded_masked_with_the_response_ids(tmp_path: Path) -> None:
    service = BundleService().start()
    service.publish(logged_bundle("r1"))
    collector = Collector()
    config = server_config(service.port)
    logs = log_config(collector, (0.05, 0.2))
    config["services"].update(logs.pop("services"))
    config.update(logs)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    try:
        with serving(build_app(ServeSettings(config_file=str(path)))) as base, httpx.Client() as c:
            wait_until(lambda: c.get(base + "/health?bundles").status_code == 200, what="the bundle")
            secret = {"user": "alice", "password": "hunter2", "ssn": "123-45-6789"}
            ids = {}
            r = c.post(base + "/v1/data/app/allow", json={"input": secret})
            ids["post"] = r.json()["decision_id"]
            assert r.json()["result"] is True
            r = c.get(base + "/v1/data/app/allow", params={"input": json.dumps({"user": "bob", "password": "x"}), "metrics": "true"})
            ids["get"] = r.json()["decision_id"]
            assert "result" not in r.json() and "metrics" in r.json()  # (undefined for bob)
            r = c.post(base + "/", json={"user": "alice"})  # (the default decision)
            assert r.json() is True
            c.post(base + "/v1/query", json={"query": "data.app.allow = x", "input": {"user": "carol"}})
            c.get(base + "/v1/data/app/nothing")
            wait_until(lambda: len(collector.events) >= 5, what="5 uploaded events")
            st = c.get(base + "/v1/status").json()["result"]
            assert st["plugins"]["decision_logs"]["state"] == "OK" and st["decision_logs"] == {}
            instance_id = st["labels"]["id"]
    finally:
        service.close()
        collector.close()
    events = {e.get("decision_id"): e for e in collector.events}
    first = events[ids["post"]]
    assert first["path"] == "app/allow" and first["result"] is True
    assert first["input"] == {"user": "alice", "ssn": "***"}  # password erased, ssn upserted
    assert first["erased"] == ["/input/password"] and first["masked"] == ["/input/ssn"]
    assert first["bundles"] == {"app": {"revision": "r1"}}
    assert re.fullmatch(r"127\.0\.0\.1:\d+", first["requested_by"])
    assert first["labels"]["team"] == "payments" and first["labels"]["id"] == instance_id and first["labels"]["version"]
    assert first["metrics"]["timer_rego_query_eval_ns"] > 0
    second = events[ids["get"]]
    assert second["input"] == {"user": "bob"} and "result" not in second
    default = [e for e in collector.events if e.get("path") == "app/allow" and e["decision_id"] not in ids.values()]
    assert len(default) == 1 and default[0]["input"] == {"user": "alice"}
    assert re.fullmatch(r"127\.0\.0\.1:\d+", default[0]["requested_by"])
    query = [e for e in collector.events if "query" in e]
    assert len(query) == 1 and query[0]["query"] == "data.app.allow = x" and query[0]["result"] == []
    undefined = [e for e in collector.events if e.get("path") == "app/nothing"]
    assert len(undefined) == 1 and "result" not in undefined[0]
    assert all(p["authorization"] == "Bearer s3cret" and p["content-encoding"] == "gzip" for p in collector.posts)


def test_collector_failing_then_recovering(tmp_path: Path) -> None:
    collector = Collector()
    collector.code = 500
    path = tmp_path / "config.json"
    path.write_text(json.dumps(log_config(collector, (0.05, 0.2))))
    policy = tmp_path / "p.rego"
    policy.write_text("package app\n\nallow if input.user == \"alice\"\n")
    try:
        with serving(build_app(ServeSettings(paths=[str(policy)], config_file=str(path)))) as base, httpx.Client() as c:
            ids = [c.post(base + "/v1/data/app/allow", json={"input": {"user": u}}).json()["decision_id"] for u in ("alice", "bob", "eve")]
            wait_until(lambda: c.get(base + "/v1/status").json()["result"]["decision_logs"].get("http_code") == "500", what="the failure")
            assert c.get(base + "/v1/status").json()["result"]["decision_logs"]["code"] == "decision_log_error"
            assert collector.events == []
            collector.code = 200
            wait_until(lambda: len(collector.events) >= 3, what="the events after recovery")
            assert c.get(base + "/v1/status").json()["result"]["decision_logs"] == {}
    finally:
        collector.close()
    assert [e["decision_id"] for e in collector.events] == ids  # (in order, each once)


def test_buffer_flushed_when_the_server_is_terminated(tmp_path: Path) -> None:
    collector = Collector()
    bundle = tmp_path / "b.tar.gz"
    bundle.write_bytes(logged_bundle("flush-1"))
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps(log_config(collector, (300, 600))))  # (no upload before the shutdown)
    try:
        with pyrego_server(["-b", str(bundle), "--skip-verify", "--config-file", str(config)]) as (base, proc):
            with httpx.Client() as c:
                ids = [
                    c.post(base + "/v1/data/app/allow", json={"input": {"user": f"u{i}", "password": "p"}}).json()["decision_id"]
                    for i in range(6)
                ]
            time.sleep(0.3)
            assert collector.events == []
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
    finally:
        collector.close()
    assert [e["decision_id"] for e in collector.events] == ids
    assert all("password" not in e["input"] and e["erased"] == ["/input/password"] for e in collector.events)
    assert all(e["bundles"] == {str(bundle): {"revision": "flush-1"}} for e in collector.events)


def test_container_example_config_is_accepted(tmp_path: Path) -> None:
    """examples/container/config.yaml, as the image runs it, against local services."""
    service = BundleService(path="/bundles/authz.tar.gz").start()
    service.publish(bundle_bytes("example-1", signed=False))
    collector = Collector()
    example = REPO / "examples" / "container" / "config.yaml"
    args = [
        "--config-file", str(example),
        "--set", f"services.bundles.url=http://127.0.0.1:{service.port}",
        "--set", f"services.logs.url=http://127.0.0.1:{collector.port}",
        "--set", f"persistence_directory={tmp_path / 'persist'}",
        "--set", "bundles.authz.polling.min_delay_seconds=0.1",
        "--set", "bundles.authz.polling.max_delay_seconds=0.2",
        "--set", "default_decision=/app/allow",
    ]  # fmt: skip
    try:
        with pyrego_server(args, ready_path="/health?bundles") as (base, proc):
            with httpx.Client() as c:
                r = c.post(base + "/", json={"user": "alice"})
                assert r.status_code == 200 and r.json() is True
                decision = c.post(base + "/v1/data/app/allow?provenance", json={"input": {"user": "alice"}}).json()
                assert decision["provenance"]["bundles"] == {"authz": {"revision": "example-1"}}
                cfg = c.get(base + "/v1/config").json()["result"]
                assert cfg["labels"]["app"] == "authz" and cfg["bundles"]["authz"]["persist"] is True
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == 0
    finally:
        service.close()
        collector.close()
    assert (tmp_path / "persist" / "bundles" / "authz" / "bundle.tar.gz").is_file()
    assert [e["decision_id"] for e in collector.events][-1] == decision["decision_id"]
    assert all(e["labels"]["environment"] == "production" for e in collector.events)
    status_lines = [json.loads(line) for line in err.decode().splitlines() if '"Status Log"' in line]
    assert status_lines and status_lines[-1]["bundles"]["authz"]["active_revision"] == "example-1"
    assert status_lines[-1]["type"] == "openpolicyagent.org/status"
