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

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


class _EchoHandler(BaseHTTPRequestHandler):
    """Answers every GET with JSON naming the request target it received,
    or, for ``/body/<name>``, one of BODIES as application/json."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        name = self.path.removeprefix("/body/")
        text = BODIES[name] if name in BODIES else json.dumps({"target": self.path, "tenant_id": "t1"})
        data = text.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def echo_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


_LOOKUP = (
    "net(id) := r.body if {\n"
    '  r := http.send({"url": concat("/", [input.base, id]), "method": "get"})\n'
    "}\n\n"
    "target := net(input.id).target\n\n"
    "allow if net(input.id).tenant_id == input.tenant_id\n"
)

# The corpus builds the look-up's URL from the resource's id as given. Go
# parses the URL and writes its path escaped (a space as %20, a quote as
# %22, a backslash as %5C, other characters as their UTF-8 bytes escaped),
# keeping a written escape that is valid ("%2F" stays); pyrego sent the text
# as written (a space or a non-ASCII character failed the request), and so
# asked the service for another resource than OPA did.
ESCAPED_IDS = ["a b", 'a"b', "a\\b", "é", "\u2028", "a%2Fb", "a%2fb", "[x]", "a|b^c`d{e}", "a;b,c=d", "ü%C3%BC", "*"]


@pytest.mark.parametrize("id", ESCAPED_IDS)
def test_url_path_escaped_as_go_writes_it(oracle: Any, echo_server: int, id: str) -> None:
    input = {"base": f"http://127.0.0.1:{echo_server}/network", "id": id, "tenant_id": "t1"}
    agree(oracle, _P + _LOOKUP, "data.p.target", input)
    agree(oracle, _P + _LOOKUP, "data.p.allow", input)


# A query goes as written, non-ASCII bytes and spaces included.
QUERY_IDS = ["x?é", "x?a=1&b=ü", "x?", "x?a b"]


@pytest.mark.parametrize("id", QUERY_IDS)
def test_url_query_sent_as_written(oracle: Any, echo_server: int, id: str) -> None:
    input = {"base": f"http://127.0.0.1:{echo_server}/network", "id": id, "tenant_id": "t1"}
    agree(oracle, _P + _LOOKUP, "data.p.target", input)


# An id that makes the URL malformed fails in Go's URL parser, before any
# request: a bad escape (where pyrego asked anyway, and granted access on
# the answer) or a control character.
MALFORMED_IDS = ["a%zz", "a%2", "a\nb", "a\x7fb", "a\tb", "x#a%zz", "x?q=%zz#f"]


@pytest.mark.parametrize("id", MALFORMED_IDS)
def test_malformed_url_fails_before_the_request(oracle: Any, echo_server: int, id: str) -> None:
    input = {"base": f"http://127.0.0.1:{echo_server}/network", "id": id, "tenant_id": "t1"}
    agree(oracle, _P + _LOOKUP, "data.p.allow", input)


# With the service down, the error shows the URL as Go writes it out again
# from its parts (path escaped, scheme and host as parsed, a password hidden).
SHOWN_URLS = ["http://127.0.0.1:{port}/n/a b", 'http://127.0.0.1:{port}/n/é?q="é" x#f%41é', "HTTP://u:pw@127.0.0.1:{port}/a%2Fb/[c]", "http://127.0.0.1:{port}?"]


@pytest.mark.parametrize("url", SHOWN_URLS)
def test_refused_connection_shows_the_url_as_go_writes_it(oracle: Any, refused_port: int, url: str) -> None:
    body = 'r := http.send({"url": input.u, "method": "get"})\n'
    agree(oracle, _P + body, "data.p.r", {"u": url.format(port=refused_port)})


# A JSON body is read as Go's json.Decoder reads it: its first value, what
# follows not looked at, except a number that goes on malformed. pyrego read
# the whole text, so a body with anything after its value was null, and the
# owner check on it failed where OPA's passed.
BODIES = {
    "trailing_text": '{"tenant_id": "t1"} x',
    "two_objects": '{"tenant_id": "t1"}{"tenant_id": "t2"}',
    "closing_bracket_after": '{"tenant_id": "t1"}]',
    "leading_whitespace": '\t\r\n {"tenant_id": "t1"}',
    "number_then_letter": "1x",
    "number_then_dot": "1.",
    "number_then_e": "1e",
    "fraction_then_dot": "1.5.",
    "exponent_then_e": "1e5e",
    "fraction_then_e": "1.5e",
    "zeros": "00",
    "string_then_text": '"s"x',
    "true_then_text": "truex",
    "null_then_comma": "null,",
    "vertical_tab_first": '\x0b{"tenant_id": "t1"}',
}


@pytest.mark.parametrize("name", list(BODIES))
def test_json_body_is_its_first_value(oracle: Any, echo_server: int, name: str) -> None:
    body = (
        'r := http.send({"url": concat("/", [input.base, input.name]), "method": "get"}).body\n\n'
        "allow if r.tenant_id == \"t1\"\n"
    )
    input = {"base": f"http://127.0.0.1:{echo_server}/body", "name": name}
    agree(oracle, _P + body, "data.p.r", input)
    agree(oracle, _P + body, "data.p.allow", input)


# An https URL for a service that answers in plain HTTP: Go's TLS client
# says the first record is no TLS handshake (pyrego gave OpenSSL's text).
def test_https_to_a_plain_http_service(oracle: Any, echo_server: int) -> None:
    body = 'r := http.send({"url": input.u, "method": "get"})\n'
    agree(oracle, _P + body, "data.p.r", {"u": f"https://127.0.0.1:{echo_server}/network/n1"})


# Found by mutating the corpus's modules (every endpoint's module imports the
# service's shared one): OPA reads an import's path with the future keywords
# (and `not`) off, and reads the token after the path the same way, so a
# keyword starting the next statement is a name there ("if keyword cannot be
# used for rule name", "var cannot be used for rule name"); pyrego read it as
# the keyword ("unexpected if keyword"). An import path ending in a keyword
# gets OPA's hint.
AFTER_IMPORT = {
    "if body": "import data.lib\n\nif {\n  lib.x\n}\n",
    "if expression": "import data.lib\nif lib.allow with input as {}\n",
    "if alone": "import data.lib\nif\n",
    "in assigned": "import data.lib\nin := 1\n",
    "every assigned": "import data.lib\nevery := 1\n",
    "not assigned": "import data.lib\nnot := 1\n",
    "not expression": "import data.lib\nnot lib.x\n",
    "contains rule": "import data.lib\ncontains x if true\n",
    "two imports": "import data.lib\nimport data.other\nif {\n  true\n}\n",
    "after future keywords": "import future.keywords\nin := 1\n",
    "after future.keywords.in": "import future.keywords.in\nin := 1\n",
    "after rego.v1": "import rego.v1\nif {\n  true\n}\n",
    "after an alias": "import data.lib as l\nif {\n  true\n}\n",
    "if ref after import": "import data.lib\nif[1] := 1\n",
    "rule between": "import data.lib\na := 1\nif lib.allow\n",
    "path ends with true": "import data.true\n",
    "path ends with else": "import input.else\n",
    "path ends with if": "import data.x.if\n",
    "path ends with contains, then a name": "import data.contains lib\n",
}


@pytest.mark.parametrize("name", list(AFTER_IMPORT))
def test_statement_after_an_import(oracle: Any, name: str) -> None:
    agree(oracle, _P + AFTER_IMPORT[name], "data.p")
