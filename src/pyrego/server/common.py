"""What every handler of the policy server shares: request parsing, responses, blocking work.

- :func:`path_segments`: the request path's segments after a prefix, each
  unescaped on its own (``a%2Fb`` stays one segment), as OPA reads them.
- :func:`read_body`: the body, refused with 413 past the size limit.
- :func:`json_response` and :func:`error_response`: OPA's bodies (``?pretty``).
- :class:`Worker`: evaluations run on a pool of threads of bounded size (the
  concurrency cap); a request whose client goes away has its evaluation
  stopped (an exception raised in its thread), so it frees its thread. An
  evaluation known to be cheap (its recent runs, for the same document on
  the same snapshot, took less CPU than :data:`INLINE_LIMIT`) runs on the
  event loop's thread instead: the hop to a thread costs far more than a
  small policy's evaluation (hundreds of microseconds, against one or two).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import os
import threading
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from pyrego.server import errors
from pyrego.server.jsonio import dumps

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

T = TypeVar("T")

#: CPU seconds under which an evaluation runs inline, on the event loop's thread
#: (see :class:`Worker`).
INLINE_LIMIT = 0.001

#: Wall seconds an inline evaluation may hold the event loop: past them it is
#: stopped, its document goes back to the pool, and the request is evaluated
#: again there under the server's own time limit. An input that makes a cheap
#: policy slow so never holds every other request for longer.
INLINE_CAP = 0.05

#: Requests with more bytes of input than this always evaluate on the pool (a large
#: input may make a cheap policy slow).
INLINE_INPUT_MAX = 65536

#: How many documents' costs a :class:`Worker` remembers (all are forgotten past it).
_COSTS_KEPT = 4096


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
    scope = request.scope
    key = (scope.get("raw_path"), scope.get("root_path"), prefix)
    segments = _SEGMENTS.get(key)
    if segments is None:
        path = route_path(request)
        rest = path[len(prefix) :] if path.startswith(prefix) else ""
        segments = tuple(unquote(s) for s in rest.split("/") if s)
        if key[0] is not None:
            if len(_SEGMENTS) >= 4096:
                _SEGMENTS.clear()
            _SEGMENTS[key] = segments
    return list(segments)


#: :func:`path_segments` of the paths asked lately, by raw path, root path and prefix.
_SEGMENTS: dict[tuple[Any, Any, str], tuple[str, ...]] = {}


_ids_lock = threading.Lock()
_ids: list[Any] = [b"", 4096]  # random bytes, and how many of them are used


def decision_id() -> str:
    """A random (version 4) UUID, as OPA's decision IDs: ``str(uuid.uuid4())``, from random
    bytes read 4 KiB at a time (``os.urandom`` is a system call; one per ID costs more than
    the rest of the ID)."""
    with _ids_lock:
        buf, pos = _ids
        if pos >= 4096:
            buf, pos = os.urandom(4096), 0
            _ids[0] = buf
        _ids[1] = pos + 16
    n = int.from_bytes(buf[pos : pos + 16], "big") & _ID_MASK | _ID_BITS  # type: ignore[index]
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_ID_MASK = ~(0xF000 << 64) & ~(0xC000 << 48)  # version and variant bits cleared ...
_ID_BITS = (0x4000 << 64) | (0x8000 << 48)  # ... and set: version 4, RFC 4122


def eval_key(request: Request, *parts: Hashable) -> tuple[Hashable, ...] | None:
    """The :meth:`Worker.run` key of an evaluation of ``parts`` (the snapshot, the document):
    None (the pool, always) when the request's body or query string is over :data:`INLINE_INPUT_MAX` bytes."""
    size = len(getattr(request, "_body", None) or b"") + len(request.scope.get("query_string") or b"")
    return parts if size <= INLINE_INPUT_MAX else None


def bool_param(request: Request, name: str) -> bool:
    """OPA's boolean query parameter: present without a value, or ``true`` (any case) among its values."""
    if not request.scope.get("query_string"):
        return False
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


def header(request: Request, name: bytes) -> bytes:
    """The first value of the header ``name`` (lower case), or ``b""``: as ``request.headers.get``,
    without building the headers' mapping."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value  # type: ignore[no-any-return]
    return b""


async def read_body(request: Request, limit: int, gzip_limit: int = 268_435_456) -> bytes:
    """The request body; 413 (OPA's ``request body too large``) when longer than ``limit`` bytes.

    A gzip body (``Content-Encoding: gzip``) is decompressed, up to ``gzip_limit`` bytes.
    (Starlette's ``request.body()`` returns it too, after this.)"""
    cached = getattr(request, "_body", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    length = encoding = None
    for key, value in request.scope["headers"]:  # (the first of each, as request.headers.get)
        if key == b"content-length":
            length = value if length is None else length
        elif key == b"content-encoding":
            encoding = value if encoding is None else encoding
    if length is not None and length.isdigit() and int(length) > limit:
        raise errors.APIError(413, errors.INVALID_PARAMETER, errors.MSG_BODY_TOO_LARGE)
    if getattr(request, "_stream_consumed", False):
        raise RuntimeError("Stream consumed")
    receive = request.receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            chunk = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    raise errors.APIError(413, errors.INVALID_PARAMETER, errors.MSG_BODY_TOO_LARGE)
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
        elif kind == "http.disconnect":
            from starlette.requests import ClientDisconnect

            request._is_disconnected = True
            raise ClientDisconnect()
    request._stream_consumed = True
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if encoding is not None and b"gzip" in encoding.lower():
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
        self.cost = -1.0  # CPU seconds fn took (its thread's), once it has run

    def run(self) -> Any:
        with self.lock:
            if self.state == 3:
                raise ClientGone()
            self.state = 1
            self.thread = threading.get_ident()
        start = time.thread_time()
        try:
            try:
                return self.fn()
            finally:
                with self.lock:
                    self.state = 2
                self.cost = time.thread_time() - start
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


class InlineTooSlow(Exception):
    """An inline evaluation passed :data:`INLINE_CAP` (it is evaluated again on the pool)."""


_where = threading.local()


def running_inline() -> bool:
    """Whether the evaluation being made runs inline, on the event loop's thread."""
    return getattr(_where, "inline", False)


class Worker:
    """A pool of ``size`` threads for evaluations (the concurrency cap: more requests wait their turn).

    Calls given a ``key`` (what they evaluate: the snapshot, the document)
    have their cost remembered by key (CPU time on the pool, the time the
    loop was held inline); while the lower of the last two costs stays
    under ``inline_limit`` seconds, the next call with that key runs inline,
    on the event loop's thread, without the hop to the pool. Two slow calls
    in a row send the key back to the pool (one alone may have been a pause
    of the process: the garbage collector, the machine's other work). The
    first call of a key always runs on the pool; ``inline_limit=0`` runs
    every call there. An inline call cannot be stopped when its client goes away
    (its evaluation is one known to be short); the evaluation time limit
    (the engine's) ends it as it ends any."""

    def __init__(self, size: int, inline_limit: float = INLINE_LIMIT) -> None:
        self.size = size
        self.inline_limit = inline_limit
        self.costs: dict[Hashable, tuple[float, float]] = {}  # key: (last cost, the lower of the last two)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=size, thread_name_prefix="pyrego-eval")

    def inline(self, key: Hashable) -> bool:
        """Whether a call with ``key`` runs inline now."""
        cost = self.costs.get(key)
        return cost is not None and cost[1] < self.inline_limit

    def record(self, key: Hashable, cost: float) -> None:
        """Remember that a call with ``key`` took ``cost`` seconds (what counts: the lower of its last two)."""
        costs = self.costs
        old = costs.get(key)
        if old is None:
            if len(costs) >= _COSTS_KEPT:
                costs.clear()
            costs[key] = (cost, cost)
        else:
            costs[key] = (cost, min(cost, old[0]))

    async def run(self, request: Request, fn: Callable[[], T], key: Hashable | None = None) -> T:
        """``fn()`` on the pool; stopped (and :class:`ClientGone` raised) if the client disconnects first.

        With a ``key`` whose calls have been cheap, ``fn()`` inline (see the class)."""
        if key is not None and self.inline_limit > 0 and self.inline(key):
            start = time.perf_counter()  # (the time the loop is held; thread_time is a system call here)
            _where.inline = True
            try:
                value = fn()
            except InlineTooSlow:
                self.costs[key] = (INLINE_CAP, INLINE_CAP)  # (back to the pool until it is cheap there again)
            else:
                self.record(key, time.perf_counter() - start)
                return value
            finally:
                _where.inline = False
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
            if key is not None and job.cost >= 0:
                self.record(key, job.cost)
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
