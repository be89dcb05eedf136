"""JSON Web Token builtins: ``io.jwt.decode``, ``decode_verify``, ``verify_*``, ``encode_sign*``."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

from cryptography import x509 as cx509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from pyrego.builtins.encoding import go_json_loads
from pyrego.builtins.jwk import (
    JWK_STRING_ERROR,
    Jwk,
    b64url_decode_opa,
    b64url_nopad,
    go_json_error,
    go_json_marshal,
    parse_jwk_set,
    pem_decode,
)
from pyrego.builtins.registry import builtin, operand_error
from pyrego.go_base64 import Base64Error
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.convert import reject_json_constant
from pyrego.runtime.numbers import parse_number, to_decimal
from pyrego.runtime.values import thaw

ALGORITHMS = frozenset(
    [
        "RS256",
        "RS384",
        "RS512",
        "PS256",
        "PS384",
        "PS512",
        "ES256",
        "ES384",
        "ES512",
        "HS256",
        "HS384",
        "HS512",
        "EdDSA",
    ]
)

_HASHES: dict[str, Callable[[], hashes.HashAlgorithm]] = {
    "256": hashes.SHA256,
    "384": hashes.SHA384,
    "512": hashes.SHA512,
}
_HASHLIB = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}


# ---------------------------------------------------------------- decoding


@dataclass(slots=True)
class Token:
    header: str
    payload: str
    signature: str
    decoded_header: dict[str, Any] | None = None


def _split(jwt: Any) -> Token:
    if type(jwt) is not str:
        raise operand_error(1, jwt, "string")
    if "." not in jwt:
        raise BuiltinError("encoded JWT had no period separators")
    parts = jwt.split(".")
    if len(parts) != 3:
        raise BuiltinError(f"encoded JWT must have 3 sections, found {len(parts)}")
    return Token(parts[0], parts[1], parts[2])


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _json_object(text: str) -> dict[str, Any]:
    """OPA's extractJSONObject: the text must be a JSON object (last duplicate wins)."""
    try:
        value = go_json_loads(text)  # (util.UnmarshalJSON: Go's decoder, then no second value)
    except BuiltinError as exc:
        raise BuiltinError(f"invalid JSON: {exc}")
    if type(value) is not dict:
        raise BuiltinError("decoded JSON type was not an Object")
    return value


def _decode_header(token: Token) -> dict[str, Any]:
    try:
        raw = b64url_decode_opa(token.header)
    except BuiltinError as exc:
        raise BuiltinError(f"JWT header had invalid encoding: {exc}")
    try:
        header = _json_object(_text(raw))
    except BuiltinError as exc:
        raise BuiltinError(f"bad JWT header: {exc}")
    if "enc" in header:
        raise BuiltinError("JWT is a JWE object, which is not supported")
    token.decoded_header = header
    return header


def _decode_payload(token: Token) -> str:
    try:
        return _text(b64url_decode_opa(token.payload))
    except BuiltinError as exc:
        raise BuiltinError(f"JWT payload had invalid encoding: {exc}")


def _decode_signature(token: Token) -> bytes:
    return b64url_decode_opa(token.signature)


@builtin("io.jwt.decode", 1)
def jwt_decode(jwt: Any) -> list[Any]:
    token = _split(jwt)
    header = _decode_header(token)
    payload_text = _decode_payload(token)
    if header.get("cty") == "JWT":
        # A nested token is the (quoted) payload; decode that one instead.
        return jwt_decode(payload_text.strip("\"'"))
    payload = _json_object(payload_text)
    try:
        sig = _decode_signature(token)
    except BuiltinError as exc:
        raise BuiltinError(f"JWT signature had invalid encoding: {exc}")
    return [header, payload, sig.hex()]


# ---------------------------------------------------------------- keys


def keys_from_cert_or_jwk(text: str) -> list[Jwk]:
    """OPA's getKeysFromCertOrJWK: a PEM certificate / public key, or a JWK (set)."""
    block, rest = pem_decode(text.encode("utf-8", "surrogatepass"))
    if block is not None:
        if rest:
            raise BuiltinError("extra data after a PEM certificate block")
        if block.type == "CERTIFICATE":
            try:
                cert = cx509.load_der_x509_certificate(block.data)
                key = cert.public_key()
            except (ValueError, UnsupportedAlgorithm) as exc:
                raise BuiltinError(f"failed to parse a PEM certificate: x509: malformed certificate ({exc})")
            return [Jwk(key, "")]
        if block.type == "PUBLIC KEY":
            try:
                pub = serialization.load_der_public_key(block.data)
            except (ValueError, UnsupportedAlgorithm) as exc:
                raise BuiltinError(f"failed to parse a PEM public key: {exc}")
            return [Jwk(pub, "")]
        raise BuiltinError("failed to extract a Key from the PEM certificate")
    try:
        keys = parse_jwk_set(text)
    except (ValueError, TypeError) as exc:
        raise BuiltinError(f"failed to parse a JWK key (set): {exc}")
    out = []
    for k in keys:
        if k.alg and k.alg not in ALGORITHMS:
            continue
        if not isinstance(k.key, bytes):
            from pyrego.builtins.jwk import public_of

            k.key = public_of(k.key)
        out.append(k)
    return out


def verify_signature(key: Any, alg: str, message: bytes, signature: bytes) -> bool:
    """Verify a JWS signature of ``alg`` with ``key``; any mismatch is False."""
    try:
        if alg.startswith("HS"):
            if not isinstance(key, bytes):
                return False
            mac = hmac.new(key, message, _HASHLIB[alg[2:]]).digest()
            return hmac.compare_digest(mac, signature)
        if alg.startswith("RS") or alg.startswith("PS"):
            if not isinstance(key, rsa.RSAPublicKey):
                return False
            h = _HASHES[alg[2:]]()
            pad: padding.AsymmetricPadding
            if alg.startswith("RS"):
                pad = padding.PKCS1v15()
            else:
                pad = padding.PSS(mgf=padding.MGF1(h), salt_length=padding.PSS.AUTO)
            key.verify(signature, message, pad, h)
            return True
        if alg.startswith("ES"):
            if not isinstance(key, ec.EllipticCurvePublicKey):
                return False
            size = (key.curve.key_size + 7) // 8
            if len(signature) != 2 * size:
                return False
            r = int.from_bytes(signature[:size], "big")
            s = int.from_bytes(signature[size:], "big")
            key.verify(encode_dss_signature(r, s), message, ec.ECDSA(_HASHES[alg[2:]]()))
            return True
        if alg == "EdDSA":
            if not isinstance(key, ed25519.Ed25519PublicKey):
                return False
            key.verify(signature, message)
            return True
    except (InvalidSignature, ValueError, TypeError, KeyError):
        return False
    return False


# ---------------------------------------------------------------- header parsing


@dataclass(slots=True)
class Header:
    alg: str = ""
    kid: str = ""
    typ: str = ""
    cty: str = ""
    crit: set[str] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)

    def valid(self) -> bool:
        if not self.alg:
            return False
        return not any(u in self.crit for u in self.unknown)


def parse_header(decoded: dict[str, Any]) -> Header:
    h = Header()
    for k, v in decoded.items():
        name = k if type(k) is str else str(thaw(k))
        if name in ("alg", "kid", "typ", "cty"):
            if type(v) is not str:
                raise BuiltinError(f"{name}: must be a string")
            setattr(h, name, v)
        elif name == "crit":
            if type(v) is not list:
                raise BuiltinError("crit: must be a list")
            h.crit = {e for e in v if type(e) is str}
            if not h.crit:
                raise BuiltinError("crit: must be a nonempty list")
        else:
            h.unknown.append(name)
    return h


# ---------------------------------------------------------------- verify_*


def _verify_with_keys(jwt: Any, key_text: Any, alg: str) -> bool:
    token = _split(jwt)
    if type(key_text) is not str:
        raise operand_error(2, key_text, "string")
    keys = keys_from_cert_or_jwk(key_text)
    signature = _decode_signature(token)
    header = parse_header(_decode_header(token))
    message = (token.header + "." + token.payload).encode("utf-8", "surrogatepass")
    if header.kid:
        for k in keys:
            if k.kid == header.kid:
                return verify_signature(k.key, alg, message, signature)
    for k in keys:
        if k.alg and k.alg != header.alg:
            continue
        if verify_signature(k.key, alg, message, signature):
            return True
    return False


def _verify_es_any(jwt: Any, key_text: Any, hash_bits: str) -> bool:
    """OPA's verify_es*: the digest size follows the builtin, the curve follows the key."""
    token = _split(jwt)
    if type(key_text) is not str:
        raise operand_error(2, key_text, "string")
    keys = keys_from_cert_or_jwk(key_text)
    signature = _decode_signature(token)
    header = parse_header(_decode_header(token))
    message = (token.header + "." + token.payload).encode("utf-8", "surrogatepass")

    def check(key: Any) -> bool:
        if not isinstance(key, ec.EllipticCurvePublicKey):
            return False
        half = len(signature) // 2
        r = int.from_bytes(signature[:half], "big")
        s = int.from_bytes(signature[half:], "big")
        try:
            key.verify(encode_dss_signature(r, s), message, ec.ECDSA(_HASHES[hash_bits]()))
        except (InvalidSignature, ValueError):
            return False
        return True

    if header.kid:
        for k in keys:
            if k.kid == header.kid:
                return check(k.key)
    for k in keys:
        if k.alg and k.alg != header.alg:
            continue
        if check(k.key):
            return True
    return False


def _make_verifier(alg: str) -> Callable[[Any, Any], bool]:
    if alg.startswith("ES"):
        bits = alg[2:]
        return lambda jwt, key: _verify_es_any(jwt, key, bits)
    return lambda jwt, key: _verify_with_keys(jwt, key, alg)


for _alg in ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"):
    builtin(f"io.jwt.verify_{_alg.lower()}", 2)(_make_verifier(_alg))


def _verify_hs(jwt: Any, secret: Any, bits: str) -> bool:
    if type(jwt) is not str:
        raise operand_error(1, jwt, "string")
    if type(secret) is not str:
        raise operand_error(2, secret, "string")
    token = _split(jwt)
    mac = hmac.new(
        secret.encode("utf-8", "surrogatepass"), (token.header + "." + token.payload).encode(), _HASHLIB[bits]
    )
    signature = _decode_signature(token)
    return hmac.compare_digest(signature, mac.digest())


for _bits in ("256", "384", "512"):
    builtin(f"io.jwt.verify_hs{_bits}", 2)(lambda jwt, secret, _b=_bits: _verify_hs(jwt, secret, _b))


# ---------------------------------------------------------------- decode_verify


@dataclass(slots=True)
class Constraints:
    secret: str = ""
    alg: str = ""
    iss: str = ""
    aud: str = ""
    keys: list[Jwk] | None = None
    time: float = -1.0


def _time_value(value: Any) -> float:
    if type(value) is bool or type(value) not in (int, float):
        raise BuiltinError("token time constraint: must be a number")
    t = float(value)
    if t < 0:
        raise BuiltinError("token time constraint: must not be negative")
    return t


def parse_constraints(obj: dict[Any, Any], now_ns: int) -> Constraints:
    c = Constraints()
    for k, v in obj.items():
        name = k if type(k) is str else None
        if name == "cert":
            if type(v) is not str:
                raise BuiltinError("cert constraint: must be a string")
            c.keys = keys_from_cert_or_jwk(v)
        elif name in ("secret", "alg", "iss", "aud"):
            if type(v) is not str:
                raise BuiltinError(f"{name} constraint: must be a string")
            setattr(c, name, v)
        elif name == "time":
            c.time = _time_value(v)
        else:
            raise BuiltinError(f"unknown token validation constraint: {name if name is not None else thaw(k)}")
    if c.time == -1.0:
        c.time = float(now_ns)
    n = (1 if c.keys is not None else 0) + (1 if c.secret else 0)
    if n > 1:
        raise BuiltinError("duplicate key constraints")
    if n < 1:
        raise BuiltinError("no key constraint")
    return c


def _constraint_verify(c: Constraints, header: Header, token: Token, signature: bytes) -> bool:
    message = (token.header + "." + token.payload).encode("utf-8", "surrogatepass")
    if c.keys is not None:
        if header.kid:
            for k in c.keys:
                if k.kid == header.kid:
                    return verify_signature(k.key, header.alg, message, signature)
        for k in c.keys:
            if k.alg and k.alg != header.alg:
                continue
            if verify_signature(k.key, header.alg, message, signature):
                return True
        return False
    return verify_signature(c.secret.encode("utf-8", "surrogatepass"), header.alg, message, signature)


def _valid_audience(aud: Any, want: str) -> bool:
    if type(aud) is str:
        return aud == want
    if type(aud) is list:
        return any(type(e) is str and e == want for e in aud)
    return False


def _cmp_seconds(t_ns: float, claim: int | float) -> int:
    """Compare the constraint time (ns, as float64) in seconds with a claim, exactly."""
    seconds = Decimal(repr(t_ns / 1e9))
    other = to_decimal(claim)
    return -1 if seconds < other else (1 if seconds > other else 0)


@builtin("io.jwt.decode_verify", 2, needs_context=True)
def jwt_decode_verify(ctx: Any, jwt: Any, constraints: Any) -> list[Any]:
    if type(constraints) is not dict:
        raise operand_error(2, constraints, "object")
    unverified: list[Any] = [False, {}, {}]
    c = parse_constraints(constraints, ctx.now_ns)
    current: Any = jwt
    while True:
        token = _split(current)
        decoded = _decode_header(token)
        header = parse_header(decoded)
        if not header.valid():
            return unverified
        if c.alg and c.alg != header.alg:
            return unverified
        signature = _decode_signature(token)
        if not _constraint_verify(c, header, token, signature):
            return unverified
        payload_text = _decode_payload(token)
        if header.cty.lower() == "jwt":
            current = payload_text
            continue
        break
    payload = _json_object(payload_text)
    if c.iss:
        iss = payload.get("iss")
        if type(iss) is not str or iss != c.iss:
            return unverified
    if "aud" in payload:
        if not _valid_audience(payload["aud"], c.aud):
            return unverified
    elif c.aud:
        return unverified
    if "exp" in payload:
        exp = payload["exp"]
        if type(exp) is bool or type(exp) not in (int, float):
            raise BuiltinError("exp value must be a number")
        if _cmp_seconds(c.time, exp) != -1:
            return unverified
    if "nbf" in payload:
        nbf = payload["nbf"]
        if type(nbf) is bool or type(nbf) not in (int, float):
            raise BuiltinError("nbf value must be a number")
        if _cmp_seconds(c.time, nbf) == -1:
            return unverified
    return [True, decoded, payload]


# ---------------------------------------------------------------- signing


def sign(key: Any, alg: str, message: bytes) -> bytes:
    """Sign ``message`` as JWS ``alg`` with ``key`` (private key or HMAC secret)."""
    try:
        if alg.startswith("HS"):
            if not isinstance(key, bytes):
                raise BuiltinError(f"invalid key type for algorithm {alg}: expected []byte")
            return hmac.new(key, message, _HASHLIB[alg[2:]]).digest()
        h = _HASHES.get(alg[2:])
        if alg.startswith("RS") or alg.startswith("PS"):
            if not isinstance(key, rsa.RSAPrivateKey) or h is None:
                raise BuiltinError(f"invalid key type for algorithm {alg}: expected *rsa.PrivateKey")
            hash_alg = h()
            if alg.startswith("RS"):
                return key.sign(message, padding.PKCS1v15(), hash_alg)
            pss = padding.PSS(mgf=padding.MGF1(hash_alg), salt_length=padding.PSS.DIGEST_LENGTH)
            return key.sign(message, pss, hash_alg)
        if alg.startswith("ES"):
            if not isinstance(key, ec.EllipticCurvePrivateKey) or h is None:
                raise BuiltinError(f"invalid key type for algorithm {alg}: expected *ecdsa.PrivateKey")
            der = key.sign(message, ec.ECDSA(h()))
            r, s = decode_dss_signature(der)
            size = (key.curve.key_size + 7) // 8
            return r.to_bytes(size, "big") + s.to_bytes(size, "big")
        if alg == "EdDSA":
            if not isinstance(key, ed25519.Ed25519PrivateKey):
                raise BuiltinError(f"invalid key type for algorithm {alg}: expected ed25519.PrivateKey")
            return key.sign(message)
    except (ValueError, TypeError) as exc:
        raise BuiltinError(f"failed to sign payload: {exc}")
    raise BuiltinError("unsupported signature algorithm")


def _header_alg(headers: str) -> tuple[str, dict[str, Any]]:
    if headers == "":
        raise BuiltinError("missing or invalid 'alg' header: cannot parse JSON: cannot parse empty string")
    try:
        parsed = json.loads(headers, parse_float=parse_number, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        if headers.lstrip(" \t\r\n").startswith("{"):
            raise BuiltinError(f"missing or invalid 'alg' header: cannot parse JSON: {go_json_error(headers)}")
        raise BuiltinError(go_json_error(headers))
    if type(parsed) is not dict:
        raise BuiltinError("unsupported signature algorithm")
    alg = parsed.get("alg")
    if alg is None or alg == "":
        raise BuiltinError("unsupported signature algorithm")
    if type(alg) is not str or alg not in ALGORITHMS:
        raise BuiltinError(f"unknown JWS algorithm: {alg if type(alg) is str else go_json_marshal(alg)}")
    return alg, parsed


def _valid_json(text: str) -> bool:
    try:
        json.loads(text, parse_constant=reject_json_constant)
    except (ValueError, RecursionError):
        return False
    return True


def encode_sign_raw_text(headers: str, payload: str, jwk_text: str) -> str:
    """OPA's commonBuiltinJWTEncodeSign over the raw header, payload and JWK texts."""
    try:
        keys = parse_jwk_set(jwk_text)
    except (ValueError, TypeError) as exc:
        # (OPA parses the text with jwk.Parse itself: its error, not ParseString's)
        raise BuiltinError(str(exc).removeprefix(JWK_STRING_ERROR))
    if not keys:
        raise BuiltinError("no keys found in JWK set")
    alg, parsed = _header_alg(headers)
    typ = parsed.get("typ")
    if (typ is None or typ == "JWT") and not _valid_json(payload):
        raise BuiltinError("type is JWT but payload is not JSON")
    signing_input = (
        b64url_nopad(headers.encode("utf-8", "surrogatepass"))
        + "."
        + b64url_nopad(payload.encode("utf-8", "surrogatepass"))
    )
    signature = sign(keys[0].key, alg, signing_input.encode("ascii"))
    return signing_input + "." + b64url_nopad(signature)


@builtin("io.jwt.encode_sign_raw", 3)
def jwt_encode_sign_raw(headers: Any, payload: Any, key: Any) -> str:
    if type(key) is not str:
        raise operand_error(3, key, "string")
    if type(headers) is not str:
        raise operand_error(1, headers, "string")
    if type(payload) is not str:
        raise operand_error(2, payload, "string")
    return encode_sign_raw_text(headers, payload, key)


@builtin("io.jwt.encode_sign", 3)
def jwt_encode_sign(headers: Any, payload: Any, key: Any) -> str:
    return encode_sign_raw_text(go_json_marshal(headers), go_json_marshal(payload), go_json_marshal(key))


__all__ = ["Base64Error", "keys_from_cert_or_jwk", "sign", "verify_signature"]
