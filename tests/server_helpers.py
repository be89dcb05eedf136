"""Running the policy server for tests: a real uvicorn on 127.0.0.1 in a thread, or
``pyrego run --server`` in a subprocess, each on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Any, **uvicorn_kwargs: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread; yields the base URL (http or https)."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="on", **uvicorn_kwargs)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    scheme = "https" if uvicorn_kwargs.get("ssl_certfile") else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def pyrego_server(
    args: list[str], *, port: int | None = None, ready_path: str = "/health", scheme: str = "http", verify: Any = True
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``pyrego run --server ARGS`` in a subprocess; yields (base URL, process) once it answers."""
    port = port or free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"127.0.0.1:{port}", "--log-level", "error", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"{scheme}://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise RuntimeError(f"pyrego run exited {proc.returncode}: {err.decode()[-2000:]}")
            try:
                if httpx.get(base + ready_path, timeout=1, verify=verify).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("pyrego run --server did not answer")
            time.sleep(0.1)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
