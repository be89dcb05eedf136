"""Crypto builtins: digests, HMACs, X.509 certificates, CSRs and private keys."""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
from typing import Any, Callable

from cryptography import x509 as cx509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from pyrego.builtins._goutil import to_bytes
from pyrego.builtins.jwk import b64url_nopad, pem_blocks, pem_decode, public_of
from pyrego.builtins.registry import builtin, operand_error
from pyrego.builtins.x509 import certificate_json, csr_json, der_certificate_length, private_key_json
from pyrego.builtins.x509_verify import VerifyError, verify_chain
from pyrego.go_base64 import Base64Error, go_b64decode
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.values import thaw

# ---------------------------------------------------------------- digests


def _str(value: Any, pos: int) -> str:
    if type(value) is not str:
        raise operand_error(pos, value, "string")
    return value


def _bytes(s: str) -> bytes:
    # Rego strings are Go strings (bytes); lone surrogates cannot occur in valid input.
    return to_bytes(s)


@builtin("crypto.md5", 1)
def crypto_md5(s: Any) -> str:
    return hashlib.md5(_bytes(_str(s, 1))).hexdigest()


@builtin("crypto.sha1", 1)
def crypto_sha1(s: Any) -> str:
    return hashlib.sha1(_bytes(_str(s, 1))).hexdigest()


@builtin("crypto.sha256", 1)
def crypto_sha256(s: Any) -> str:
    return hashlib.sha256(_bytes(_str(s, 1))).hexdigest()


def _hmac(message: Any, key: Any, digest: Callable[..., Any]) -> str:
    msg = _str(message, 1)
    k = _str(key, 2)
    return hmac.new(_bytes(k), _bytes(msg), digest).hexdigest()


@builtin("crypto.hmac.md5", 2)
def crypto_hmac_md5(message: Any, key: Any) -> str:
    return _hmac(message, key, hashlib.md5)


@builtin("crypto.hmac.sha1", 2)
def crypto_hmac_sha1(message: Any, key: Any) -> str:
    return _hmac(message, key, hashlib.sha1)


@builtin("crypto.hmac.sha256", 2)
def crypto_hmac_sha256(message: Any, key: Any) -> str:
    return _hmac(message, key, hashlib.sha256)


@builtin("crypto.hmac.sha512", 2)
def crypto_hmac_sha512(message: Any, key: Any) -> str:
    return _hmac(message, key, hashlib.sha512)


@builtin("crypto.hmac.equal", 2)
def crypto_hmac_equal(mac1: Any, mac2: Any) -> bool:
    a = _str(mac1, 1)
    b = _str(mac2, 2)
    # constant time, as Go's hmac.Equal
    return hmac.compare_digest(_bytes(a), _bytes(b))


# ---------------------------------------------------------------- certificates


def _std_b64(text: str) -> bytes:
    try:
        return go_b64decode(text)
    except Base64Error as exc:
        raise BuiltinError(str(exc))


def _parse_der_certs(der: bytes) -> list[cx509.Certificate]:
    certs = []
    while der:
        try:
            n = der_certificate_length(der)
            certs.append(cx509.load_der_x509_certificate(der[:n]))
        except ValueError as exc:
            raise BuiltinError(_x509_error(exc))
        der = der[n:]
    return certs


def _x509_error(exc: Exception) -> str:
    text = str(exc)
    return text if text.startswith("x509:") else "x509: malformed certificate"


def _certs_from_pem(data: bytes) -> list[cx509.Certificate]:
    der = b""
    while data:
        block, rest = pem_decode(data)
        if block is None:
            break
        if block.type != "CERTIFICATE":
            raise BuiltinError(f"PEM block type is '{block.type}', expected CERTIFICATE")
        der += block.data
        data = rest
    return _parse_der_certs(der)


def certs_from_string(text: str) -> list[cx509.Certificate]:
    """OPA's getX509CertsFromString: PEM, or base64 of PEM, or base64 of DER."""
    if text.startswith("-----BEGIN"):
        return _certs_from_pem(_bytes(text))
    raw = _std_b64(text)
    if raw.startswith(b"-----BEGIN"):
        return _certs_from_pem(raw)
    return _parse_der_certs(raw)


@builtin("crypto.x509.parse_certificates", 1)
def parse_certificates(certs: Any) -> list[Any]:
    text = _str(certs, 1)
    return [certificate_json(c) for c in certs_from_string(text)]


@builtin("crypto.x509.parse_and_verify_certificates", 1)
def parse_and_verify_certificates(certs: Any) -> list[Any]:
    text = _str(certs, 1)
    try:
        parsed = certs_from_string(text)
        chain = verify_chain(parsed)
    except (BuiltinError, VerifyError):
        return [False, []]
    return [True, [certificate_json(c) for c in chain]]


_KEY_USAGE_NAMES = {
    "KeyUsageAny": 0,
    "KeyUsageServerAuth": 1,
    "KeyUsageClientAuth": 2,
    "KeyUsageCodeSigning": 3,
    "KeyUsageEmailProtection": 4,
    "KeyUsageIPSECEndSystem": 5,
    "KeyUsageIPSECTunnel": 6,
    "KeyUsageIPSECUser": 7,
    "KeyUsageTimeStamping": 8,
    "KeyUsageOCSPSigning": 9,
    "KeyUsageMicrosoftServerGatedCrypto": 10,
    "KeyUsageNetscapeServerGatedCrypto": 11,
    "KeyUsageMicrosoftCommercialCodeSigning": 12,
    "KeyUsageMicrosoftKernelCodeSigning": 13,
}


def _verify_options(options: dict[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in options.items():
        key = thaw(k)
        if type(key) is not str:
            continue
        if key == "DNSName":
            if type(v) is not str:
                raise BuiltinError("'DNSName' should be a string")
            out["dns_name"] = v.strip('"')
        elif key == "CurrentTime":
            if type(v) is bool or type(v) not in (int, float):
                raise BuiltinError("'CurrentTime' should be a number")
            if type(v) is float and not v.is_integer() or not -(2**63) <= int(v) < 2**63:
                raise BuiltinError("'CurrentTime' should be a valid int64 number")
            ns = int(v)
            out["now"] = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc) + datetime.timedelta(
                microseconds=(ns % 10**9) // 1000
            )
        elif key == "MaxConstraintComparisons":
            if type(v) is bool or type(v) not in (int, float):
                raise BuiltinError("'MaxConstraintComparisons' should be a number")
            if type(v) is float and not v.is_integer():
                raise BuiltinError("'MaxConstraintComparisons' should be a valid number")
        elif key == "KeyUsages":
            if type(v) in (list, tuple):
                members = list(v)
            elif type(v) in (set, frozenset):
                members = [thaw(m) for m in v]
            else:
                raise BuiltinError("'KeyUsages' should be an Array or Set")
            usages = []
            invalid = []
            for m in members:
                if type(m) is not str:
                    continue
                name = m.strip('"')
                if name in _KEY_USAGE_NAMES:
                    usages.append(_KEY_USAGE_NAMES[name])
                else:
                    invalid.append(name)
            if invalid:
                raise BuiltinError(f"invalid entries for 'KeyUsages' found: [{' '.join(invalid)}]")
            out["key_usages"] = usages
        else:
            raise BuiltinError("invalid key option")
    return out


@builtin("crypto.x509.parse_and_verify_certificates_with_options", 2)
def parse_and_verify_certificates_with_options(certs: Any, options: Any) -> list[Any]:
    text = _str(certs, 1)
    if type(options) is not dict:
        raise operand_error(2, options, "object")
    try:
        parsed = certs_from_string(text)
    except BuiltinError:
        return [False, []]
    opts = _verify_options(options)
    try:
        chain = verify_chain(parsed, **opts)
    except VerifyError:
        return [False, []]
    # OPA renders this one without its URIStrings extension field.
    return [True, [certificate_json(c, uri_strings=False) for c in chain]]


@builtin("crypto.x509.parse_certificate_request", 1)
def parse_certificate_request(csr: Any) -> Any:
    text = _str(csr, 1)
    data = _bytes(text)
    if not text.startswith("-----BEGIN CERTIFICATE REQUEST-----"):
        data = _std_b64(text)
    block, _ = pem_decode(data)
    if block is not None and block.type != "CERTIFICATE REQUEST":
        raise BuiltinError("invalid PEM-encoded certificate signing request")
    if block is not None:
        data = block.data
    try:
        req = cx509.load_der_x509_csr(data)
    except ValueError:
        raise BuiltinError("asn1: structure error: tags don't match")
    return csr_json(req)


# ---------------------------------------------------------------- private keys


def _load_private_blocks(text: str) -> list[Any]:
    """OPA's getPrivateKeysFromPEMData: every RSA/PKCS#8/EC private key block."""
    data = _bytes(text)
    try:
        data = go_b64decode(text)
    except Base64Error:
        pass
    keys = []
    for block in pem_blocks(data):
        try:
            if block.type == "RSA PRIVATE KEY":
                key = serialization.load_der_private_key(block.data, None)
            elif block.type == "PRIVATE KEY":
                key = serialization.load_der_private_key(block.data, None)
            elif block.type == "EC PRIVATE KEY":
                key = serialization.load_der_private_key(block.data, None)
            else:
                continue
        except (ValueError, TypeError) as exc:
            raise BuiltinError(_key_error(block.type, exc))
        keys.append(key)
    return keys


def _key_error(kind: str, exc: Exception) -> str:
    if kind == "RSA PRIVATE KEY":
        return "x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)"
    if kind == "EC PRIVATE KEY":
        return "x509: failed to parse EC private key"
    return "x509: failed to parse private key"


@builtin("crypto.parse_private_keys", 1)
def parse_private_keys(keys: Any) -> Any:
    text = _str(keys, 1)
    if text == "":
        return None
    parsed = _load_private_blocks(text)
    return [private_key_json(k) for k in parsed]


def _jwk_int(n: int) -> str:
    return b64url_nopad(n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big"))


def private_key_jwk(key: Any) -> dict[str, Any]:
    """A private key as the JWK object OPA's jwk package marshals."""
    if isinstance(key, rsa.RSAPrivateKey):
        n = key.private_numbers()
        pub = n.public_numbers
        return {
            "kty": "RSA",
            "n": _jwk_int(pub.n),
            "e": _jwk_int(pub.e),
            "d": _jwk_int(n.d),
            "p": _jwk_int(n.p),
            "q": _jwk_int(n.q),
            "dp": _jwk_int(n.dmp1),
            "dq": _jwk_int(n.dmq1),
            "qi": _jwk_int(n.iqmp),
        }
    if isinstance(key, ec.EllipticCurvePrivateKey):
        en = key.private_numbers()
        size = (key.curve.key_size + 7) // 8
        crv = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}.get(key.curve.name, key.curve.name)
        return {
            "kty": "EC",
            "crv": crv,
            "x": b64url_nopad(en.public_numbers.x.to_bytes(size, "big")),
            "y": b64url_nopad(en.public_numbers.y.to_bytes(size, "big")),
            "d": b64url_nopad(en.private_value.to_bytes(size, "big")),
        }
    if isinstance(key, ed25519.Ed25519PrivateKey):
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": b64url_nopad(raw), "d": b64url_nopad(key.private_bytes_raw())}
    raise BuiltinError(f"invalid key type {type(key).__name__}")


@builtin("crypto.x509.parse_rsa_private_key", 1)
def parse_rsa_private_key(pem: Any) -> Any:
    text = _str(pem, 1)
    if text == "":
        raise BuiltinError("input PEM data was empty")
    if not text.startswith("-----BEGIN"):
        text = _std_b64(text).decode("utf-8", "replace")
    keys = _load_private_blocks(text)
    if not keys:
        return None
    return private_key_jwk(keys[0])


# ---------------------------------------------------------------- key pairs


def _tls_keypair(cert_pem: bytes, key_pem: bytes) -> dict[str, Any]:
    cert_blocks = [b for b in pem_blocks(cert_pem) if b.type == "CERTIFICATE"]
    if not cert_blocks:
        raise BuiltinError("tls: failed to find any PEM data in certificate input")
    certs = []
    for b in cert_blocks:
        try:
            certs.append(cx509.load_der_x509_certificate(b.data))
        except ValueError:
            raise BuiltinError("x509: malformed certificate")
    key_block = None
    for b in pem_blocks(key_pem):
        if b.type == "PRIVATE KEY" or b.type.endswith(" PRIVATE KEY"):
            key_block = b
            break
    if key_block is None:
        raise BuiltinError("tls: failed to find any PEM data in key input")
    try:
        key = serialization.load_der_private_key(key_block.data, None)
    except (ValueError, TypeError, Exception):
        raise BuiltinError("tls: failed to parse private key")
    leaf = certs[0]
    pub = leaf.public_key()
    if not _same_public(pub, public_of(key)):
        raise BuiltinError("tls: private key does not match public key")
    return {
        "Certificate": [base64.b64encode(b.data).decode("ascii") for b in cert_blocks],
        "PrivateKey": private_key_json(key),
        "SupportedSignatureAlgorithms": None,
        "OCSPStaple": None,
        "SignedCertificateTimestamps": None,
        "Leaf": certificate_json(leaf, uri_strings=False),
    }


def _same_public(a: Any, b: Any) -> bool:
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    try:
        return bool(a.public_bytes(serialization.Encoding.DER, fmt) == b.public_bytes(serialization.Encoding.DER, fmt))
    except (AttributeError, ValueError):
        return False


def _pem_or_der(text: str, kind: str) -> bytes:
    data = _bytes(text)
    if not data.startswith(b"-----BEGIN "):
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            try:
                data = go_b64decode(text)
            except Base64Error as exc:
                raise BuiltinError(str(exc))
    if not data.startswith(b"-----BEGIN "):
        body = base64.encodebytes(data).decode("ascii")
        data = f"-----BEGIN {kind}-----\n{body}-----END {kind}-----\n".encode()
    return data


@builtin("crypto.x509.parse_keypair", 2)
def parse_keypair(cert: Any, key: Any) -> Any:
    c = _str(cert, 1)
    k = _str(key, 1)
    return _tls_keypair(_pem_or_der(c, "CERTIFICATE"), _pem_or_der(k, "PRIVATE KEY"))
