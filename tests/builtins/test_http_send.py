"""http.send against real local HTTP and HTTPS servers started by the tests."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pyrego.builtins import http as http_mod
from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.context import EvalContext


class Handler(BaseHTTPRequestHandler):
    hits: dict[str, int] = {}

    def log_message(self, format: str, *args: Any) -> None:  # silence the test output
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/plain", extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        Handler.hits[self.path] = Handler.hits.get(self.path, 0) + 1
        if self.path == "/json":
            self._send(200, b'{"a": [1, 2.5, "x"], "big": 12345678901234567890}', "application/json; charset=utf-8")
        elif self.path == "/problem":
            self._send(400, b'{"err": "bad"}', "application/problem+json")
        elif self.path == "/text":
            self._send(200, "héllo".encode(), "text/plain", {"X-Multi": "a"})
        elif self.path == "/yaml":
            self._send(200, b"a: 1\nb: [x, y]\n", "application/yaml")
        elif self.path == "/badjson":
            self._send(200, b"{not json", "application/json")
        elif self.path.startswith("/constant/"):  # NaN, Infinity, -Infinity: Python's reader takes them
            self._send(200, b'{"a": ' + self.path.removeprefix("/constant/").encode() + b"}", "application/json")
        elif self.path == "/echo":
            info = {"method": self.command, "headers": {k.lower(): v for k, v in self.headers.items()}}
            self._send(200, json.dumps(info).encode(), "application/json")
        elif self.path == "/slow":
            time.sleep(1.0)
            self._send(200, b"late")
        elif self.path == "/redirect":
            self._send(302, b"", extra={"Location": "/json"})
        elif self.path == "/count":
            self._send(200, str(Handler.hits[self.path]).encode(), "application/json")
        elif self.path == "/cached":
            self._send(200, str(Handler.hits[self.path]).encode(), "application/json", {"Cache-Control": "max-age=60"})
        elif self.path == "/error500":
            self._send(500, str(Handler.hits[self.path]).encode(), "application/json")
        else:
            self._send(404, b"nope")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        info = {"method": self.command, "body": body.decode(), "ctype": self.headers.get("Content-Type")}
        self._send(201, json.dumps(info).encode(), "application/json")

    do_PUT = do_POST
    do_DELETE = do_GET


def _serve(server: ThreadingHTTPServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{server.server_address[0]}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    yield from _serve(ThreadingHTTPServer(("127.0.0.1", 0), Handler))


@pytest.fixture(scope="module")
def tls_material(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("test ca"))
        .issuer_name(name("test ca"))
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(cn: str, sans: list[x509.GeneralName]) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(cn))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cert.public_bytes(serialization.Encoding.PEM), key_pem

    server_cert, server_key = leaf(
        "localhost", [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    client_cert, client_key = leaf("client", [x509.DNSName("client")])
    d: Path = tmp_path_factory.mktemp("tls")
    (d / "server.pem").write_bytes(server_cert)
    (d / "server.key").write_bytes(server_key)
    (d / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return {
        "dir": d,
        "ca": ca.public_bytes(serialization.Encoding.PEM).decode(),
        "client_cert": client_cert.decode(),
        "client_key": client_key.decode(),
    }


def _tls_server(tls_material: dict[str, Any], require_client: bool) -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    d = tls_material["dir"]
    ctx.load_cert_chain(d / "server.pem", d / "server.key")
    if require_client:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(d / "ca.pem")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    return srv


@pytest.fixture(scope="module")
def tls_server(tls_material: dict[str, Any]) -> Iterator[str]:
    yield from _serve(_tls_server(tls_material, False))


@pytest.fixture(scope="module")
def mtls_server(tls_material: dict[str, Any]) -> Iterator[str]:
    yield from _serve(_tls_server(tls_material, True))


def send(req: dict[str, Any], ctx: EvalContext | None = None) -> Any:
    b = lookup("http.send")
    assert b is not None and b.needs_context and b.nondeterministic
    return b.fn(ctx or EvalContext(), req)


def test_get_json(server: str) -> None:
    resp = send({"method": "get", "url": f"http://{server}/json"})
    assert resp["status_code"] == 200
    assert resp["status"] == "200 OK"
    assert resp["body"] == {"a": [1, 2.5, "x"], "big": 12345678901234567890}
    assert resp["raw_body"] == '{"a": [1, 2.5, "x"], "big": 12345678901234567890}'
    assert resp["headers"]["content-type"] == ["application/json; charset=utf-8"]


def test_json_suffix_yaml_and_text(server: str) -> None:
    resp = send({"method": "GET", "url": f"http://{server}/problem"})
    assert resp["status_code"] == 400 and resp["body"] == {"err": "bad"}
    resp = send({"method": "GET", "url": f"http://{server}/yaml"})
    assert resp["body"] == {"a": 1, "b": ["x", "y"]}
    resp = send({"method": "GET", "url": f"http://{server}/text"})
    assert resp["body"] is None and resp["raw_body"] == "héllo" and resp["headers"]["x-multi"] == ["a"]
    resp = send({"method": "GET", "url": f"http://{server}/badjson"})
    assert resp["body"] is None and resp["raw_body"] == "{not json"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_body_with_a_non_json_number(server: str, constant: str) -> None:
    # Not JSON: no body, as for any malformed JSON, with the text kept (forced decoding too).
    for force in (False, True):
        resp = send({"method": "GET", "url": f"http://{server}/constant/{constant}", "force_json_decode": force})
        assert resp["status_code"] == 200 and resp["body"] is None and resp["raw_body"] == '{"a": ' + constant + "}"


def test_force_json_decode(server: str) -> None:
    resp = send({"method": "GET", "url": f"http://{server}/count", "force_json_decode": True})
    assert type(resp["body"]) is int
    resp = send({"method": "GET", "url": f"http://{server}/text", "force_json_decode": True})
    assert resp["body"] is None


def test_headers_and_user_agent(server: str) -> None:
    resp = send({"method": "GET", "url": f"http://{server}/echo", "headers": {"x-custom-thing": "v", "accept": "a/b"}})
    headers = resp["body"]["headers"]
    assert headers["x-custom-thing"] == "v" and headers["accept"] == "a/b"
    assert headers["user-agent"].startswith("Open Policy Agent/")
    resp = send({"method": "GET", "url": f"http://{server}/echo", "headers": {"User-Agent": "mine"}})
    assert resp["body"]["headers"]["user-agent"] == "mine"


def test_post_body_and_raw_body(server: str) -> None:
    resp = send({"method": "post", "url": f"http://{server}/p", "body": {"b": [1, 2], "a": "<x>"}})
    assert resp["status_code"] == 201
    assert resp["body"]["body"] == '{"a":"\\u003cx\\u003e","b":[1,2]}'
    resp = send({"method": "PUT", "url": f"http://{server}/p", "raw_body": "raw text", "body": {"ignored": 1}})
    assert resp["body"] == {"method": "PUT", "body": "raw text", "ctype": None}


def test_redirects(server: str) -> None:
    resp = send({"method": "GET", "url": f"http://{server}/redirect"})
    assert resp["status_code"] == 302 and resp["headers"]["location"] == ["/json"]
    resp = send({"method": "GET", "url": f"http://{server}/redirect", "enable_redirect": True})
    assert resp["status_code"] == 200 and resp["body"]["a"][0] == 1


def test_timeout_raise_error(server: str) -> None:
    with pytest.raises(BuiltinError, match=r"Get http://.*/slow: request timed out"):
        send({"method": "GET", "url": f"http://{server}/slow", "timeout": "100ms"})


def test_timeout_no_raise(server: str) -> None:
    resp = send({"method": "GET", "url": f"http://{server}/slow", "timeout": 100_000_000, "raise_error": False})
    assert resp["status_code"] == 0
    assert resp["error"]["code"] == "eval_http_send_network_error"
    assert "Client.Timeout exceeded" in resp["error"]["message"]


def test_connection_refused() -> None:
    with pytest.raises(BuiltinError, match="connection refused"):
        send({"method": "GET", "url": "http://127.0.0.1:1/"})
    resp = send({"method": "GET", "url": "http://127.0.0.1:1/", "raise_error": False})
    assert resp["status_code"] == 0 and resp["error"]["code"] == "eval_http_send_network_error"
    assert resp["error"]["message"].startswith('Get "http://127.0.0.1:1/": dial tcp')


def test_bad_scheme() -> None:
    with pytest.raises(BuiltinError, match='unsupported protocol scheme "ftp"'):
        send({"method": "GET", "url": "ftp://example.com/"})


def test_request_validation() -> None:
    with pytest.raises(OperandTypeError, match=r'operand 1 invalid request parameters\(s\): \{"bogus"\}'):
        send({"method": "GET", "url": "http://x", "bogus": 1})
    with pytest.raises(OperandTypeError, match=r'operand 1 missing required request parameters\(s\): \{"url"\}'):
        send({"method": "GET"})
    with pytest.raises(OperandTypeError, match="operand 1 must be object but got string"):
        send("http://x")  # type: ignore[arg-type]
    with pytest.raises(BuiltinError, match='"url" must be a string'):
        send({"method": "GET", "url": 1})
    with pytest.raises(BuiltinError, match="invalid value for raise_error field"):
        send({"method": "GET", "url": "http://x", "raise_error": "no"})
    with pytest.raises(BuiltinError, match="invalid timeout value"):
        send({"method": "GET", "url": "http://x", "timeout": "soon"})
    resp = send({"method": "GET", "url": "http://x", "bogus": 1, "raise_error": False})
    assert resp["status_code"] == 0 and resp["error"]["code"] == "eval_http_send_internal_error"
    assert "invalid request parameters" in resp["error"]["message"]


def test_network_disabled(server: str) -> None:
    ctx = EvalContext(options={"allow_net": False})
    with pytest.raises(BuiltinError, match="network access is disabled"):
        send({"method": "GET", "url": f"http://{server}/json"}, ctx)
    ctx = EvalContext(options={"allow_net": ["example.com"]})
    with pytest.raises(BuiltinError, match="unallowed host: 127.0.0.1"):
        send({"method": "GET", "url": f"http://{server}/json"}, ctx)


def test_intra_query_cache(server: str) -> None:
    ctx = EvalContext()
    first = send({"method": "GET", "url": f"http://{server}/count"}, ctx)
    again = send({"method": "GET", "url": f"http://{server}/count"}, ctx)
    assert first == again
    # another query sends again
    later = send({"method": "GET", "url": f"http://{server}/count"}, EvalContext())
    assert later["body"] == first["body"] + 1
    # non-cacheable status codes are fetched again
    ctx = EvalContext()
    a = send({"method": "GET", "url": f"http://{server}/error500"}, ctx)
    b = send({"method": "GET", "url": f"http://{server}/error500"}, ctx)
    assert b["body"] == a["body"] + 1


def test_cache_ignored_headers(server: str) -> None:
    ctx = EvalContext()
    a = send(
        {
            "method": "GET",
            "url": f"http://{server}/count",
            "headers": {"x-req": "1"},
            "cache_ignored_headers": ["x-req"],
        },
        ctx,
    )
    b = send(
        {
            "method": "GET",
            "url": f"http://{server}/count",
            "headers": {"x-req": "2"},
            "cache_ignored_headers": ["x-req"],
        },
        ctx,
    )
    assert a == b


def test_inter_query_cache(server: str) -> None:
    http_mod.INTER_QUERY_CACHE.clear()
    req = {"method": "GET", "url": f"http://{server}/cached", "cache": True}
    a = send(req, EvalContext())
    b = send(req, EvalContext())
    assert a == b
    req2 = {"method": "GET", "url": f"http://{server}/count", "force_cache": True, "force_cache_duration_seconds": 60}
    c = send(req2, EvalContext())
    d = send(req2, EvalContext())
    assert c == d
    with pytest.raises(BuiltinError, match="'force_cache' set but 'force_cache_duration_seconds' parameter is missing"):
        send({"method": "GET", "url": f"http://{server}/count", "force_cache": True}, EvalContext())
    http_mod.INTER_QUERY_CACHE.clear()


def test_errors_are_cached_per_query() -> None:
    ctx = EvalContext()
    resp1 = send({"method": "GET", "url": "http://127.0.0.1:1/", "raise_error": False}, ctx)
    resp2 = send({"method": "GET", "url": "http://127.0.0.1:1/", "raise_error": False}, ctx)
    assert resp1["error"]["code"] == resp2["error"]["code"] == "eval_http_send_network_error"


def test_tls_with_ca(tls_server: str, tls_material: dict[str, Any]) -> None:
    resp = send({"method": "GET", "url": f"https://{tls_server}/json", "tls_ca_cert": tls_material["ca"]})
    assert resp["status_code"] == 200 and resp["body"]["a"] == [1, 2.5, "x"]
    # escaped newlines in the CA text are accepted, as in OPA
    escaped = tls_material["ca"].replace("\n", "\\n")
    resp = send({"method": "GET", "url": f"https://{tls_server}/json", "tls_ca_cert": escaped})
    assert resp["status_code"] == 200


def test_tls_unknown_authority(tls_server: str) -> None:
    with pytest.raises(BuiltinError, match="x509: certificate signed by unknown authority"):
        send({"method": "GET", "url": f"https://{tls_server}/json"})
    resp = send({"method": "GET", "url": f"https://{tls_server}/json", "raise_error": False})
    assert resp["error"]["code"] == "eval_http_send_network_error"


def test_tls_insecure_skip_verify(tls_server: str) -> None:
    resp = send({"method": "GET", "url": f"https://{tls_server}/json", "tls_insecure_skip_verify": True})
    assert resp["status_code"] == 200


def test_tls_server_name(tls_server: str, tls_material: dict[str, Any]) -> None:
    port = tls_server.rsplit(":", 1)[1]
    resp = send(
        {
            "method": "GET",
            "url": f"https://127.0.0.1:{port}/json",
            "tls_ca_cert": tls_material["ca"],
            "tls_server_name": "localhost",
        }
    )
    assert resp["status_code"] == 200
    with pytest.raises(BuiltinError, match="tls: failed to verify certificate"):
        send(
            {
                "method": "GET",
                "url": f"https://127.0.0.1:{port}/json",
                "tls_ca_cert": tls_material["ca"],
                "tls_server_name": "other.example",
            }
        )


def test_tls_client_certificate(mtls_server: str, tls_material: dict[str, Any]) -> None:
    req = {
        "method": "GET",
        "url": f"https://{mtls_server}/json",
        "tls_ca_cert": tls_material["ca"],
        "tls_client_cert": tls_material["client_cert"],
        "tls_client_key": tls_material["client_key"],
    }
    assert send(req)["status_code"] == 200
    without = {k: v for k, v in req.items() if not k.startswith("tls_client")}
    resp = send(without | {"raise_error": False})
    assert resp["status_code"] == 0


def test_tls_ca_cert_file_and_env(
    tls_server: str, tls_material: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tls_material["dir"] / "ca.pem")
    assert send({"method": "GET", "url": f"https://{tls_server}/json", "tls_ca_cert_file": path})["status_code"] == 200
    monkeypatch.setenv("PYREGO_TEST_CA", tls_material["ca"])
    req = {"method": "GET", "url": f"https://{tls_server}/json", "tls_ca_cert_env_variable": "PYREGO_TEST_CA"}
    assert send(req)["status_code"] == 200
    with pytest.raises(BuiltinError, match="could not add CA certificates from envvar"):
        send({"method": "GET", "url": f"https://{tls_server}/json", "tls_ca_cert_env_variable": "PYREGO_TEST_NOPE"})


def test_parse_timeout() -> None:
    assert http_mod.parse_timeout(1_000_000_000) == 1.0
    assert http_mod.parse_timeout("5s") == 5.0
    assert http_mod.parse_timeout("1m30s") == 90.0
    assert http_mod.parse_timeout("250") == 250e-9
    with pytest.raises(OperandTypeError, match="'timeout' must be one of"):
        http_mod.parse_timeout(True)
