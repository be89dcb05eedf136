"""TLS of ``pyrego run --server`` as ``opa run --server`` sets it up: client certificates
(``--authentication=tls``, ``--tls-ca-cert-file``) and their subject as ``input.identity``,
``--min-tls-version``, ``--tls-cipher-suites``; real servers, real TLS clients.

The identities expected are OPA's: v1/server/identifier/tls_test.go's cases (subject
``CN=my-client``; ``O=Torchwood, OU=opa-client-01``; ``C=GB, O=Example Org, OU=Example Org
Unit, SERIALNUMBER=...``) and Go's ``pkix.Name.ToRDNSequence().String()`` rules (fixed
attribute order, last attribute first, other attributes dropped, RFC 2253 escapes)."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server_helpers import REPO, free_port, pyrego_server

pytest.importorskip("cryptography")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

AUTHZ = """package system.authz

default allow := false

allow if input.identity == "CN=my-client"

allow if {
	input.identity == "OU=opa-client-01,O=Torchwood"
	input.method == "GET"
}
"""


def _name(*attrs: tuple[Any, str]) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in attrs])


def _write(tmp: Path, stem: str, cert: x509.Certificate, key: Any) -> tuple[str, str]:
    cert_path, key_path = tmp / f"{stem}.pem", tmp / f"{stem}-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return str(cert_path), str(key_path)


class CA:
    """A certificate authority that signs server and client certificates."""

    def __init__(self, tmp: Path, stem: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        name = _name((NameOID.COMMON_NAME, f"{stem}-ca"))
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.tmp = tmp
        self.path = _write(tmp, stem + "-ca", self.cert, self.key)[0]

    def issue(self, stem: str, subject: x509.Name, server: bool = False) -> tuple[str, str]:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        usage = x509.oid.ExtendedKeyUsageOID.SERVER_AUTH if server else x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        return _write(self.tmp, stem, builder.sign(self.key, hashes.SHA256()), key)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("pki")
    ca, other = CA(tmp, "main"), CA(tmp, "other")
    return {
        "tmp": tmp,
        "ca": ca.path,
        "server": ca.issue("server", _name((NameOID.COMMON_NAME, "server")), server=True),
        "client": ca.issue("client", _name((NameOID.COMMON_NAME, "my-client"))),
        "reader": ca.issue("reader", _name((NameOID.ORGANIZATION_NAME, "Torchwood"), (NameOID.ORGANIZATIONAL_UNIT_NAME, "opa-client-01"))),
        "stranger": other.issue("stranger", _name((NameOID.COMMON_NAME, "my-client"))),
    }


def _client(pki: dict[str, Any], who: str | None, **versions: Any) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=pki["ca"])
    if who is not None:
        ctx.load_cert_chain(*pki[who])
    for attr, value in versions.items():
        setattr(ctx, attr, value)
    return ctx


def _policies(pki: dict[str, Any]) -> str:
    folder = pki["tmp"] / "policies"
    folder.mkdir(exist_ok=True)
    (folder / "authz.rego").write_text(AUTHZ)
    (folder / "app.rego").write_text("package app\n\nx := 1\n")
    return str(folder)


def _tls_args(pki: dict[str, Any], *extra: str) -> list[str]:
    cert, key = pki["server"]
    return ["--tls-cert-file", cert, "--tls-private-key-file", key, *extra]


@pytest.fixture(scope="module")
def mtls(pki: dict[str, Any]) -> Iterator[str]:
    args = [_policies(pki), *_tls_args(pki, "--tls-ca-cert-file", pki["ca"], "--authentication=tls", "--authorization=basic")]
    with pyrego_server(args, scheme="https", verify=_client(pki, "client")) as (url, _):
        yield url


def test_client_certificate_identity_authorizes(mtls: str, pki: dict[str, Any]) -> None:
    r = httpx.get(mtls + "/v1/data/app/x", verify=_client(pki, "client"))
    assert r.status_code == 200 and r.json()["result"] == 1
    r = httpx.put(mtls + "/v1/data/y", json=2, verify=_client(pki, "client"))
    assert r.status_code == 204
    # the reader's subject is "OU=opa-client-01,O=Torchwood": allowed to GET only
    r = httpx.get(mtls + "/v1/data/app/x", verify=_client(pki, "reader"))
    assert r.status_code == 200 and r.json()["result"] == 1
    r = httpx.put(mtls + "/v1/data/y", json=3, verify=_client(pki, "reader"))
    assert r.status_code == 401
    assert r.json() == {"code": "unauthorized", "message": "request rejected by administrative policy"}


def test_no_client_certificate_is_refused(mtls: str, pki: dict[str, Any]) -> None:
    with pytest.raises(httpx.HTTPError):
        httpx.get(mtls + "/health", verify=_client(pki, None))


def test_certificate_of_another_ca_is_refused(mtls: str, pki: dict[str, Any]) -> None:
    with pytest.raises(httpx.HTTPError):
        httpx.get(mtls + "/health", verify=_client(pki, "stranger"))


def _handshake(url: str, ctx: ssl.SSLContext) -> tuple[str, str] | None:
    """(TLS version, cipher) of a handshake with the server at ``url``; None: refused."""
    port = int(url.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if not tls.recv(64).startswith(b"HTTP/1.1 200"):
                return None
            cipher = tls.cipher()
            return (str(tls.version()), cipher[0] if cipher else "")
    except (ssl.SSLError, OSError):
        return None


def _old_client(pki: dict[str, Any], version: ssl.TLSVersion, who: str | None = None) -> ssl.SSLContext:
    """A client that offers ``version`` only (at OpenSSL's security level 0, so that the refusal,
    if any, is the server's)."""
    ctx = _client(pki, who)
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (TLS 1.0 and 1.1 are, on purpose)
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


def test_tls_versions_default_minimum_is_1_2(mtls: str, pki: dict[str, Any]) -> None:
    assert _handshake(mtls, _old_client(pki, ssl.TLSVersion.TLSv1_3, "client")) is not None
    assert _handshake(mtls, _old_client(pki, ssl.TLSVersion.TLSv1_2, "client")) is not None
    assert _handshake(mtls, _old_client(pki, ssl.TLSVersion.TLSv1_1, "client")) is None


def test_min_tls_version_1_3_and_1_1(pki: dict[str, Any]) -> None:
    with pyrego_server([*_tls_args(pki, "--min-tls-version", "1.3")], scheme="https", verify=_client(pki, None)) as (url, _):
        got = _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1_3))
        assert got is not None and got[0] == "TLSv1.3"
        assert _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1_2)) is None
    with pyrego_server([*_tls_args(pki, "--min-tls-version", "1.1")], scheme="https", verify=_client(pki, None)) as (url, _):
        got = _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1_1))
        assert got is not None and got[0] == "TLSv1.1"
        assert _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1)) is None


def test_cipher_suites(pki: dict[str, Any]) -> None:
    args = _tls_args(pki, "--tls-cipher-suites", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256")
    with pyrego_server(args, scheme="https", verify=_client(pki, None)) as (url, _):
        for offered, expected in [
            ("ECDHE-ECDSA-AES128-GCM-SHA256", None),
            ("ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"),
            ("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"),
        ]:
            ctx = _old_client(pki, ssl.TLSVersion.TLSv1_2)
            ctx.set_ciphers(offered)
            got = _handshake(url, ctx)
            assert (got[1] if got else None) == expected, offered
        # TLS 1.3 suites are not configurable (as in Go): a TLS 1.3 client is served
        got = _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1_3))
        assert got is not None and got[0] == "TLSv1.3"


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"127.0.0.1:{free_port()}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--tls-cipher-suites", "TLS_NOT_A_SUITE"], "invalid cipher suite TLS_NOT_A_SUITE"),
        (["--tls-cipher-suites", "TLS_AES_128_GCM_SHA256"], 'TLS 1.3 cipher suite "TLS_AES_128_GCM_SHA256" is not configurable'),
        (["--tls-ca-cert-file", "/nonexistent/ca.pem", "--authentication=tls"], "failed to parse CA cert"),
        (["--tls-ca-cert-file", "/nonexistent/ca.pem"], "read CA cert file"),
    ],
)
def test_bad_tls_settings_stop_the_start(pki: dict[str, Any], extra: list[str], message: str) -> None:
    proc = _run_cli(*_tls_args(pki, *extra))
    assert proc.returncode == 1
    assert message in proc.stderr


def test_https_address_needs_a_certificate() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"https://127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1 and "TLS certificate required but not supplied" in proc.stderr


def test_plain_listener_beside_tls_has_no_identity(pki: dict[str, Any]) -> None:
    """TLS authentication does not close plain listeners (OPA's docs): their requests have no
    identity, so the policy refuses them."""
    port = free_port()
    args = [_policies(pki), *_tls_args(pki, "--tls-ca-cert-file", pki["ca"], "--authentication=tls", "--authorization=basic"), "--addr", f"http://127.0.0.1:{port}"]
    with pyrego_server(args, scheme="https", verify=_client(pki, "client")) as (url, _):
        assert httpx.get(url + "/v1/data/app/x", verify=_client(pki, "client")).json()["result"] == 1
        r = httpx.get(f"http://127.0.0.1:{port}/v1/data/app/x")
        assert r.status_code == 401


# Go's Name.ToRDNSequence().String(), case by case (OPA's identifier tests, and Go's rules).
@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ([(NameOID.COMMON_NAME, "my-client")], "CN=my-client"),
        ([(NameOID.ORGANIZATION_NAME, "Torchwood"), (NameOID.ORGANIZATIONAL_UNIT_NAME, "opa-client-01")], "OU=opa-client-01,O=Torchwood"),
        (
            [(NameOID.COUNTRY_NAME, "GB"), (NameOID.ORGANIZATION_NAME, "Example Org"), (NameOID.ORGANIZATIONAL_UNIT_NAME, "Example Org Unit"), (NameOID.SERIAL_NUMBER, "3064486355086639231")],
            "SERIALNUMBER=3064486355086639231,OU=Example Org Unit,O=Example Org,C=GB",
        ),
        # fixed order whatever the certificate's; attributes Go's Name does not keep are dropped
        ([(NameOID.COMMON_NAME, "c"), (NameOID.EMAIL_ADDRESS, "a@b"), (NameOID.ORGANIZATION_NAME, "o"), (NameOID.DOMAIN_COMPONENT, "dc")], "CN=c,O=o"),
        # several values of one attribute: one RDN joined with '+'
        ([(NameOID.ORGANIZATIONAL_UNIT_NAME, "a"), (NameOID.ORGANIZATIONAL_UNIT_NAME, "b"), (NameOID.LOCALITY_NAME, "l"), (NameOID.STATE_OR_PROVINCE_NAME, "s")], "OU=a+OU=b,L=l,ST=s"),
        ([(NameOID.STREET_ADDRESS, "1 Road"), (NameOID.POSTAL_CODE, "123")], "POSTALCODE=123,STREET=1 Road"),
        # escapes: ,+"\<>; always; a space first or last; '#' first
        ([(NameOID.COMMON_NAME, ' #a,b+c"d\\e<f>g;h# ')], 'CN=\\ #a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h#\\ '),
        ([(NameOID.COMMON_NAME, "#x")], "CN=\\#x"),
        # the last common name only
        ([(NameOID.COMMON_NAME, "first"), (NameOID.COMMON_NAME, "second")], "CN=second"),
    ],
)
def test_subject_identity(attrs: list[tuple[Any, str]], expected: str) -> None:
    from pyrego.server.tlsconf import subject_identity

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(*attrs))
        .issuer_name(_name((NameOID.COMMON_NAME, "ca")))
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    assert subject_identity(cert.public_bytes(serialization.Encoding.DER)) == expected


def test_workers_serve_client_certificates(pki: dict[str, Any]) -> None:
    args = [_policies(pki), *_tls_args(pki, "--tls-ca-cert-file", pki["ca"], "--authentication=tls", "--authorization=basic", "--min-tls-version", "1.3"), "--workers", "2"]
    with pyrego_server(args, scheme="https", verify=_client(pki, "client")) as (url, _):
        for _ in range(4):
            assert httpx.get(url + "/v1/data/app/x", verify=_client(pki, "reader")).json()["result"] == 1
        assert httpx.put(url + "/v1/data/y", json=3, verify=_client(pki, "reader")).status_code == 401
        with pytest.raises(httpx.HTTPError):
            httpx.get(url + "/health", verify=_client(pki, "stranger"))
        assert _handshake(url, _old_client(pki, ssl.TLSVersion.TLSv1_2, "client")) is None


def _wait_for(check: Any, seconds: float = 15.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("workers", ["1", "2"])
def test_changed_tls_files_are_read_again(tmp_path: Path, workers: str) -> None:
    """OPA watches the certificate, key and CA files and serves their new contents: a new
    server certificate (from another CA), then a new CA file for client certificates."""
    import shutil
    import time

    old, new = CA(tmp_path, "old"), CA(tmp_path, "new")
    cert_a, key_a = old.issue("srv-a", _name((NameOID.COMMON_NAME, "a")), server=True)
    cert_b, key_b = new.issue("srv-b", _name((NameOID.COMMON_NAME, "b")), server=True)
    client_old = old.issue("cl-old", _name((NameOID.COMMON_NAME, "my-client")))
    client_new = new.issue("cl-new", _name((NameOID.COMMON_NAME, "my-client")))
    cert, key, ca = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    shutil.copy(cert_a, cert), shutil.copy(key_a, key), shutil.copy(old.path, ca)

    def client(trust: str, pair: tuple[str, str]) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=trust)
        ctx.load_cert_chain(*pair)
        return ctx

    def answers(ctx: ssl.SSLContext) -> bool:
        try:
            return httpx.get(url + "/health", verify=ctx, timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    args = ["--tls-cert-file", str(cert), "--tls-private-key-file", str(key), "--tls-ca-cert-file", str(ca), "--authentication=tls", "--tls-cert-refresh-period", "200ms", "--workers", workers]
    with pyrego_server(args, scheme="https", verify=client(old.path, client_old)) as (url, _):
        assert not answers(client(new.path, client_old))  # (the server's certificate is the old CA's)
        shutil.copy(key_b, key), shutil.copy(cert_b, cert)
        assert _wait_for(lambda: answers(client(new.path, client_old)))
        time.sleep(1)  # (every worker has checked the files by now)
        assert not answers(client(old.path, client_old))
        assert not answers(client(new.path, client_new))  # (client certificates: still the old CA)
        shutil.copy(new.path, ca)
        assert _wait_for(lambda: answers(client(new.path, client_new)))
        time.sleep(1)
        assert not answers(client(new.path, client_old))
        # a broken file leaves the last good ones serving
        cert.write_text("not a certificate")
        time.sleep(1)
        assert answers(client(new.path, client_new))


def test_bad_refresh_period_is_a_usage_error(pki: dict[str, Any]) -> None:
    proc = _run_cli(*_tls_args(pki, "--tls-cert-refresh-period", "30"))
    assert proc.returncode != 0 and 'missing unit in duration "30"' in proc.stderr
