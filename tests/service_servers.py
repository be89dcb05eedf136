"""Real HTTP servers on 127.0.0.1 for the service integration tests (free ports, in threads)."""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(folder: str, name: str) -> ModuleType:
    """``examples/<folder>/app.py`` as the module ``name`` (loaded once)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / folder / "app.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class UvicornServer:
    """An ASGI app under uvicorn in a thread, on a socket bound to a free localhost port."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()


class DjangoServer:
    """A WSGI app under Django's threaded development server, on a free localhost port."""

    def __init__(self, app: Any) -> None:
        from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

        class QuietHandler(WSGIRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadedWSGIServer):
            request_queue_size = 128  # (Django's 10 refuses connections under the concurrency tests' load)

        self.server = Server(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
        self.server.set_app(app)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.thread.join(timeout=20)
        self.server.server_close()
