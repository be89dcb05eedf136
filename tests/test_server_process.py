"""The policy server under load and in its lifecycle: concurrent requests, atomic writes, time
limits, clients that go away, graceful shutdown, worker processes, the command line."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from pyrego.server import ServerOptions, ServerRuntime, create_app
from server_helpers import REPO, pyrego_server, serving

PAIR = """package pair

consistent if data.x.v == data.x.w

value := data.x.v
"""

SLOW = """package slow

spin if {
	some i in numbers.range(1, input.n)
	some j in numbers.range(1, input.n)
	i * j == -1
}

default spin_done := false

spin_done if not spin
"""


def test_many_concurrent_requests_while_writing() -> None:
    """Readers never see half a write: data.x.v and data.x.w are always written together."""
    runtime = ServerRuntime({"pair.rego": PAIR}, {"x": {"v": 0, "w": 0}})
    with serving(create_app(runtime, options=ServerOptions(max_concurrency=8))) as url:
        stop = threading.Event()
        writes = []

        def writer() -> None:
            with httpx.Client(base_url=url, timeout=60) as c:
                i = 0
                while not stop.is_set():
                    i += 1
                    r = c.put("/v1/data/x", json={"v": i, "w": i})
                    assert r.status_code == 204
                    writes.append(i)

        def reader(k: int) -> list[bool]:
            seen = []
            with httpx.Client(base_url=url, timeout=60) as c:
                for _ in range(25):
                    r = c.post("/v1/data/pair", json={"input": {"k": k}})
                    assert r.status_code == 200, r.text
                    seen.append(r.json()["result"]["consistent"] is True)
            return seen

        w = threading.Thread(target=writer)
        w.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(16) as pool:
                results = list(pool.map(reader, range(16)))
        finally:
            stop.set()
            w.join()
    assert all(all(r) for r in results)
    assert sum(len(r) for r in results) == 16 * 25
    assert len(writes) > 1


def test_eval_timeout_is_opa_cancel_error() -> None:
    runtime = ServerRuntime({"slow.rego": SLOW}, eval_timeout=0.3)
    with serving(create_app(runtime)) as url:
        r = httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": 10**6}}, timeout=60)
        assert r.status_code == 500
        body = r.json()
        assert body["code"] == "internal_error"
        assert body["message"] == "error(s) occurred while evaluating query"
        assert body["errors"][0]["code"] == "eval_cancel_error"
        # the server goes on answering
        assert httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": 3}}).json()["result"] is True


def test_client_that_disconnects_frees_its_evaluation() -> None:
    """One evaluation thread; a never-ending evaluation whose client leaves must give it back."""
    runtime = ServerRuntime({"slow.rego": SLOW})
    with serving(create_app(runtime, options=ServerOptions(max_concurrency=1))) as url:
        try:
            httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": 10**6}}, timeout=1.0)
            raise AssertionError("the never-ending evaluation answered")
        except httpx.ReadTimeout:
            pass
        # (the only thread was busy with an evaluation of 10^12 steps: it is answered only if that one stopped)
        r = httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": 3}}, timeout=60)
        assert r.json()["result"] is True


def _calibrated_n(url: str, seconds: float) -> int:
    """An ``n`` for which the slow policy runs about ``seconds``."""
    n = 200
    while True:
        start = time.perf_counter()
        httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": n}}, timeout=120)
        took = time.perf_counter() - start
        if took > 0.2:
            return int(n * (seconds / took) ** 0.5)
        n *= 2


def test_graceful_shutdown_finishes_the_request_in_flight(tmp_path: Path) -> None:
    (tmp_path / "slow.rego").write_text(SLOW)
    with pyrego_server([str(tmp_path), "--shutdown-grace-period", "60"]) as (url, proc):
        n = _calibrated_n(url, 3.0)
        answer: dict[str, object] = {}

        def ask() -> None:
            r = httpx.post(url + "/v1/data/slow/spin_done", json={"input": {"n": n}}, timeout=120)
            answer["status"], answer["body"] = r.status_code, r.json()

        t = threading.Thread(target=ask)
        t.start()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        t.join(timeout=120)
        assert answer == {"status": 200, "body": {"decision_id": answer["body"]["decision_id"], "result": True}}  # type: ignore[index]
        assert proc.wait(timeout=60) == 0
        # and it no longer accepts connections
        try:
            httpx.get(url + "/health", timeout=2)
            raise AssertionError("still serving after shutdown")
        except httpx.HTTPError:
            pass


def test_two_workers_serve_and_refuse_writes(tmp_path: Path) -> None:
    (tmp_path / "pair.rego").write_text(PAIR)
    (tmp_path / "x.json").write_text('{"x": {"v": 1, "w": 1}}')
    with pyrego_server([str(tmp_path), "--workers", "2"]) as (url, proc):
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda _: httpx.get(url + "/v1/data/pair").json()["result"], range(40)))
        assert got == [{"consistent": True, "value": 1}] * 40
        r = httpx.put(url + "/v1/data/x/v", json=2)
        assert r.status_code == 400
        assert r.json()["code"] == "invalid_operation"
        r = httpx.put(url + "/v1/policies/p", content="package p\n\nq := 1\n")
        assert r.status_code == 400 and r.json()["code"] == "invalid_operation"
        assert httpx.get(url + "/v1/data/x/v").json()["result"] == 1


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "pyrego", "run", *args], env=env, capture_output=True, text=True, timeout=120)


def test_cli_errors(tmp_path: Path) -> None:
    r = _run_cli()
    assert r.returncode == 2 and "--server" in r.stderr
    (tmp_path / "bad.rego").write_text("package bad\n\np := x\n")
    r = _run_cli("--server", "--addr", "127.0.0.1:0", str(tmp_path))
    assert r.returncode == 1 and "rego_unsafe_var_error" in r.stderr
    r = _run_cli("--server", "-b", str(tmp_path))  # (a bundle folder whose policy does not compile)
    assert r.returncode == 1 and "rego_unsafe_var_error" in r.stderr
    r = _run_cli("--server", "-b", str(tmp_path / "missing.tar.gz"))
    assert r.returncode == 1 and "no such file or directory" in r.stderr
    (tmp_path / "cfg.yaml").write_text("bundles:\n  b: {service: nowhere}\n")
    r = _run_cli("--server", "--config-file", str(tmp_path / "cfg.yaml"))
    assert r.returncode == 1 and "unknown service 'nowhere'" in r.stderr
    r = _run_cli("--server", "--authentication", "magic")
    assert r.returncode == 2


def test_config_file_and_set(tmp_path: Path) -> None:
    (tmp_path / "m.rego").write_text("package entry\n\nanswer := input.q * 2\n")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default_decision: /nothing\nlabels:\n  env: test\nservices:\n  s:\n    url: http://x\n    credentials:\n      bearer:\n        token: hidden\n")
    with pyrego_server([str(tmp_path / "m.rego"), "--config-file", str(cfg), "--set", "default_decision=/entry/answer"]) as (url, _):
        assert httpx.post(url + "/", json={"q": 21}).json() == 42
        result = httpx.get(url + "/v1/config").json()["result"]
        assert result["labels"]["env"] == "test"
        assert "hidden" not in str(result)


def test_cli_tls_token_and_authorization(tmp_path: Path) -> None:
    import ssl

    from test_server_auth import AUTHZ, _self_signed

    cert, key = _self_signed(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "authz.rego").write_text(AUTHZ)
    (tmp_path / "p" / "app.rego").write_text("package app\n\nx := 1\n")
    ctx = ssl.create_default_context(cafile=cert)
    args = [str(tmp_path / "p"), "--tls-cert-file", cert, "--tls-private-key-file", key, "--authentication=token", "--authorization=basic"]
    with pyrego_server(args, scheme="https", verify=ctx) as (url, _):
        assert url.startswith("https://")
        r = httpx.get(url + "/v1/data/app/x", verify=ctx, headers={"Authorization": "Bearer reader"})
        assert r.json()["result"] == 1
        r = httpx.get(url + "/v1/data/app/x", verify=ctx)
        assert r.status_code == 401
