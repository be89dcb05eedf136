"""The server's listeners: OPA's ``--addr`` and ``--diagnostic-addr`` values, bound and served.

- :func:`parse_address`: ``host:port`` (HTTPS when a certificate is given,
  else HTTP), ``http://host:port``, ``https://host:port``,
  ``unix:///path/to.sock`` (``unix://@name``: an abstract socket), as
  ``opa run`` reads them.
- :func:`bind`: the listening sockets of an address (a Unix socket file is
  replaced if it exists and gets ``--unix-socket-perm``, OPA's default
  ``755``; it is removed again when the server stops).
- :func:`run_listeners`: every listener in one process and one event loop,
  each a uvicorn server; the first one runs the application's lifespan
  (plugins) and handles SIGINT/SIGTERM; on shutdown the others stop first,
  so that the plugins stop after every listener has drained.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


class AddressError(ValueError):
    """An address that cannot be listened on (bad syntax, HTTPS without a certificate)."""


@dataclass(frozen=True)
class Address:
    """One listening address: ``scheme`` (``http``, ``https`` or ``unix``), ``host`` and ``port``, or ``path``."""

    scheme: str
    host: str = ""
    port: int = 0
    path: str = ""

    @property
    def abstract(self) -> bool:
        """A Linux abstract Unix socket (``unix://@name``): no file."""
        return self.path.startswith("@")

    @property
    def socket_file(self) -> str | None:
        """The file a Unix socket listens on (None: not a Unix socket, or an abstract one)."""
        return self.path if self.scheme == "unix" and not self.abstract else None


def remove_socket_file(path: str | None) -> None:
    """Remove a Unix socket's file, if there is one (already gone: fine)."""
    if path:
        with contextlib.suppress(OSError):
            os.remove(path)


def parse_address(text: str, tls: bool) -> Address:
    """The :class:`Address` of ``--addr text`` (``tls``: a certificate is configured, so bare
    ``host:port`` is HTTPS, as OPA)."""
    if "://" not in text:
        text = ("https://" if tls else "http://") + text
    scheme, _, rest = text.partition("://")
    if scheme == "unix":
        if not rest:
            raise AddressError(f"--addr {text}: a socket path expected")
        return Address("unix", path=rest)
    if scheme not in ("http", "https"):
        raise AddressError(f'invalid url scheme "{scheme}"')
    hostport = rest.split("/", 1)[0]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        raise AddressError(f"--addr {text}: host:port expected")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if scheme == "https" and not tls:
        raise AddressError("TLS certificate required but not supplied")
    return Address(scheme, host=host, port=int(port))


def split_values(values: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """The values of a repeated flag (``--addr``), each of which may hold several separated by
    commas (OPA's string-slice flags); ``default`` when none is given."""
    out = [a.strip() for v in values or () for a in v.split(",") if a.strip()]
    return out or list(default)


def bind(address: Address, unix_socket_perm: str | None = "755") -> list[socket.socket]:
    """The listening sockets of ``address`` (several for a host name with several addresses)."""
    if address.scheme == "unix":
        return [_bind_unix(address, unix_socket_perm)]
    if not address.host:
        if socket.has_dualstack_ipv6():
            return [socket.create_server(("", address.port), family=socket.AF_INET6, dualstack_ipv6=True)]
        return [socket.create_server(("", address.port))]
    socks: list[socket.socket] = []
    port = address.port
    seen = set()
    try:
        infos = socket.getaddrinfo(address.host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, _, _, _, sockaddr in infos:
            if (family, sockaddr[0]) in seen:
                continue
            seen.add((family, sockaddr[0]))
            sock = socket.create_server((sockaddr[0], port), family=family)
            if not port:
                port = sock.getsockname()[1]  # (one port for every address of a host name)
            socks.append(sock)
    except OSError:
        for sock in socks:
            sock.close()
        raise
    return socks


def _bind_unix(address: Address, perm: str | None) -> socket.socket:
    path = address.path
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if address.abstract:
            sock.bind("\0" + path[1:])
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)  # (a socket left by an earlier run, as OPA)
            sock.bind(path)
            if perm is not None:
                try:
                    mode = int(perm, 8)
                except ValueError:
                    raise AddressError(f'strconv.ParseUint: parsing "{perm}": invalid syntax') from None
                os.chmod(path, mode)
    except BaseException:
        sock.close()
        raise
    return sock


@dataclass
class Listener:
    """Sockets served by one application, with one TLS context (or none)."""

    app: Any
    sockets: list[socket.socket]
    ssl_context: ssl.SSLContext | None = None
    identity: bool = False  # (put the client certificate's subject in each request)
    unix_paths: list[str] = field(default_factory=list)


def run_listeners(listeners: Sequence[Listener], **config: Any) -> bool:
    """Serve every listener until SIGINT/SIGTERM (``config``: uvicorn's settings shared by all).
    The first listener's application runs its lifespan. False: the server did not start."""
    import uvicorn

    class Secondary(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # (the primary server handles the signals)

    class Primary(uvicorn.Server):
        others: list[tuple[uvicorn.Server, list[socket.socket]]] = []
        tasks: list[asyncio.Task[None]] = []

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                self.tasks = [asyncio.create_task(server.serve(sockets=socks)) for server, socks in self.others]

        async def main_loop(self) -> None:
            await super().main_loop()
            for server, _ in self.others:  # (they drain before the lifespan, and the plugins, end)
                server.should_exit = True
            await asyncio.gather(*self.tasks, return_exceptions=True)

    def make_config(listener: Listener, lifespan: Literal["on", "off"]) -> uvicorn.Config:
        ctx = listener.ssl_context
        kwargs = dict(config)
        if ctx is not None:
            kwargs["ssl_context_factory"] = lambda _config, _default: ctx
        if listener.identity:
            kwargs["http"] = "pyrego.server.tlsproto:IdentityProtocol"
        return uvicorn.Config(listener.app, lifespan=lifespan, **kwargs)

    first, *rest = listeners
    primary = Primary(make_config(first, "on"))
    primary.others = [(Secondary(make_config(lst, "off")), lst.sockets) for lst in rest]
    try:
        primary.run(sockets=first.sockets)
    finally:
        for lst in listeners:
            for sock in lst.sockets:
                sock.close()
            for path in lst.unix_paths:
                remove_socket_file(path)
    return primary.started
