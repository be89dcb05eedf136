"""Authentication and authorization, as ``opa run --authentication=token --authorization=basic``.

With token authentication, the ``Authorization: Bearer <token>`` header's
token is the request's identity; with TLS authentication, the subject of the
client's certificate (``CN=client,O=Example``, as Go writes it). With basic authorization, every request is
first asked of the decision ``data.system.authz.allow`` (configurable), with
OPA's input: ``method``, ``path`` (the URL path's segments), ``params`` and
``headers`` (names as Go writes them, each with a list of values),
``identity`` when there is one, and ``body`` (the parsed body) for ``POST``
to the Data API and to ``/``. ``true`` (or ``{"allowed": true}``) lets the
request through; otherwise 401 with OPA's body, and 500 when the decision
is undefined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from pyrego.server import errors
from pyrego.server.common import eval_key, read_body, route_path
from pyrego.server.jsonio import BodyError, loads

if TYPE_CHECKING:
    from starlette.requests import Request

    from pyrego.server.app import Server


def identity(request: Request) -> str | None:
    """The bearer token of the request (None: none given)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def tls_identity(request: Request) -> str | None:
    """The subject of the client's TLS certificate, as OPA writes it (None: no certificate;
    set by :mod:`pyrego.server.tlsproto` on TLS listeners)."""
    tls = (request.scope.get("extensions") or {}).get("tls")
    return tls.get("client_cert_name") if tls else None


def canonical_header(name: str) -> str:
    """A header name as Go's ``CanonicalMIMEHeaderKey`` writes it (``content-type`` -> ``Content-Type``)."""
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def _expects_body(method: str, path: list[str]) -> bool:
    if method != "POST":
        return False
    if len(path) == 1:
        return path[0] == ""
    return len(path) >= 2 and path[0] in ("v0", "v1") and path[1] == "data"


async def authz_input(server: Server, request: Request) -> dict[str, Any]:
    """The input document of the authorization decision for ``request``."""
    text = route_path(request)
    path = [unquote(s) for s in text[1:].split("/")] if text else []
    params: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    headers: dict[str, list[str]] = {}
    for key, value in request.headers.items():
        headers.setdefault(canonical_header(key), []).append(value)
    doc: dict[str, Any] = {"path": path, "method": request.method.upper(), "params": params, "headers": headers}
    if _expects_body(request.method, path):
        body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
        if body.strip():
            try:
                doc["body"] = loads(body)
            except BodyError as exc:
                raise errors.APIError(400, errors.INVALID_PARAMETER, str(exc)) from None
    if server.options.authentication == "token":
        ident = identity(request)
        if ident is not None:
            doc["identity"] = ident
    elif server.options.authentication == "tls":
        ident = tls_identity(request)
        if ident is not None:
            doc["identity"] = ident
    return doc


async def authorize(server: Server, request: Request) -> None:
    """Raise OPA's 401 (or 500) unless the authorization policy allows ``request``."""
    if server.options.authorization != "basic":
        return
    from pyrego.server.api_data import evaluate

    doc = await authz_input(server, request)
    snap = server.runtime.snapshot
    key = eval_key(request, "authz", snap.revision)
    defined, value, _, _ = await server.worker.run(request, lambda: evaluate(server, snap, server.options.authorization_decision, doc), key)
    if not defined:
        raise errors.APIError(500, errors.INTERNAL, errors.MSG_UNAUTHORIZED_UNDEFINED)
    if value is True:
        return
    if isinstance(value, dict):
        if "allowed" not in value:
            raise errors.APIError(500, errors.INTERNAL, errors.MSG_UNDEFINED)
        if value["allowed"] is True:
            return
        if isinstance(value.get("reason"), str):
            raise errors.APIError(401, errors.UNAUTHORIZED, value["reason"])
    raise errors.APIError(401, errors.UNAUTHORIZED, errors.MSG_UNAUTHORIZED)
