"""Differences with OPA found on a set of cloud service authorization
policies generated from OpenStack's policy rules (per-service shared
modules in one package that every endpoint's module imports, role and
project checks on ``input.credentials`` against ``input.target``, keys with
dots looked up both as paths and as single keys, ``is_null`` for absent
owners, and looks-ups of the network or security group that owns a resource
through ``http.send`` to a local service). Each case is a minimal program
written here, evaluated by OPA v1.20.2 and by pyrego in every execution
form, with strict builtin errors on and off (off: only where OPA raised no
error), comparing the value, undefined, or the error's code and message."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from opa_compare import agree

_P = "package p\n\n"


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A local port bound but not listening: a connection to it is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


# The corpus asks a local service for a network's owner; with the service
# down, OPA's error names the address Go dialed (the host name resolved to
# an IP: "dial tcp 127.0.0.1:PORT"), where pyrego named the host as written.
REFUSED_HOSTS = ["localhost", "127.0.0.1"]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_refused_connection_names_the_dialed_address(oracle: Any, refused_port: int, host: str) -> None:
    body = (
        "owner(id) := r.body if {\n"
        f'  r := http.send({{"url": concat("/", ["http://{host}:{refused_port}/network", id]), "method": "get"}})\n'
        "}\n\n"
        "allow if owner(input.network_id).tenant_id == input.tenant_id\n"
    )
    agree(oracle, _P + body, "data.p.allow", {"network_id": "n1", "tenant_id": "t"})
