"""The ASGI application of the policy server: :func:`create_app`.

Routes are OPA's (``v1/server/server.go``); each request goes through
:meth:`Server.endpoint`: authentication and authorization (when on), the
handler, OPA's error body for any :class:`~pyrego.server.errors.APIError`,
and the Prometheus duration histogram (``http_request_duration_seconds``
with ``code``, ``handler`` and ``method`` labels, as OPA's).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyrego.server import errors
from pyrego.server.common import INLINE_LIMIT, ClientGone, Worker, error_response
from pyrego.server.config import (
    DEFAULT_AUTHORIZATION_DECISION,
    DEFAULT_DECISION,
    DEFAULT_MAX_LENGTH,
    decision_path,
    server_setting,
)
from pyrego.server.metrics import DurationHistogram
from pyrego.server.runtime import ServerRuntime

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

Handler = Callable[["Server", "Request"], Awaitable["Response"]]

#: Histogram buckets of OPA's request duration metric (Prometheus' defaults).
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class ServerOptions:
    """How the server answers (``pyrego run --server`` flags; defaults as OPA's).

    ``authentication``: ``"off"``, ``"token"`` (a ``Bearer`` token becomes
    ``input.identity`` of the authorization policy) or ``"tls"`` (the client
    certificate's subject does; the listener must require certificates, see
    :mod:`pyrego.server.tlsconf`); ``authorization``:
    ``"off"`` or ``"basic"`` (every request is first asked of
    ``default_authorization_decision``); ``max_body``: the largest request
    body in bytes (``gzip_max_body``: decompressed, for gzip bodies);
    ``gzip_min_length`` and ``gzip_level``: responses this long or longer are
    gzip-compressed at that level for clients that accept it; ``max_concurrency``: evaluations running at once (more
    wait); ``inline_limit``: seconds under which an evaluation that has been that cheap runs on the event loop's
    thread, without the hop to the evaluation pool (0: always the pool; see :class:`~pyrego.server.common.Worker`);
    ``default_decision`` and ``authorization_decision``: path
    segments under ``data``."""

    authentication: str = "off"
    authorization: str = "off"
    max_body: int = DEFAULT_MAX_LENGTH
    gzip_max_body: int = DEFAULT_MAX_LENGTH
    gzip_min_length: int = 1024
    gzip_level: int = 9
    max_concurrency: int = 0
    inline_limit: float = INLINE_LIMIT
    default_decision: tuple[str, ...] = tuple(decision_path({}, "default_decision", DEFAULT_DECISION))
    authorization_decision: tuple[str, ...] = tuple(decision_path({}, "default_authorization_decision", DEFAULT_AUTHORIZATION_DECISION))

    @classmethod
    def from_config(cls, config: dict[str, Any], **overrides: Any) -> ServerOptions:
        """Options from OPA's configuration (see :mod:`pyrego.server.config`), then ``overrides``."""
        opts = cls(
            max_body=int(server_setting(config, "decoding", "max_length", default=DEFAULT_MAX_LENGTH)),
            gzip_max_body=int(server_setting(config, "decoding", "gzip", "max_length", default=DEFAULT_MAX_LENGTH)),
            gzip_min_length=int(server_setting(config, "encoding", "gzip", "min_length", default=1024)),
            gzip_level=int(server_setting(config, "encoding", "gzip", "compression_level", default=9)),
            max_concurrency=int(server_setting(config, "max_concurrency", default=0)),
            default_decision=tuple(decision_path(config, "default_decision", DEFAULT_DECISION)),
            authorization_decision=tuple(decision_path(config, "default_authorization_decision", DEFAULT_AUTHORIZATION_DECISION)),
        )
        for key, value in overrides.items():
            if value is not None:
                setattr(opts, key, value)
        return opts


class Server:
    """The application's state: the runtime, the options, the evaluation pool, the metrics."""

    def __init__(self, runtime: ServerRuntime, options: ServerOptions) -> None:
        from prometheus_client import CollectorRegistry, gc_collector, platform_collector, process_collector

        if options.authentication not in ("off", "token", "tls"):
            raise ValueError(f"unknown authentication scheme {options.authentication!r} (off, token or tls)")
        if options.authorization not in ("off", "basic"):
            raise ValueError(f"unknown authorization scheme {options.authorization!r} (off or basic)")
        self.runtime = runtime
        self.options = options
        self.worker = Worker(options.max_concurrency or min(32, (os.cpu_count() or 1) * 4), options.inline_limit)
        self.registry = CollectorRegistry()
        process_collector.ProcessCollector(registry=self.registry)
        platform_collector.PlatformCollector(registry=self.registry)
        gc_collector.GCCollector(registry=self.registry)
        self.duration = DurationHistogram(_BUCKETS)
        self.registry.register(self.duration)

    def observe(self, status: int, label: str, method: str, seconds: float) -> None:
        """Count one request in the duration histogram."""
        self.duration.observe(status, label, method, seconds)

    def endpoint(self, label: str, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` as a Starlette endpoint: auth, OPA's error bodies, the duration metric."""
        auth = self.options.authentication != "off" or self.options.authorization != "off"

        async def endpoint(request: Request) -> Response:
            start = time.perf_counter()
            try:
                if auth:
                    from pyrego.server.auth import authorize

                    await authorize(self, request)
                if request.scope["method"] == "HEAD":  # (the GET handler answers; uvicorn drops the body)
                    response = await handler(self, _as_get(request))
                else:
                    response = await handler(self, request)
            except errors.APIError as err:
                response = error_response(err)
            except ClientGone:
                from starlette.responses import Response

                response = Response(status_code=499)  # (nobody reads it: the client has gone)
            self.duration.observe(response.status_code, label, request.method, time.perf_counter() - start)
            return response

        return endpoint

    def unrouted(self, answer: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """``answer`` (Go's router's own 404, 405 and 301) behind authentication and authorization,
        not counted in the duration metric (as OPA's)."""
        auth = self.options.authentication != "off" or self.options.authorization != "off"

        async def endpoint(request: Request) -> Response:
            if auth:
                from pyrego.server.auth import authorize

                try:
                    await authorize(self, request)
                except errors.APIError as err:
                    return error_response(err)
            return await answer(request)

        return endpoint


def _as_get(request: Request) -> Request:
    """``request`` (a HEAD request) as its GET handler reads it."""
    from starlette.requests import Request

    return Request(dict(request.scope, method="GET"), request.receive)


class GzipWhenAccepted:
    """Starlette's gzip middleware for the requests whose client accepts gzip; the others go
    straight to the app (Starlette's would wrap their ``send`` to look at every response)."""

    def __init__(self, app: Any, minimum_size: int, compresslevel: int) -> None:
        from starlette.middleware.gzip import GZipMiddleware

        self.app = app
        self.gzip = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=compresslevel)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"accept-encoding":  # (the first one, as Starlette reads it)
                    if b"gzip" in value:
                        await self.gzip(scope, receive, send)
                        return
                    break
        await self.app(scope, receive, send)


class DecisionFastPath:
    """``POST /v1/data[/...]`` with no query parameters (a plain decision, the request a
    server mostly answers) goes straight to its endpoint, past Starlette's exception
    middleware and router: the endpoint and the response are the ones the router would
    reach (the ``v1/data`` routes), the steps between them cost more than the decision.
    Every other request goes on to the router."""

    def __init__(self, app: Any, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        from starlette.requests import Request

        self.app = app
        self.endpoint = endpoint
        self.request = Request

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("query_string"):
            path = scope["path"]
            root = scope.get("root_path")
            if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
                path = path[len(root) :]  # (the path under the mount point, as the router takes it)
            if path.startswith("/v1/data") and path[8:9] in ("", "/"):
                response = await self.endpoint(self.request(scope, receive, send))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _diagnostic_routes() -> list[tuple[str, str, Handler, tuple[str, ...], str]]:
    from pyrego.server import api_misc

    return [
        ("/health", "health", api_misc.health, ("GET",), "GET, HEAD"),
        ("/health/{path:path}", "health", api_misc.health_policy, ("GET",), "GET, HEAD"),
        ("/metrics", "metrics", api_misc.metrics, ("GET",), "GET, HEAD"),
    ]


def create_app(
    runtime: ServerRuntime | None = None,
    *,
    options: ServerOptions | None = None,
    policies: dict[str, str] | None = None,
    data: dict[str, Any] | None = None,
) -> Starlette:
    """An ASGI application answering OPA's REST API (mountable in Starlette or FastAPI).

    ``runtime``: the store of policies and data to serve (default: a new
    :class:`~pyrego.server.runtime.ServerRuntime` of ``policies`` and
    ``data``); ``options``: authentication, authorization and limits
    (:class:`ServerOptions`). The runtime is ``app.state.runtime``::

        from fastapi import FastAPI
        from pyrego.server import create_app

        api = FastAPI()
        api.mount("/opa", create_app(policies={"authz.rego": text}))
    """
    from starlette.applications import Starlette

    from pyrego.server import api_data, api_misc
    from pyrego.server.routing import CATCHALL, method_routes, not_found_app

    if runtime is None:
        runtime = ServerRuntime(policies, data)
    server = Server(runtime, options or ServerOptions())

    # (path, metric label, handler, methods served, other methods: OPA's catch-all or Go's 405 with this Allow)
    routes = method_routes(
        server,
        [
            ("/v1/data", "v1/data", api_data.v1_data, ("GET", "PUT", "PATCH", "POST"), CATCHALL),
            ("/v1/data/{path:path}", "v1/data", api_data.v1_data, ("GET", "PUT", "PATCH", "POST", "DELETE"), CATCHALL),
            ("/v0/data", "v0/data", api_data.v0_data, ("POST",), CATCHALL),
            ("/v0/data/{path:path}", "v0/data", api_data.v0_data, ("POST",), CATCHALL),
            ("/v1/policies", "v1/policies", api_misc.policies, ("GET",), CATCHALL),
            ("/v1/policies/{path:path}", "v1/policies", api_misc.policies, ("GET", "PUT", "DELETE"), CATCHALL),
            ("/v1/query", "v1/query", api_misc.query, ("GET", "POST"), CATCHALL),
            ("/v1/query/{path:path}", "catchall", api_misc.not_allowed, (), CATCHALL),
            ("/v1/compile", "v1/compile", api_misc.compile_partial, ("POST",), "GET, HEAD, POST"),
            ("/v1/compile/{path:path}", "v1/compile", api_misc.compile_filters, ("GET", "POST"), "GET, HEAD, POST"),
            ("/v1/config", "v1/config", api_misc.config, ("GET",), "GET, HEAD"),
            ("/v1/status", "v1/status", api_misc.status, ("GET",), "GET, HEAD"),
            *_diagnostic_routes(),
            ("/", "index", api_data.index, ("GET", "POST"), "GET, HEAD, POST"),
        ],
    )
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import asyncio

        for plugin in runtime.plugins:  # (bundle downloads, decision logs: see pyrego.server.plugins)
            await asyncio.to_thread(plugin.start)
        try:
            yield
        finally:
            for plugin in reversed(runtime.plugins):
                await asyncio.to_thread(plugin.stop)
            server.worker.close()

    from starlette.middleware import Middleware

    gzip = Middleware(GzipWhenAccepted, minimum_size=server.options.gzip_min_length, compresslevel=server.options.gzip_level)
    fast = Middleware(DecisionFastPath, endpoint=server.endpoint("v1/data", api_data.v1_data))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[gzip, fast])
    app.router.redirect_slashes = False
    app.router.default = not_found_app(server)
    app.state.runtime = runtime
    app.state.server = server
    return app


def diagnostic_app(app: Starlette) -> Starlette:
    """The application of ``--diagnostic-addr`` listeners for the server of ``app``
    (:func:`create_app`'s): only ``/health``, ``/health/...`` and ``/metrics``, through the
    same authentication and authorization, as OPA's diagnostic router. No lifespan: the
    main application's runs the plugins."""
    from starlette.applications import Starlette

    from pyrego.server.routing import method_routes, not_found_app

    server: Server = app.state.server
    diag = Starlette(routes=method_routes(server, _diagnostic_routes()))
    diag.router.redirect_slashes = False
    diag.router.default = not_found_app(server)
    diag.state.runtime = server.runtime
    diag.state.server = server
    return diag

