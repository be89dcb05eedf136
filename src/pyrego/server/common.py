"""What every handler of the policy server shares: request parsing, responses, blocking work.

- :func:`path_segments`: the request path's segments after a prefix, each
  unescaped on its own (``a%2Fb`` stays one segment), as OPA reads them.
- :func:`read_body`: the body, refused with 413 past the size limit.
- :func:`json_response` and :func:`error_response`: OPA's bodies (``?pretty``).
- :class:`Worker`: evaluations run on a pool of threads of bounded size (the
  concurrency cap); a request whose client goes away has its evaluation
  stopped (an exception raised in its thread), so it frees its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from pyrego.server import errors
from pyrego.server.jsonio import dumps

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

T = TypeVar("T")


def route_path(request: Request) -> str:
    """The request path as sent (still escaped), without the prefix the app is mounted at."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1").partition("?")[0] if raw else request.url.path
    root = request.scope.get("root_path") or ""
    if root and path.startswith(root):
        path = path[len(root) :]
    return path


def path_segments(request: Request, prefix: str) -> list[str]:
    """The segments of the request path after ``prefix`` (``/v1/data``), empty ones dropped."""
    path = route_path(request)
    rest = path[len(prefix) :] if path.startswith(prefix) else ""
    return [unquote(s) for s in rest.split("/") if s]


def bool_param(request: Request, name: str) -> bool:
    """OPA's boolean query parameter: present without a value, or ``true`` (any case) among its values."""
    values = request.query_params.getlist(name)
    if not values:
        return False
    if values == [""]:
        return True
    return any(v.lower() == "true" for v in values)


def pretty(request: Request) -> bool:
    return bool_param(request, "pretty")


def json_response(value: Any, *, status: int = 200, pretty: bool = False) -> Response:
    from starlette.responses import Response

    return Response(dumps(value, pretty=pretty), status_code=status, media_type="application/json")


def error_response(err: errors.APIError) -> Response:
    """OPA's error response: always indented, as OPA writes its errors."""
    return json_response(err.body(), status=err.status, pretty=True)


async def read_body(request: Request, limit: int, gzip_limit: int = 268_435_456) -> bytes:
    """The request body; 413 (OPA's ``request body too large``) when longer than ``limit`` bytes.

    A gzip body (``Content-Encoding: gzip``) is decompressed, up to ``gzip_limit`` bytes."""
    cached = getattr(request, "_body", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise errors.APIError(413, errors.INVALID_PARAMETER, errors.MSG_BODY_TOO_LARGE)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise errors.APIError(413, errors.INVALID_PARAMETER, errors.MSG_BODY_TOO_LARGE)
        chunks.append(chunk)
    body = b"".join(chunks)
    if "gzip" in request.headers.get("content-encoding", "").lower():
        body = _gunzip(body, gzip_limit)
    request._body = body  # (Starlette's own cache: request.body() returns it from now on)
    return body


def _gunzip(body: bytes, limit: int) -> bytes:
    """A gzip body decompressed; 413 past ``limit`` bytes decompressed, 400 when it is not gzip."""
    import zlib

    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(body, limit + 1)
    except zlib.error:
        raise errors.APIError(400, errors.INVALID_PARAMETER, "could not decompress the body") from None
    if len(out) > limit:
        raise errors.APIError(413, errors.INVALID_PARAMETER, errors.MSG_GZIP_TOO_LARGE)
    return out


class Abandoned(BaseException):
    """Raised in an evaluation's thread when its client went away (a BaseException:
    the engine's handlers of ordinary errors let it through)."""


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


class _Job:
    """One blocking call on the pool, stoppable while it runs."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.lock = threading.Lock()
        self.state = 0  # 0 waiting, 1 running, 2 done, 3 abandoned
        self.thread = 0

    def run(self) -> Any:
        with self.lock:
            if self.state == 3:
                raise ClientGone()
            self.state = 1
            self.thread = threading.get_ident()
        try:
            try:
                return self.fn()
            finally:
                with self.lock:
                    self.state = 2
        except Abandoned:
            raise ClientGone() from None

    def abandon(self) -> None:
        if not self.lock.acquire(timeout=0.5):
            return
        try:
            if self.state == 1:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread), ctypes.py_object(Abandoned))
            self.state = 3
        finally:
            self.lock.release()


class Worker:
    """A pool of ``size`` threads for evaluations (the concurrency cap: more requests wait their turn)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=size, thread_name_prefix="pyrego-eval")

    async def run(self, request: Request, fn: Callable[[], T]) -> T:
        """``fn()`` on the pool; stopped (and :class:`ClientGone` raised) if the client disconnects first."""
        job = _Job(fn)
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(self.pool, job.run)
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            done, _ = await asyncio.wait({fut, gone}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            job.abandon()
            raise
        finally:
            if not gone.done():
                gone.cancel()
        if fut in done:
            return fut.result()  # type: ignore[no-any-return]
        job.abandon()
        fut.add_done_callback(lambda f: f.exception())  # (its outcome is nobody's now)
        raise ClientGone()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


async def _disconnected(request: Request) -> None:
    """Return once the client has disconnected (the body must have been read, or be empty)."""
    receive = request.receive
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
