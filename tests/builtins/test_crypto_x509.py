"""crypto.x509.*, crypto.parse_private_keys: Go-shaped certificate, CSR and key objects."""

from __future__ import annotations

import base64
import datetime
import ipaddress
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup

NOW = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def name(cn: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Org"),
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
        ]
    )


def make(
    subject: str,
    issuer: str,
    key: Any,
    signer: Any,
    ca: bool,
    sans: list[Any] | None = None,
    eku: list[Any] | None = None,
) -> x509.Certificate:
    b = (
        x509.CertificateBuilder()
        .subject_name(name(subject))
        .issuer_name(name(issuer))
        .public_key(key.public_key())
        .serial_number(1234567890123456789012345)
        .not_valid_before(NOW)
        .not_valid_after(NOW + datetime.timedelta(days=3650))
        .add_extension(
            x509.BasicConstraints(ca=ca, path_length=0 if ca and subject == "inter" else None), critical=True
        )
    )
    if ca:
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if eku:
        b = b.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    return b.sign(signer, hashes.SHA256())


ROOT_KEY = ec.generate_private_key(ec.SECP256R1())
INTER_KEY = rsa.generate_private_key(65537, 2048)
LEAF_KEY = rsa.generate_private_key(65537, 2048)
ROOT = make("root", "root", ROOT_KEY, ROOT_KEY, True)
INTER = make("inter", "root", INTER_KEY, ROOT_KEY, True)
LEAF = make(
    "leaf",
    "inter",
    LEAF_KEY,
    INTER_KEY,
    False,
    [
        x509.DNSName("example.com"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.UniformResourceIdentifier("spiffe://trust/workload"),
        x509.RFC822Name("a@b.c"),
    ],
    [ExtendedKeyUsageOID.SERVER_AUTH],
)


def pem(c: x509.Certificate) -> str:
    return c.public_bytes(serialization.Encoding.PEM).decode()


CHAIN = pem(ROOT) + pem(INTER) + pem(LEAF)


def key_pem(key: Any, fmt: serialization.PrivateFormat = serialization.PrivateFormat.TraditionalOpenSSL) -> str:
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()


def test_parse_certificates_shape() -> None:
    certs = call("crypto.x509.parse_certificates", CHAIN)
    assert [c["Subject"]["CommonName"] for c in certs] == ["root", "inter", "leaf"]
    leaf = certs[2]
    assert leaf["Version"] == 3
    assert leaf["SerialNumber"] == 1234567890123456789012345
    assert leaf["Issuer"]["CommonName"] == "inter"
    assert leaf["Subject"]["Country"] == ["US"] and leaf["Subject"]["Organization"] == ["Org"]
    assert leaf["Subject"]["Names"][2] == {"Type": [2, 5, 4, 3], "Value": "leaf"}
    assert leaf["NotBefore"] == "2024-01-01T00:00:00Z"
    assert leaf["DNSNames"] == ["example.com"]
    assert leaf["IPAddresses"] == ["127.0.0.1"]
    assert leaf["EmailAddresses"] == ["a@b.c"]
    assert leaf["URIStrings"] == ["spiffe://trust/workload"]
    assert leaf["URIs"][0]["Scheme"] == "spiffe" and leaf["URIs"][0]["Host"] == "trust"
    assert leaf["ExtKeyUsage"] == [1]
    assert leaf["SignatureAlgorithm"] == 4 and leaf["PublicKeyAlgorithm"] == 1
    assert leaf["PublicKey"]["E"] == 65537
    assert leaf["BasicConstraintsValid"] is True and leaf["IsCA"] is False and leaf["MaxPathLen"] == -1
    assert leaf["Raw"] == base64.b64encode(LEAF.public_bytes(serialization.Encoding.DER)).decode()
    assert leaf["PermittedDNSDomains"] is None
    root = certs[0]
    assert root["PublicKeyAlgorithm"] == 3 and root["PublicKey"]["Curve"] == {}
    assert root["KeyUsage"] == 1 | 32 | 64
    assert certs[1]["MaxPathLen"] == 0 and certs[1]["MaxPathLenZero"] is True


def test_parse_certificates_encodings() -> None:
    der = LEAF.public_bytes(serialization.Encoding.DER)
    from_der = call("crypto.x509.parse_certificates", base64.b64encode(der).decode())
    from_b64_pem = call("crypto.x509.parse_certificates", base64.b64encode(pem(LEAF).encode()).decode())
    assert from_der == from_b64_pem == [call("crypto.x509.parse_certificates", pem(LEAF))[0]]


def test_parse_certificates_errors() -> None:
    with pytest.raises(BuiltinError, match="illegal base64 data"):
        call("crypto.x509.parse_certificates", "not base64!")
    with pytest.raises(BuiltinError, match="PEM block type is 'PRIVATE KEY', expected CERTIFICATE"):
        call("crypto.x509.parse_certificates", key_pem(LEAF_KEY, serialization.PrivateFormat.PKCS8))
    with pytest.raises(BuiltinError, match="x509:"):
        call("crypto.x509.parse_certificates", base64.b64encode(b"\x30\x03\x02\x01\x01").decode())
    with pytest.raises(OperandTypeError):
        call("crypto.x509.parse_certificates", 5)
    assert call("crypto.x509.parse_certificates", "") == []


def test_parse_and_verify() -> None:
    ok, chain = call("crypto.x509.parse_and_verify_certificates", CHAIN)
    assert ok is True
    assert [c["Subject"]["CommonName"] for c in chain] == ["leaf", "inter", "root"]
    assert call("crypto.x509.parse_and_verify_certificates", pem(LEAF)) == [False, []]
    assert call("crypto.x509.parse_and_verify_certificates", pem(ROOT) + pem(LEAF)) == [False, []]
    other = make("leaf", "inter", LEAF_KEY, LEAF_KEY, False)
    assert call("crypto.x509.parse_and_verify_certificates", pem(ROOT) + pem(INTER) + pem(other)) == [False, []]
    assert call("crypto.x509.parse_and_verify_certificates", "garbage") == [False, []]


def test_parse_and_verify_with_options() -> None:
    f = "crypto.x509.parse_and_verify_certificates_with_options"
    ok, chain = call(f, CHAIN, {"DNSName": "example.com", "KeyUsages": ["KeyUsageServerAuth"]})
    assert ok is True and "URIStrings" not in chain[0]
    assert call(f, CHAIN, {"DNSName": "other.com"}) == [False, []]
    assert call(f, CHAIN, {"KeyUsages": ["KeyUsageClientAuth"]}) == [False, []]
    assert call(f, CHAIN, {"KeyUsages": frozenset(["KeyUsageAny"])})[0] is True
    expired = int(datetime.datetime(2040, 1, 1, tzinfo=datetime.timezone.utc).timestamp()) * 10**9
    assert call(f, CHAIN, {"CurrentTime": expired}) == [False, []]
    valid = int(datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc).timestamp()) * 10**9
    assert call(f, CHAIN, {"CurrentTime": valid})[0] is True
    with pytest.raises(BuiltinError, match="invalid key option"):
        call(f, CHAIN, {"Bogus": 1})
    with pytest.raises(BuiltinError, match="'DNSName' should be a string"):
        call(f, CHAIN, {"DNSName": 1})
    with pytest.raises(BuiltinError, match=r"invalid entries for 'KeyUsages' found: \[Nope\]"):
        call(f, CHAIN, {"KeyUsages": ["Nope"]})
    with pytest.raises(OperandTypeError, match="operand 2 must be object"):
        call(f, CHAIN, "x")


def test_parse_certificate_request() -> None:
    csr = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(name("csr"))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("a.com")]), critical=False)
        .sign(LEAF_KEY, hashes.SHA256())
    )
    text = csr.public_bytes(serialization.Encoding.PEM).decode()
    out = call("crypto.x509.parse_certificate_request", text)
    assert out["Subject"]["CommonName"] == "csr"
    assert out["DNSNames"] == ["a.com"]
    assert out["Attributes"] == [
        {"Type": [1, 2, 840, 113549, 1, 9, 14], "Value": [[{"Type": [2, 5, 29, 17], "Value": "MAeCBWEuY29t"}]]}
    ]
    assert call("crypto.x509.parse_certificate_request", base64.b64encode(text.encode()).decode()) == out
    with pytest.raises(BuiltinError, match="invalid PEM-encoded certificate signing request"):
        call("crypto.x509.parse_certificate_request", base64.b64encode(pem(LEAF).encode()).decode())


def test_parse_private_keys() -> None:
    keys = call("crypto.parse_private_keys", key_pem(LEAF_KEY) + key_pem(ROOT_KEY, serialization.PrivateFormat.PKCS8))
    n = LEAF_KEY.private_numbers()
    assert keys[0]["N"] == n.public_numbers.n and keys[0]["D"] == n.d and keys[0]["Primes"] == [n.p, n.q]
    assert keys[1]["D"] == ROOT_KEY.private_numbers().private_value and keys[1]["Curve"] == {}
    ed = ed25519.Ed25519PrivateKey.generate()
    assert type(call("crypto.parse_private_keys", key_pem(ed, serialization.PrivateFormat.PKCS8))[0]) is str
    assert call("crypto.parse_private_keys", "") is None
    assert call("crypto.parse_private_keys", "no pem here") == []
    assert call("crypto.parse_private_keys", base64.b64encode(key_pem(LEAF_KEY).encode()).decode())[0]["E"] == 65537


def test_parse_rsa_private_key() -> None:
    jwk = call("crypto.x509.parse_rsa_private_key", key_pem(LEAF_KEY))
    assert jwk["kty"] == "RSA" and jwk["e"] == "AQAB" and set(jwk) == {"kty", "n", "e", "d", "p", "q", "dp", "dq", "qi"}
    with pytest.raises(BuiltinError, match="input PEM data was empty"):
        call("crypto.x509.parse_rsa_private_key", "")


def test_parse_keypair() -> None:
    out = call("crypto.x509.parse_keypair", pem(LEAF), key_pem(LEAF_KEY))
    assert out["Leaf"]["Subject"]["CommonName"] == "leaf"
    assert out["Certificate"] == [base64.b64encode(LEAF.public_bytes(serialization.Encoding.DER)).decode()]
    assert out["PrivateKey"]["E"] == 65537
    with pytest.raises(BuiltinError, match="tls: private key does not match public key"):
        call("crypto.x509.parse_keypair", pem(LEAF), key_pem(INTER_KEY))
