"""Methods, as OPA's router answers them (Go's ``http.ServeMux`` patterns of v1/server/server.go).

Each route serves some methods (a ``GET`` route serves ``HEAD`` too: the GET
handler answers, without the body). Another method gets either

- OPA's catch-all handler (the Data, Policy and Query APIs): 405 with no body,
  counted in the duration metric under ``catchall``; or
- Go's own 405 (``/v1/compile``, ``/v1/config``, ``/v1/status``, ``/health``,
  ``/metrics``, ``/``): ``Method Not Allowed`` in plain text, with an ``Allow``
  header listing the methods the path serves (Go adds ``HEAD`` to ``GET``, and
  counts the methods of the path with a slash appended); not counted;
- ``GET``/``HEAD /v1/compile``: Go's 301 to ``/v1/compile/`` (whose
  ``GET /v1/compile/{path...}`` route matches the path with the slash).

Unknown paths get Go's ``404 page not found``. All of them go through
authentication and authorization first, as OPA's router sits behind them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from pyrego.server.app import Handler, Server

#: The fallback of a route whose other methods reach OPA's catch-all handler.
CATCHALL = "catchall"


def go_not_allowed(allow: str) -> Response:
    """Go's 405: plain text, ``Allow: allow``."""
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("Method Not Allowed\n", status_code=405, headers={"Allow": allow, "X-Content-Type-Options": "nosniff"})


def go_redirect(request: Request, path: str) -> Response:
    """Go's 301 to ``path`` (the query kept), with its HTML body for GET and HEAD."""
    from starlette.responses import Response

    root = request.scope.get("root_path") or ""
    query = request.scope.get("query_string") or b""
    location = root + path + ("?" + query.decode("latin-1") if query else "")
    body = f'<a href="{escape(location)}">Moved Permanently</a>.\n\n'
    return Response(body, status_code=301, headers={"Location": location}, media_type="text/html")


def go_not_found() -> Response:
    """Go's 404 (what OPA's router answers an unknown path)."""
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("404 page not found\n", status_code=404)


async def _catchall(server: Server, request: Request) -> Response:
    from starlette.responses import Response

    return Response(status_code=405)


def method_routes(server: Server, table: Sequence[tuple[str, str, Handler, tuple[str, ...], str]]) -> list[Route]:
    """Starlette routes of ``(path, label, handler, methods, fallback)`` entries: ``fallback`` is
    :data:`CATCHALL` or the ``Allow`` header of Go's 405 (``"GET, HEAD"``)."""
    from starlette.routing import Route

    catchall = server.endpoint("catchall", _catchall)
    routes = []
    for path, label, handler, methods, fallback in table:
        served = frozenset(methods) | ({"HEAD"} if "GET" in methods else set())
        main = server.endpoint(label, handler)
        if fallback == CATCHALL:
            other = catchall
        elif path == "/v1/compile":
            other = server.unrouted(_compile_fallback(fallback))
        else:
            other = server.unrouted(_not_allowed(fallback))
        routes.append(Route(path, _Dispatch(served, main, other), methods=None))
    return routes


class _Dispatch:
    """The ASGI app of one route: its methods to its endpoint, the others to ``other``
    (an app, not a function, so that Starlette passes it every method)."""

    def __init__(
        self, served: frozenset[str], main: Callable[[Request], Awaitable[Response]], other: Callable[[Request], Awaitable[Response]]
    ) -> None:
        from starlette.requests import Request

        self.served = served
        self.main = main
        self.other = other
        self.request = Request

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = self.request(scope, receive, send)
        if scope["method"] in self.served:
            response = await self.main(request)
        else:
            response = await self.other(request)
        await response(scope, receive, send)


def _not_allowed(allow: str) -> Callable[[Request], Awaitable[Response]]:
    async def handler(request: Request) -> Response:
        return go_not_allowed(allow)

    return handler


def _compile_fallback(allow: str) -> Callable[[Request], Awaitable[Response]]:
    async def handler(request: Request) -> Response:
        if request.scope["method"] in ("GET", "HEAD"):
            return go_redirect(request, "/v1/compile/")
        return go_not_allowed(allow)

    return handler


def not_found_app(server: Server) -> Callable[[Any, Any, Any], Awaitable[None]]:
    """The ASGI app of unknown paths: Go's 404, behind authentication and authorization."""
    from starlette.requests import Request

    async def handler(request: Request) -> Response:
        return go_not_found()

    endpoint = server.unrouted(handler)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        response = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)

    return app
