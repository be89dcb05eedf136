"""The uvicorn HTTP protocol of TLS listeners: the client certificate's subject in each request.

:class:`IdentityProtocol` is uvicorn's HTTP protocol (httptools, else h11)
that, on a TLS connection where the client sent a certificate, gives every
request's scope ``scope["extensions"]["tls"]["client_cert_name"]``: the
certificate's subject as OPA writes ``input.identity``
(:func:`~pyrego.server.tlsconf.subject_identity`), read once per
connection. ``--authentication=tls`` reads it (:mod:`pyrego.server.auth`).
Importing this module imports uvicorn.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from pyrego.server.tlsconf import subject_identity


class IdentityProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol, with the client certificate's subject in each request's scope."""

    def connection_made(self, transport: Any) -> None:  # noqa: D102
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            self.app = WithIdentity(self.app, subject_identity(der))  # type: ignore[has-type]


class WithIdentity:
    """An ASGI app with one connection's client certificate subject in each request's scope."""

    def __init__(self, app: Any, name: str) -> None:
        self.app = app
        self.name = name

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        extensions = scope.get("extensions")
        if extensions is None:
            extensions = scope["extensions"] = {}
        extensions["tls"] = {"client_cert_name": self.name}
        await self.app(scope, receive, send)
