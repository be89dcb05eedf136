"""``pyrego run --server`` listeners as ``opa run --server`` takes them: several ``--addr``
values (repeated or comma-separated), Unix domain sockets (``unix:///path``, ``unix://@name``;
the file replaced if present, ``--unix-socket-perm``, OPA's default 755, removed at shutdown),
and ``--diagnostic-addr`` listeners that serve only ``/health`` and ``/metrics``."""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from server_helpers import free_port, pyrego_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix domain sockets")

AUTHZ = """package system.authz

default allow := false

allow if input.identity == "secret"
"""


@contextmanager
def _uds_client(path: str) -> Iterator[httpx.Client]:
    with httpx.Client(transport=httpx.HTTPTransport(uds=path), base_url="http://opa") as client:
        yield client


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    # (a short path: a Unix socket path must fit in about 100 bytes)
    with tempfile.TemporaryDirectory(prefix="pyrego-") as d:
        yield Path(d)


def _policies(tmp: Path) -> str:
    folder = tmp / "p"
    folder.mkdir(exist_ok=True)
    (folder / "app.rego").write_text("package app\n\nx := 1\n")
    return str(folder)


def test_unix_socket_and_tcp_serve_one_store(sock_dir: Path) -> None:
    path = sock_dir / "opa.sock"
    path.write_text("left over")  # (replaced, as OPA does)
    with pyrego_server([_policies(sock_dir), "--addr", f"unix://{path}"]) as (url, proc):
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        with _uds_client(str(path)) as client:
            r = client.get("/v1/data/app/x")
            assert r.status_code == 200 and r.json()["result"] == 1
            assert client.put("/v1/data/shared", json={"v": 7}).status_code == 204
            r = client.post("/v1/data/app/x", json={})
            assert r.json()["result"] == 1
        assert httpx.get(url + "/v1/data/shared").json()["result"] == {"v": 7}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert not path.exists()  # (removed when the listener closes, as Go's)


def test_unix_socket_permissions_and_comma_separated_addresses(sock_dir: Path) -> None:
    a, b = sock_dir / "a.sock", sock_dir / "b.sock"
    with pyrego_server([_policies(sock_dir), "--addr", f"unix://{a},unix://{b}", "--unix-socket-perm", "600"]):
        for path in (a, b):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            with _uds_client(str(path)) as client:
                assert client.get("/v1/data/app/x").json()["result"] == 1


def test_abstract_unix_socket(sock_dir: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("abstract sockets are Linux's")
    name = f"pyrego-test-{uuid.uuid4().hex}"
    with pyrego_server([_policies(sock_dir), "--addr", f"unix://@{name}"]):
        with _uds_client("\0" + name) as client:
            assert client.get("/v1/data/app/x").json()["result"] == 1
        assert not (sock_dir / name).exists() and not os.path.exists("@" + name)


def test_several_tcp_addresses(sock_dir: Path) -> None:
    second = free_port()
    with pyrego_server([_policies(sock_dir), "--addr", f"http://127.0.0.1:{second}"]) as (url, _):
        assert httpx.get(url + "/v1/data/app/x").json()["result"] == 1
        assert httpx.get(f"http://127.0.0.1:{second}/v1/data/app/x").json()["result"] == 1


def test_bad_socket_permission_stops_the_start(sock_dir: Path) -> None:
    import subprocess

    from server_helpers import REPO

    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"unix://{sock_dir / 's.sock'}", "--unix-socket-perm", "rw"],
        capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1 and 'parsing "rw": invalid syntax' in proc.stderr


def test_diagnostic_address_serves_health_and_metrics_only(sock_dir: Path) -> None:
    diag = free_port()
    diag_sock = sock_dir / "diag.sock"
    args = [_policies(sock_dir), "--diagnostic-addr", f"127.0.0.1:{diag}", "--diagnostic-addr", f"unix://{diag_sock}"]
    with pyrego_server(args) as (url, _):
        base = f"http://127.0.0.1:{diag}"
        r = httpx.get(base + "/health")
        assert r.status_code == 200 and r.json() == {}
        assert httpx.get(base + "/health?bundles").status_code == 200
        r = httpx.get(base + "/metrics")
        assert r.status_code == 200 and "http_request_duration_seconds" in r.text
        for path in ("/v1/data/app/x", "/v1/policies", "/v1/config", "/", "/v1/status"):
            r = httpx.get(base + path)
            assert (r.status_code, r.text) == (404, "404 page not found\n"), path
        assert httpx.post(base + "/v1/data/app/x", json={}).status_code == 404
        # the main listener serves everything
        assert httpx.get(url + "/v1/data/app/x").json()["result"] == 1
        assert httpx.get(url + "/health").status_code == 200
        with _uds_client(str(diag_sock)) as client:
            assert client.get("/health").status_code == 200
            assert client.get("/v1/data/app/x").status_code == 404


def test_diagnostic_address_is_authorized_too(sock_dir: Path) -> None:
    folder = _policies(sock_dir)
    Path(folder, "authz.rego").write_text(AUTHZ)
    diag = free_port()
    args = [folder, "--diagnostic-addr", f"127.0.0.1:{diag}", "--authentication=token", "--authorization=basic"]
    with pyrego_server(args, ready_path="/v1/data"):
        base = f"http://127.0.0.1:{diag}"
        r = httpx.get(base + "/health")
        assert r.status_code == 401
        assert r.json() == {"code": "unauthorized", "message": "request rejected by administrative policy"}
        assert httpx.get(base + "/health", headers={"Authorization": "Bearer secret"}).status_code == 200


def test_address_in_use_stops_the_start_and_leaves_no_socket_file(sock_dir: Path) -> None:
    import socket
    import subprocess

    from server_helpers import REPO

    busy = socket.create_server(("127.0.0.1", 0))
    try:
        path = sock_dir / "first.sock"
        proc = subprocess.run(
            [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"unix://{path}", "--addr", f"127.0.0.1:{busy.getsockname()[1]}", _policies(sock_dir)],
            capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        )
    finally:
        busy.close()
    assert proc.returncode == 1 and proc.stderr.startswith("error:")
    assert not path.exists()


def test_workers_on_a_unix_socket(sock_dir: Path) -> None:
    import subprocess
    import time

    from server_helpers import REPO

    path = sock_dir / "w.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"unix://{path}", "--workers", "2", "--log-level", "error", _policies(sock_dir)],
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                with _uds_client(str(path)) as client:
                    if client.get("/health").status_code == 200:
                        break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        with _uds_client(str(path)) as client:
            for _ in range(4):
                assert client.post("/v1/data/app/x", json={}).json()["result"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not path.exists()
