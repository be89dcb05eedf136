"""The policy server with bundles, through real HTTP on 127.0.0.1: ``-b`` paths
(signatures, Rego v0, roots), the ``bundles`` configuration against a bundle
service that is down, slow, failing or serving bad bundles, switches under
load, persistence across a restart, and replicas converging."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from bundle_service import BundleService, bundle_bytes, server_config
from pyrego.server.serve import ServeSettings, build_app
from server_helpers import REPO, free_port, pyrego_server, serving


def answer(client: httpx.Client, base: str) -> tuple[str, str, str, bool]:
    """(the policy's revision, the data's, the provenance's, allow) of one decision."""
    r = client.post(base + "/v1/data/app?provenance", json={"input": {"user": "alice"}}, timeout=10)
    assert r.status_code == 200, r.text
    body = r.json()
    result = body.get("result", {})
    revisions = [b["revision"] for b in body["provenance"]["bundles"].values()]
    prov = revisions[0] if len(revisions) == 1 else ",".join(revisions)
    return result.get("policy_revision", ""), result.get("data_revision", ""), prov, result.get("allow", False)


def status(base: str) -> dict[str, Any]:
    return httpx.get(base + "/v1/status", timeout=10).json()["result"]  # type: ignore[no-any-return]


def wait_until(pred: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> float:
    start = time.monotonic()
    while not pred():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return time.monotonic() - start


def bundle_status(base: str) -> dict[str, Any]:
    return status(base)["bundles"].get("app", {})  # type: ignore[no-any-return]


@contextmanager
def config_server(tmp_path: Path, config: dict[str, Any], **settings: Any) -> Iterator[str]:
    path = tmp_path / f"config-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(config))
    app = build_app(ServeSettings(config_file=str(path), **settings))
    with serving(app) as base:
        yield base


# -- -b paths ----------------------------------------------------------------------------------


def test_cli_bundle_signed_v0_roots_and_writes(tmp_path: Path) -> None:
    signed = tmp_path / "signed.tar.gz"
    signed.write_bytes(bundle_bytes("rev-v0", v0=True))
    args = ["-b", str(signed), "--verification-key", "bundle-signing-secret", "--verification-key-id", "k1", "--signing-alg", "HS256"]
    with pyrego_server(args) as (base, _):
        with httpx.Client() as c:
            assert answer(c, base) == ("rev-v0", "rev-v0", "rev-v0", True)
            body = c.post(base + "/v1/data/app?provenance", json={"input": {"user": "alice"}}).json()
            assert body["provenance"]["bundles"] == {str(signed): {"revision": "rev-v0"}}
            st = status(base)
            assert st["bundles"][str(signed)]["active_revision"] == "rev-v0"
            # The bundle owns data.app: the REST API may not write there (OPA's messages).
            r = c.put(base + "/v1/data/app/settings/users", json=["mallory"])
            assert r.status_code == 400 and r.json() == {
                "code": "invalid_parameter",
                "message": f'path app/settings/users is owned by bundle "{signed}"',
            }
            r = c.put(base + "/v1/policies/evil.rego", content=b"package app.x\n\np := 1\n")
            assert r.status_code == 400 and r.json()["message"] == f'path app/x is owned by bundle "{signed}"'
            r = c.delete(base + "/v1/policies/" + next(p["id"] for p in c.get(base + "/v1/policies").json()["result"]))
            assert r.status_code == 400 and "is owned by bundle" in r.json()["message"]
            r = c.put(base + "/v1/data", json={})
            assert r.status_code == 400 and r.json()["message"] == "can't write to document root with bundle roots configured"
            assert c.put(base + "/v1/data/other", json={"x": 1}).status_code == 204  # (outside the roots)
            assert c.put(base + "/v1/policies/ok.rego", content=b"package other.p\n\nq := 2\n").status_code == 200
            assert c.get(base + "/v1/data/other/p/q").json()["result"] == 2
            assert answer(c, base)[3] is True


def run_fails(args: list[str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"127.0.0.1:{free_port()}", *args],
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    return proc.stderr


def test_cli_bundle_refused_when_unsigned_or_bad_key(tmp_path: Path) -> None:
    unsigned = tmp_path / "unsigned.tar.gz"
    unsigned.write_bytes(bundle_bytes("r1", signed=False))
    key = ["--verification-key", "bundle-signing-secret", "--verification-key-id", "k1", "--signing-alg", "HS256"]
    assert "bundle missing .signatures.json file" in run_fails(["-b", str(unsigned), *key])
    signed = tmp_path / "signed.tar.gz"
    signed.write_bytes(bundle_bytes("r1"))
    assert "signature" in run_fails(["-b", str(signed), "--verification-key", "other-secret", "--verification-key-id", "k1", "--signing-alg", "HS256"]).lower()
    assert "scope mismatch" in run_fails(["-b", str(signed), *key, "--scope", "write"])
    with pyrego_server(["-b", str(unsigned), "--skip-verify"]) as (base, _):
        with httpx.Client() as c:
            assert answer(c, base)[:2] == ("r1", "r1")


def test_cli_bundles_with_overlapping_roots_refused(tmp_path: Path) -> None:
    a = tmp_path / "a.tar.gz"
    a.write_bytes(bundle_bytes("a", signed=False))
    b = tmp_path / "b.tar.gz"
    b.write_bytes(bundle_bytes("b", signed=False, roots=("app/settings",), policy="package app.settings.p\n\nx := 1\n"))
    assert "detected overlapping roots in bundle manifest" in run_fails(["-b", str(a), str(b)])


# -- downloaded bundles under faults ---------------------------------------------------------------


def test_service_down_slow_failing_and_bad_bundles_keep_the_last_good_one(tmp_path: Path) -> None:
    port = free_port()
    service = BundleService(port)  # (down: not started yet)
    with config_server(tmp_path, server_config(port)) as base, httpx.Client() as c:
        # Down at start: nothing active, /health?bundles 500 and the status says why.
        wait_until(lambda: bundle_status(base).get("code") == "bundle_error", what="a download error")
        assert c.get(base + "/health?bundles").status_code == 500
        assert c.get(base + "/health").status_code == 200
        assert status(base)["plugins"]["bundle"]["state"] == "NOT_READY"
        assert "ConnectError" in bundle_status(base)["message"]
        service.publish(bundle_bytes("r1"))
        service.start()
        try:
            wait_until(lambda: bundle_status(base).get("active_revision") == "r1", what="r1")
            assert answer(c, base) == ("r1", "r1", "r1", True)
            assert c.get(base + "/health?bundles").status_code == 200
            assert status(base)["plugins"]["bundle"]["state"] == "OK"

            faults = [
                ("500", bundle_bytes("x"), "server replied with Internal Server Error"),
                ("ok", bundle_bytes("r-cut")[:200], "bundle read failed"),
                ("ok", bundle_bytes("r-unsigned", signed=False), "bundle missing .signatures.json file"),
                ("ok", bundle_bytes("r-broken", policy="package app\n\np := q\n"), "rego_unsafe_var_error"),
                ("ok", bundle_bytes("r-conflict", extra_modules={"/app/x.rego": 'package app.settings\n\nrevision := "x"\n'}), "conflicting rule for data path app/settings/revision"),
            ]
            for mode, body, why in faults:
                service.publish(body, mode=mode)
                wait_until(lambda why=why: why in json.dumps(bundle_status(base)), what=why)  # type: ignore[misc]
                assert answer(c, base) == ("r1", "r1", "r1", True)  # the last good bundle still serves
                assert bundle_status(base)["active_revision"] == "r1"
                assert c.get(base + "/health?bundles").status_code == 200  # (activated once: stays ready, as OPA)
            # Slow: requests keep being answered by r1 while r2 downloads.
            service.slow_seconds = 1.5
            service.publish(bundle_bytes("r2", users=("bob",)), mode="slow")
            seen = set()
            while bundle_status(base).get("active_revision") != "r2":
                seen.add(answer(c, base)[:3])
                time.sleep(0.05)
            assert ("r1", "r1", "r1") in seen and seen <= {("r1", "r1", "r1"), ("r2", "r2", "r2")}
            assert answer(c, base) == ("r2", "r2", "r2", False)  # (r2's users: bob)
            assert bundle_status(base)["code"] == ""
        finally:
            service.close()


def test_switch_under_load_never_mixes_revisions(tmp_path: Path) -> None:
    service = BundleService().start()
    service.publish(bundle_bytes("rev-0"))
    errors: list[str] = []
    answers: list[tuple[str, str, str, bool]] = []
    stop = threading.Event()
    try:
        with config_server(tmp_path, server_config(service.port, delays=(0.02, 0.05))) as base:
            wait_until(lambda: bundle_status(base).get("active_revision") == "rev-0", what="rev-0")

            def load() -> None:
                with httpx.Client() as c:
                    while not stop.is_set():
                        try:
                            answers.append(answer(c, base))
                        except Exception as exc:  # noqa: BLE001 - every failure is counted
                            errors.append(repr(exc))

            threads = [threading.Thread(target=load) for _ in range(4)]
            for t in threads:
                t.start()
            wait_until(lambda: len(answers) > 20, what="answers of rev-0")
            switch_times = []
            for i in range(1, 7):
                rev = f"rev-{i}"
                service.publish(bundle_bytes(rev, users=("alice",) if i % 2 else ("bob",)))
                switch_times.append(wait_until(lambda rev=rev: bundle_status(base).get("active_revision") == rev, what=rev))  # type: ignore[misc]
                n = len(answers)
                wait_until(lambda n=n: len(answers) > n + 20, what="answers after the switch")  # type: ignore[misc]
            stop.set()
            for t in threads:
                t.join(30)
    finally:
        stop.set()
        service.close()
    assert errors == []
    for pol, dat, prov, allow in answers:
        assert pol == dat == prov, (pol, dat, prov)
        assert allow is (int(pol.split("-")[1]) % 2 == 1 or pol == "rev-0")
    assert {a[0] for a in answers} == {f"rev-{i}" for i in range(7)}
    print(f"\n{len(answers)} answers, 6 switches; time to see each new revision: {[round(t, 3) for t in switch_times]} s")


# -- persistence, replicas -----------------------------------------------------------------------------


def test_persisted_bundle_serves_when_the_service_is_down_at_restart(tmp_path: Path) -> None:
    service = BundleService().start()
    service.publish(bundle_bytes("persisted-7"))
    config = tmp_path / "config.json"
    config.write_text(json.dumps(server_config(service.port, persist_dir=str(tmp_path / "opa"))))
    with pyrego_server(["--config-file", str(config)], ready_path="/health?bundles") as (base, _):
        with httpx.Client() as c:
            assert answer(c, base)[:3] == ("persisted-7",) * 3
    assert (tmp_path / "opa" / "bundles" / "app" / "bundle.tar.gz").is_file()
    service.close()
    # Restarted with the service down: the persisted bundle serves before any download succeeds.
    with pyrego_server(["--config-file", str(config)], ready_path="/health?bundles") as (base, _):
        with httpx.Client() as c:
            assert answer(c, base) == ("persisted-7", "persisted-7", "persisted-7", True)
            wait_until(lambda: bundle_status(base).get("code") == "bundle_error", what="the download error")
            assert bundle_status(base)["active_revision"] == "persisted-7"


def test_replicas_converge_within_the_polling_interval(tmp_path: Path) -> None:
    service = BundleService().start()
    service.publish(bundle_bytes("r1"))
    config = tmp_path / "config.json"
    max_delay = 0.5
    config.write_text(json.dumps(server_config(service.port, delays=(0.2, max_delay))))
    try:
        with pyrego_server(["--config-file", str(config)], ready_path="/health?bundles") as (a, _), pyrego_server(
            ["--config-file", str(config)], ready_path="/health?bundles"
        ) as (b, _), httpx.Client() as c:
            assert answer(c, a)[:3] == answer(c, b)[:3] == ("r1", "r1", "r1")
            times = []
            for rev in ("r2", "r3", "r4"):
                service.publish(bundle_bytes(rev))
                start = time.monotonic()
                wait_until(lambda rev=rev: answer(c, a)[0] == rev and answer(c, b)[0] == rev, what=rev)  # type: ignore[misc]
                times.append(time.monotonic() - start)
            assert answer(c, a)[:3] == answer(c, b)[:3] == ("r4", "r4", "r4")
    finally:
        service.close()
    # Each replica polls every 0.2..0.5 s: both have the new revision within about one interval.
    assert max(times) < max_delay + 5.0, times
    print(f"\nreplicas converged in {[round(t, 3) for t in times]} s (max_delay_seconds {max_delay})")


@pytest.mark.parametrize("v0", [False, True])
def test_downloaded_bundle_rego_version(tmp_path: Path, v0: bool) -> None:
    service = BundleService().start()
    service.publish(bundle_bytes("rv", v0=v0))
    try:
        with config_server(tmp_path, server_config(service.port)) as base, httpx.Client() as c:
            wait_until(lambda: bundle_status(base).get("active_revision") == "rv", what="rv")
            assert answer(c, base) == ("rv", "rv", "rv", True)
            ids = [p["id"] for p in c.get(base + "/v1/policies").json()["result"]]
            assert ids == ["app/app/policy.rego"]
    finally:
        service.close()


def test_health_waits_for_every_configured_bundle(tmp_path: Path) -> None:
    service = BundleService().start()
    service.publish(bundle_bytes("r1", signed=False))
    config = server_config(service.port, signed=False)
    config["bundles"]["other"] = {"service": "bundles", "resource": "/bundles/other.tar.gz", "polling": {"min_delay_seconds": 0.05, "max_delay_seconds": 0.2}}
    try:
        with config_server(tmp_path, config) as base, httpx.Client() as c:
            wait_until(lambda: bundle_status(base).get("active_revision") == "r1", what="r1")
            wait_until(lambda: status(base)["bundles"]["other"].get("http_code") == "404", what="the other bundle's 404")
            other = status(base)["bundles"]["other"]
            assert other["code"] == "bundle_error" and other["message"] == "server replied with Not Found" and other["active_revision"] == ""
            r = c.get(base + "/health?bundles")
            assert r.status_code == 500 and r.json() == {"error": "one or more bundles are not activated"}
            assert c.get(base + "/health").status_code == 200
            assert answer(c, base) == ("r1", "r1", "r1", True)  # (the active one serves meanwhile)
    finally:
        service.close()


def test_a_bundle_owning_all_of_data(tmp_path: Path) -> None:
    whole = tmp_path / "whole.tar.gz"
    whole.write_bytes(bundle_bytes("all", signed=False, roots=("",)))
    with pyrego_server(["-b", str(whole)]) as (base, _), httpx.Client() as c:
        assert answer(c, base)[:3] == ("all", "all", "all")
        r = c.put(base + "/v1/data/anything", json=1)
        assert r.status_code == 400 and r.json()["message"] == f'all paths owned by bundle "{whole}"'
        r = c.put(base + "/v1/policies/x.rego", content=b"package elsewhere\n\np := 1\n")
        assert r.status_code == 400 and r.json()["message"] == f'all paths owned by bundle "{whole}"'
