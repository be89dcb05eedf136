"""io.jwt.*: decoding, verification with every algorithm, encode/sign, decode_verify constraints."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from pyrego.builtins.crypto import private_key_jwk
from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.context import EvalContext


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    if b.needs_context:
        return b.fn(EvalContext(), *args)
    return b.fn(*args)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


RSA_KEY = rsa.generate_private_key(65537, 2048)
EC_KEYS = {
    "ES256": ec.generate_private_key(ec.SECP256R1()),
    "ES384": ec.generate_private_key(ec.SECP384R1()),
    "ES512": ec.generate_private_key(ec.SECP521R1()),
}
ED_KEY = ed25519.Ed25519PrivateKey.generate()


def public_pem(key: Any) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def public_jwk(key: Any, **extra: str) -> dict[str, Any]:
    jwk = private_key_jwk(key)
    jwk.pop("d", None)
    for k in ("p", "q", "dp", "dq", "qi"):
        jwk.pop(k, None)
    jwk.update(extra)
    return jwk


def key_for(alg: str) -> Any:
    if alg[:2] in ("RS", "PS"):
        return RSA_KEY
    if alg.startswith("ES"):
        return EC_KEYS[alg]
    return ED_KEY


ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]


def test_decode_simple() -> None:
    token = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJuZXciOiJJIGFtIGEgdXNlciBjcmVhdGVkIGZpZWxkIiwiaXNzIjoib3BhIn0"
        ".6UmjsclVDGD9jcmX_F8RJzVgHtUZuLu2pxkF_UEQCrE"
    )
    header, payload, sig = call("io.jwt.decode", token)
    assert header == {"alg": "HS256", "typ": "JWT"}
    assert payload == {"iss": "opa", "new": "I am a user created field"}
    assert sig == "e949a3b1c9550c60fd8dc997fc5f112735601ed519b8bbb6a71905fd41100ab1"


@pytest.mark.parametrize(
    "token,message",
    [
        ("abc", "encoded JWT had no period separators"),
        ("a.b", "encoded JWT must have 3 sections, found 2"),
        ("a.b.c.d", "encoded JWT must have 3 sections, found 4"),
        (
            "eyJhbGciOiJIU^%zI1NiI+sInR5cCI6IkpXVCJ9.e30.",
            "JWT header had invalid encoding: illegal base64 data at input byte 13",
        ),
        (b64(b'{"alg":"HS256","enc":"x"}') + ".e30.", "JWT is a JWE object, which is not supported"),
        (b64(b"[1]") + ".e30.", "bad JWT header: decoded JSON type was not an Object"),
        (b64(b"{") + ".e30.", "bad JWT header: invalid JSON"),
        (b64(b'{"alg":"HS256"}') + "." + b64(b"[]") + ".", "decoded JSON type was not an Object"),
        (b64(b'{"alg":"HS256"}') + ".e30.a", "illegal base64url string: a"),
    ],
)
def test_decode_errors(token: str, message: str) -> None:
    with pytest.raises(BuiltinError, match=message.replace("^", r"\^").replace("+", r"\+")):
        call("io.jwt.decode", token)


def test_decode_type_error() -> None:
    with pytest.raises(OperandTypeError, match="operand 1 must be string but got number"):
        call("io.jwt.decode", 1)


def test_decode_unicode_and_big_numbers() -> None:
    payload = '{"name":"Zoë ✓","big":123456789012345678901234567890,"f":1.5}'
    token = b64(b'{"alg":"none"}') + "." + b64(payload.encode()) + "."
    _, decoded, sig = call("io.jwt.decode", token)
    assert decoded == {"name": "Zoë ✓", "big": 123456789012345678901234567890, "f": 1.5}
    assert sig == ""


@pytest.mark.parametrize("bits", ["256", "384", "512"])
def test_hs_roundtrip(bits: str) -> None:
    key = {"kty": "oct", "k": b64(b"secret")}
    token = call("io.jwt.encode_sign", {"alg": f"HS{bits}"}, {"sub": "me"}, key)
    assert call(f"io.jwt.verify_hs{bits}", token, "secret") is True
    assert call(f"io.jwt.verify_hs{bits}", token, "wrong") is False


@pytest.mark.parametrize("alg", ASYMMETRIC)
def test_asymmetric_roundtrip(alg: str) -> None:
    key = key_for(alg)
    token = call("io.jwt.encode_sign", {"alg": alg, "typ": "JWT"}, {"iss": "me", "n": [1, 2]}, private_key_jwk(key))
    verify = f"io.jwt.verify_{alg.lower()}"
    assert call(verify, token, public_pem(key)) is True
    assert call(verify, token, json.dumps(public_jwk(key))) is True
    assert call(verify, token, json.dumps({"keys": [public_jwk(key, kid="k1", alg=alg)]})) is True
    # tampered payload
    h, p, s = token.split(".")
    assert call(verify, h + "." + b64(b'{"iss":"you"}') + "." + s, public_pem(key)) is False
    ok, header, payload = call("io.jwt.decode_verify", token, {"cert": public_pem(key)})
    assert ok is True and header == {"alg": alg, "typ": "JWT"} and payload == {"iss": "me", "n": [1, 2]}


def test_wrong_key_type_is_false() -> None:
    token = call("io.jwt.encode_sign", {"alg": "RS256"}, {}, private_key_jwk(RSA_KEY))
    assert call("io.jwt.verify_rs256", token, public_pem(EC_KEYS["ES256"])) is False
    assert call("io.jwt.verify_es256", token, public_pem(RSA_KEY)) is False


def test_jwks_kid_selection() -> None:
    other = rsa.generate_private_key(65537, 2048)
    token = call("io.jwt.encode_sign", {"alg": "RS256", "kid": "good"}, {}, private_key_jwk(RSA_KEY))
    jwks = {"keys": [public_jwk(other, kid="bad"), public_jwk(RSA_KEY, kid="good")]}
    assert call("io.jwt.verify_rs256", token, json.dumps(jwks)) is True
    # a key whose alg does not match the header is skipped
    jwks2 = {"keys": [public_jwk(RSA_KEY, alg="RS512")]}
    assert call("io.jwt.verify_rs256", token, json.dumps(jwks2)) is False


def test_verify_key_errors() -> None:
    token = call("io.jwt.encode_sign", {"alg": "RS256"}, {}, private_key_jwk(RSA_KEY))
    with pytest.raises(BuiltinError, match="failed to parse a PEM certificate"):
        call("io.jwt.verify_rs256", token, "-----BEGIN CERTIFICATE-----\nZGVhZGJlZWY=\n-----END CERTIFICATE-----")
    with pytest.raises(BuiltinError, match="failed to parse a JWK key"):
        call("io.jwt.verify_rs256", token, "not a key")
    with pytest.raises(BuiltinError, match="extra data after a PEM certificate block"):
        call("io.jwt.verify_rs256", token, public_pem(RSA_KEY) + "junk")
    with pytest.raises(OperandTypeError, match="operand 2 must be string"):
        call("io.jwt.verify_rs256", token, 7)


def test_encode_sign_rfc7515_a1() -> None:
    key = {"kty": "oct", "k": "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"}
    raw = call(
        "io.jwt.encode_sign_raw",
        '{"typ":"JWT",\r\n "alg":"HS256"}',
        '{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}',
        json.dumps(key),
    )
    assert raw.endswith(".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")


@pytest.mark.parametrize(
    "header,payload,message",
    [
        ("", "{}", "missing or invalid 'alg' header: cannot parse JSON: cannot parse empty string"),
        ('{"typ:"JWT"}', "{}", "missing or invalid 'alg' header: cannot parse JSON"),
        ("e", "{}", "invalid character"),
        ("{}", "{}", "unsupported signature algorithm"),
        ('{"alg":"dummy"}', "{}", "unknown JWS algorithm: dummy"),
        ('{"alg":"HS256","typ":"JWT"}', "e", "type is JWT but payload is not JSON"),
        ('{"alg":"HS256"}', "", "type is JWT but payload is not JSON"),
    ],
)
def test_encode_sign_raw_errors(header: str, payload: str, message: str) -> None:
    key = json.dumps({"kty": "oct", "k": b64(b"k")})
    with pytest.raises(BuiltinError, match=message):
        call("io.jwt.encode_sign_raw", header, payload, key)


def test_encode_sign_plain_payload_and_html_escaping() -> None:
    key = json.dumps({"kty": "oct", "k": b64(b"k")})
    token = call("io.jwt.encode_sign_raw", '{"alg":"HS256","typ":"text/plain"}', "", key)
    assert token.split(".")[1] == ""
    token = call(
        "io.jwt.encode_sign", {"alg": "HS256"}, {"a": "<&>", "b": frozenset([2, 1])}, {"kty": "oct", "k": b64(b"k")}
    )
    assert base64.urlsafe_b64decode(token.split(".")[1] + "==") == b'{"a":"\\u003c\\u0026\\u003e","b":[1,2]}'


def hs_token(payload: dict[str, Any], header: dict[str, Any] | None = None) -> str:
    return call("io.jwt.encode_sign", header or {"alg": "HS256"}, payload, {"kty": "oct", "k": b64(b"s")})


def test_decode_verify_constraints() -> None:
    token = hs_token({"iss": "me", "aud": ["a", "b"], "exp": 2000, "nbf": 1000})
    t = 1500 * 10**9
    ok = {"secret": "s", "aud": "a"}
    assert call("io.jwt.decode_verify", token, {**ok, "time": t}) == [
        True,
        {"alg": "HS256"},
        {"iss": "me", "aud": ["a", "b"], "exp": 2000, "nbf": 1000},
    ]
    assert call("io.jwt.decode_verify", token, {"secret": "x", "aud": "a", "time": t}) == [False, {}, {}]
    assert call("io.jwt.decode_verify", token, {**ok, "time": t, "iss": "you"})[0] is False
    assert call("io.jwt.decode_verify", token, {**ok, "time": t, "iss": "me"})[0] is True
    assert call("io.jwt.decode_verify", token, {"secret": "s", "time": t, "aud": "b"})[0] is True
    assert call("io.jwt.decode_verify", token, {"secret": "s", "time": t, "aud": "c"})[0] is False
    assert call("io.jwt.decode_verify", token, {**ok, "time": t, "alg": "HS512"})[0] is False
    assert call("io.jwt.decode_verify", token, {**ok, "time": 2000 * 10**9})[0] is False  # exp is exclusive
    assert call("io.jwt.decode_verify", token, {**ok, "time": 1000 * 10**9})[0] is True  # nbf inclusive
    assert call("io.jwt.decode_verify", token, {**ok, "time": 999 * 10**9})[0] is False
    # aud in the token but no aud constraint: unverified
    assert call("io.jwt.decode_verify", hs_token({"aud": "x"}), {"secret": "s"})[0] is False
    # aud constraint but no aud claim: unverified
    assert call("io.jwt.decode_verify", hs_token({}), {"secret": "s", "aud": "x"})[0] is False


def test_decode_verify_float_times() -> None:
    token = hs_token({"exp": 1500.5})
    assert call("io.jwt.decode_verify", token, {"secret": "s", "time": 1500.4 * 10**9})[0] is True
    assert call("io.jwt.decode_verify", token, {"secret": "s", "time": 1500.5 * 10**9})[0] is False


@pytest.mark.parametrize(
    "constraints,message",
    [
        ({}, "no key constraint"),
        ({"secret": "s", "cert": "{}"}, "failed to parse a JWK key"),
        ({"secret": 1}, "secret constraint: must be a string"),
        ({"secret": "s", "bogus": 1}, "unknown token validation constraint: bogus"),
        ({"secret": "s", "time": "x"}, "token time constraint: must be a number"),
        ({"secret": "s", "time": -1}, "token time constraint: must not be negative"),
    ],
)
def test_decode_verify_constraint_errors(constraints: dict[str, Any], message: str) -> None:
    with pytest.raises(BuiltinError, match=message):
        call("io.jwt.decode_verify", hs_token({}), constraints)


def test_decode_verify_bad_claims() -> None:
    with pytest.raises(BuiltinError, match="exp value must be a number"):
        call("io.jwt.decode_verify", hs_token({"exp": None}), {"secret": "s"})
    with pytest.raises(BuiltinError, match="nbf value must be a number"):
        call("io.jwt.decode_verify", hs_token({"nbf": "x"}), {"secret": "s"})
    with pytest.raises(OperandTypeError, match="operand 2 must be object"):
        call("io.jwt.decode_verify", hs_token({}), "s")


def test_decode_verify_crit_and_missing_alg() -> None:
    token = hs_token({}, {"alg": "HS256", "crit": ["junk"], "junk": 1})
    assert call("io.jwt.decode_verify", token, {"secret": "s"})[0] is False
    token = hs_token({}, {"alg": "HS256", "crit": ["alg"]})
    assert call("io.jwt.decode_verify", token, {"secret": "s"})[0] is True


def test_decode_verify_nested() -> None:
    inner = hs_token({"sub": "inner"})
    outer = call(
        "io.jwt.encode_sign_raw",
        '{"alg":"HS256","cty":"JWT","typ":"text/plain"}',
        inner,
        json.dumps({"kty": "oct", "k": b64(b"s")}),
    )
    ok, header, payload = call("io.jwt.decode_verify", outer, {"secret": "s"})
    assert ok is True and payload == {"sub": "inner"} and header == {"alg": "HS256"}
