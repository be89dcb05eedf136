"""An ASGI middleware that asks a policy about every request (Starlette, FastAPI, any ASGI app).

>>> app.add_middleware(PolicyMiddleware, engine=engine, decision="data.httpapi.authz.allow")  # doctest: +SKIP

For each HTTP (and WebSocket) request, the middleware builds the input
document (:func:`~pyrego.integrations.decisions.request_input`: method, path
segments, lower-cased headers, query parameters, bearer token, identity;
``extend`` adds more), evaluates ``decision`` on the shared engine with that
input for this request only, and then:

- allowed: calls the app; the :class:`~pyrego.integrations.decisions.Decision`
  is in ``request.state.policy_decision`` (``scope["state"]``);
- denied: answers ``deny_status`` (403) with a JSON body
  (``{"error": "forbidden", "reasons": [...]}``; ``deny_body`` changes it);
  a WebSocket is closed with code 1008 before it is accepted;
- evaluation failed: answers 500 with ``{"error": "policy evaluation failed",
  "code": ...}``: an error never allows (fail closed).

Paths in ``exempt_paths`` (see :class:`~pyrego.integrations.decisions.ExemptPaths`)
and lifespan events pass through unchecked. The request body is not read.

The evaluation runs inline on the event loop by default: for a small policy
it takes microseconds, less than a hop to a worker thread costs (see
docs/integrations.md for the figures). ``in_thread=True`` runs it in a
worker thread (``anyio.to_thread``) instead, for policies slow enough to hold
up other requests.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Union
from urllib.parse import parse_qsl

from pyrego.integrations.decisions import (
    Decision,
    EngineSource,
    ExemptPaths,
    Identify,
    PolicyEvaluationError,
    denied_body,
    error_body,
    evaluate,
    request_input,
)

__all__ = ["PolicyMiddleware", "scope_input"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: ``extend(scope, input)``: adds to (or replaces) the input document; may be
#: a coroutine function; returns the input to use, or ``None`` for the one it was given.
Extend = Callable[[Scope, dict], Union[dict, None, Awaitable[Union[dict, None]]]]


def scope_input(scope: Scope, *, identify: Identify | None = None) -> dict[str, Any]:
    """The input document of the request ``scope`` (see :func:`~pyrego.integrations.decisions.request_input`)."""
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers") or ()]
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    method = scope.get("method") or ("WEBSOCKET" if scope["type"] == "websocket" else "")
    return request_input(method, scope.get("path") or "/", headers, query, identify=identify)


class PolicyMiddleware:
    """Checks every request against the decision ``decision`` (see the module's text).

    ``engine``: an :class:`~pyrego.Engine` or an engine source (a callable
    returning the engine in use, e.g. :class:`~pyrego.integrations.reload.PolicyDirectory`).
    ``identify(token)``: ``input.identity`` from the bearer token.
    ``extend(scope, input)``: more input (a route's parameters, a tenant).
    ``deny_status``/``deny_body(decision)``: the denial's status and JSON body.
    ``expose_errors``: the engine's error message in the 500's body (off:
    it can show policy text and input; the error is logged either way)."""

    def __init__(
        self,
        app: ASGIApp,
        engine: EngineSource,
        decision: str = "data.httpapi.authz.allow",
        *,
        exempt_paths: Iterable[str | Callable[[str], bool]] = (),
        identify: Identify | None = None,
        extend: Extend | None = None,
        deny_status: int = 403,
        deny_body: Callable[[Decision], Any] = denied_body,
        in_thread: bool = False,
        expose_errors: bool = False,
    ) -> None:
        self.app = app
        self.engine = engine
        self.decision = decision
        self.exempt = ExemptPaths(exempt_paths)
        self.identify = identify
        self.extend = extend
        self.deny_status = deny_status
        self.deny_body = deny_body
        self.in_thread = in_thread
        self.expose_errors = expose_errors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if (kind != "http" and kind != "websocket") or (self.exempt and self.exempt(scope.get("path") or "/")):
            await self.app(scope, receive, send)
            return
        try:
            doc = scope_input(scope, identify=self.identify)
            if self.extend is not None:
                more = self.extend(scope, doc)
                if inspect.isawaitable(more):
                    more = await more
                if more is not None:
                    doc = more
            decision = await self.decide(doc)
        except PolicyEvaluationError as err:
            await _refuse(scope, send, 500, error_body(err, expose=self.expose_errors))
            return
        except Exception as exc:  # a failing hook: fail closed as for the engine
            await _refuse(scope, send, 500, error_body(PolicyEvaluationError(self.decision, exc), expose=self.expose_errors))
            return
        if not decision.allowed:
            await _refuse(scope, send, self.deny_status, self.deny_body(decision))
            return
        scope.setdefault("state", {})["policy_decision"] = decision
        await self.app(scope, receive, send)

    async def decide(self, doc: Any) -> Decision:
        """The decision for the input ``doc`` (inline, or in a worker thread when ``in_thread``)."""
        if self.in_thread:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(evaluate, self.engine, self.decision, doc)
        return evaluate(self.engine, self.decision, doc)


async def _refuse(scope: Scope, send: Send, status: int, body: Any) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008 if status < 500 else 1011})
        return
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode("ascii"))],
        }
    )
    await send({"type": "http.response.body", "body": payload})
