"""Authentication, authorization and TLS of the policy server, through real HTTP(S)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import httpx
import pytest

from pyrego.server import ServerOptions, ServerRuntime, create_app
from server_helpers import serving

# OPA's documented example: the token is the identity; a "secret" token may do anything,
# others may only read the Data API; the body of a POST is in input.body.
AUTHZ = """package system.authz

default allow := false

allow if input.identity == "secret"

allow if {
	input.identity == "reader"
	input.method == "GET"
	input.path[0] == "v1"
	input.path[1] == "data"
}

allow if {
	input.identity == "poster"
	input.method == "POST"
	input.body.input.user == "alice"
}

allow := {"allowed": false, "reason": "teapots may not"} if input.identity == "teapot"
"""

POLICY = "package app\n\nx := 1\n"


@pytest.fixture
def base() -> object:
    runtime = ServerRuntime({"authz.rego": AUTHZ, "app.rego": POLICY})
    with serving(create_app(runtime, options=ServerOptions(authentication="token", authorization="basic"))) as url:
        yield url


def _get(base: str, path: str, token: str | None = None, **kw: object) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(base + path, headers=headers, **kw)  # type: ignore[arg-type]


def test_no_token_is_401(base: str) -> None:
    r = _get(base, "/v1/data/app/x")
    assert r.status_code == 401
    assert r.json() == {"code": "unauthorized", "message": "request rejected by administrative policy"}
    assert _get(base, "/health").status_code == 401  # (every route, as OPA)


def test_tokens_and_methods(base: str) -> None:
    assert _get(base, "/v1/data/app/x", "secret").json()["result"] == 1
    assert _get(base, "/v1/data/app/x", "reader").json()["result"] == 1
    assert _get(base, "/v1/policies", "reader").status_code == 401
    assert _get(base, "/v1/policies", "secret").status_code == 200
    r = httpx.put(base + "/v1/data/y", json=1, headers={"Authorization": "Bearer reader"})
    assert r.status_code == 401


def test_body_is_in_the_authorization_input(base: str) -> None:
    hdr = {"Authorization": "Bearer poster"}
    r = httpx.post(base + "/v1/data/app/x", json={"input": {"user": "alice"}}, headers=hdr)
    assert r.status_code == 200 and r.json()["result"] == 1
    r = httpx.post(base + "/v1/data/app/x", json={"input": {"user": "bob"}}, headers=hdr)
    assert r.status_code == 401


def test_reason_from_the_decision(base: str) -> None:
    r = _get(base, "/v1/data/app/x", "teapot")
    assert r.status_code == 401
    assert r.json() == {"code": "unauthorized", "message": "teapots may not"}


def test_input_shape() -> None:
    # The policy allows only a request whose input has OPA's shape: path segments, params and headers as lists.
    echo = 'package system.authz\n\ndefault allow := false\n\nallow if {\n\tinput.identity == "t"\n\tinput.method == "GET"\n\tinput.path == ["v1", "data", "seen"]\n\tinput.params.a == ["1", "2"]\n\tinput.headers["X-Custom-Thing"] == ["v"]\n}\n'
    runtime = ServerRuntime({"authz.rego": echo}, {"seen": "yes"})
    with serving(create_app(runtime, options=ServerOptions(authentication="token", authorization="basic"))) as url:
        hdr = {"Authorization": "Bearer t", "x-custom-thing": "v"}
        r = httpx.get(url + "/v1/data/seen?a=1&a=2", headers=hdr)
        assert r.status_code == 200 and r.json()["result"] == "yes"
        r = httpx.get(url + "/v1/data/seen?a=1", headers=hdr)
        assert r.status_code == 401


def test_undefined_authorization_policy_is_500() -> None:
    with serving(create_app(ServerRuntime({"app.rego": POLICY}), options=ServerOptions(authorization="basic"))) as url:
        r = httpx.get(url + "/v1/data/app/x")
        assert r.status_code == 500
        assert r.json() == {"code": "internal_error", "message": "authorization policy missing or undefined"}


def _self_signed(tmp: Path) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_tls(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    app = create_app(ServerRuntime({"app.rego": POLICY}))
    with serving(app, ssl_certfile=cert, ssl_keyfile=key) as url:
        assert url.startswith("https://")
        r = httpx.get(url + "/v1/data/app/x", verify=ssl.create_default_context(cafile=cert))
        assert r.json()["result"] == 1
        with pytest.raises(httpx.ConnectError):
            httpx.get(url + "/v1/data/app/x")  # (not trusted without the certificate)
        with pytest.raises(httpx.HTTPError):
            httpx.get(url.replace("https", "http") + "/v1/data/app/x")
