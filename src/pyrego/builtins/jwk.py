"""Shared helpers of the crypto and token builtins (no builtins registered here).

- OPA's base64url decoding (on Go's decoder, :mod:`pyrego.go_base64`);
- Go-compatible JSON marshalling (sorted keys, HTML-safe escapes), used where
  OPA hashes or signs the bytes of ``json.Marshal``;
- JSON Web Key (set) parsing into ``cryptography`` key objects (``cryptography``
  is imported on first use: the HTTP and cloud-provider builtins use this
  module's JSON and PEM helpers only);
- PEM block splitting as Go's ``encoding/pem`` does it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from pyrego.builtins._goutil import quote_char
from pyrego.builtins.encoding import go_decode_first, go_json_dumps
from pyrego.go_base64 import Base64Error, go_b64decode
from pyrego.go_json import json_kind
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.convert import reject_json_constant

# ---------------------------------------------------------------- base64


def b64url_decode_opa(s: str) -> bytes:
    """OPA's ``base64url.decode``: pads a missing ``=`` suffix, then decodes."""
    if not s.endswith("="):
        rem = len(s) % 4
        if rem == 2:
            s += "=="
        elif rem == 3:
            s += "="
        elif rem == 1:
            raise BuiltinError(f"illegal base64url string: {s}")
    try:
        return go_b64decode(s, url=True)
    except Base64Error as exc:
        raise BuiltinError(str(exc))


def b64url_nopad(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# ---------------------------------------------------------------- JSON


def go_json_marshal(value: Any) -> str:
    """``json.Marshal`` of OPA's ``ast.JSON`` form of a value: sorted keys, compact.

    The one implementation is :func:`pyrego.builtins.encoding.go_json_dumps`."""
    return go_json_dumps(value)


def go_json_error(text: str) -> str:
    """An approximation of Go's ``encoding/json`` syntax error text for ``text``."""
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return "unexpected end of JSON input"
    try:
        json.loads(text, parse_constant=reject_json_constant)
    except json.JSONDecodeError as exc:
        pos = exc.pos
        if pos >= len(text):
            return "unexpected end of JSON input"
        ch = quote_char(text[pos])  # (Go's quoting: '\\x11', '\\'')
        if exc.msg.startswith("Extra data"):
            return f"invalid character {ch} after top-level value"
        if exc.msg.startswith("Expecting ':'"):
            return f"invalid character {ch} after object key"
        if exc.msg.startswith("Expecting ',' delimiter"):
            return f"invalid character {ch} after object key:value pair"
        if exc.msg.startswith("Expecting property name"):
            return f"invalid character {ch} looking for beginning of object key string"
        return f"invalid character {ch} looking for beginning of value"
    except ValueError as exc:  # NaN, Infinity: Go's words already
        return str(exc)
    return "invalid JSON"


# ---------------------------------------------------------------- PEM


@dataclass(frozen=True, slots=True)
class PemBlock:
    type: str
    headers: dict[str, str]
    data: bytes


_PEM_BEGIN = re.compile(rb"-----BEGIN ([^\r\n-]*)-----[ \t]*\r?\n")


def pem_decode(data: bytes) -> tuple[PemBlock | None, bytes]:
    """Go's ``pem.Decode``: the first PEM block and the rest, or (None, data)."""
    rest = data
    while True:
        m = _PEM_BEGIN.search(rest)
        if m is None:
            return None, data
        if m.start() != 0 and rest[m.start() - 1 : m.start()] not in (b"\n",):
            rest = rest[m.end() :]
            continue
        kind = m.group(1).decode("latin-1")
        body_start = m.end()
        end_marker = b"\n-----END " + kind.encode("latin-1") + b"-----"
        end = rest.find(end_marker, body_start - 1)
        if end < 0:
            rest = rest[m.end() :]
            continue
        body = rest[body_start:end]
        after = end + len(end_marker)
        # the END line must end here (optionally with spaces then newline)
        tail = rest[after:]
        nl = re.match(rb"[ \t]*(\r?\n|$)", tail)
        if nl is None:
            rest = rest[m.end() :]
            continue
        remaining = tail[nl.end() :]
        headers: dict[str, str] = {}
        lines = body.split(b"\n")
        # headers "Key: value" before a blank line
        if lines and b":" in lines[0]:
            i = 0
            while i < len(lines) and b":" in lines[i]:
                k, _, v = lines[i].partition(b":")
                headers[k.strip().decode("latin-1")] = v.strip().decode("latin-1")
                i += 1
            lines = lines[i:]
        b64 = b"".join(line.strip() for line in lines)
        try:
            raw = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            rest = rest[m.end() :]
            continue
        return PemBlock(kind, headers, raw), remaining


def pem_blocks(data: bytes) -> list[PemBlock]:
    blocks = []
    while data:
        block, rest = pem_decode(data)
        if block is None:
            break
        blocks.append(block)
        data = rest
    return blocks


# ---------------------------------------------------------------- JWK

PublicKey = Any
PrivateKey = Any


@dataclass(slots=True)
class Jwk:
    """One key of a JWK set: the key object (or HMAC secret bytes), alg and kid."""

    key: Any
    kty: str
    alg: str = ""
    kid: str = ""


def _b64_field(obj: dict[str, Any], name: str, *, required: bool = True) -> bytes | None:
    v = obj.get(name)
    if v is None:
        if required:
            raise ValueError(f"required field {name} is missing")
        return None
    if type(v) is not str:
        raise ValueError(f"invalid value for field {name}")
    try:
        return go_b64decode(v.rstrip("="), url=True, padded=False)
    except Base64Error:
        try:
            return go_b64decode(v)
        except Base64Error as exc:
            raise ValueError(f"failed to decode field {name}: {exc}")


def _int_field(obj: dict[str, Any], name: str, *, required: bool = True) -> int | None:
    raw = _b64_field(obj, name, required=required)
    return None if raw is None else int.from_bytes(raw, "big")


_CURVES = {"P-256": "SECP256R1", "P-384": "SECP384R1", "P-521": "SECP521R1"}  # (classes of cryptography's ec)


def jwk_to_key(obj: dict[str, Any]) -> Jwk:
    """One JWK object to a key; raises ValueError on bad keys."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    kty = obj.get("kty")
    if type(kty) is not str or not kty:
        raise ValueError(
            "invalid key type from JSON ()" if kty in (None, "") else f"invalid key type from JSON ({kty})"
        )
    alg = obj.get("alg", "")
    kid = obj.get("kid", "")
    alg = alg if type(alg) is str else ""
    kid = kid if type(kid) is str else ""
    key: Any
    if kty == "RSA":
        n = _int_field(obj, "n")
        e = _int_field(obj, "e")
        assert n is not None and e is not None
        pub = rsa.RSAPublicNumbers(e, n)
        d = _int_field(obj, "d", required=False)
        if d is None:
            key = pub.public_key()
        else:
            p = _int_field(obj, "p", required=False)
            q = _int_field(obj, "q", required=False)
            if p is None or q is None:
                p, q = rsa.rsa_recover_prime_factors(n, e, d)
            dp = _int_field(obj, "dp", required=False) or rsa.rsa_crt_dmp1(d, p)
            dq = _int_field(obj, "dq", required=False) or rsa.rsa_crt_dmq1(d, q)
            qi = _int_field(obj, "qi", required=False) or rsa.rsa_crt_iqmp(p, q)
            key = rsa.RSAPrivateNumbers(p, q, d, dp, dq, qi, pub).private_key()
    elif kty == "EC":
        crv = obj.get("crv")
        if crv not in _CURVES:
            raise ValueError(f"unsupported elliptic curve {crv}")
        curve = getattr(ec, _CURVES[str(crv)])()
        x = _int_field(obj, "x")
        y = _int_field(obj, "y")
        assert x is not None and y is not None
        epub = ec.EllipticCurvePublicNumbers(x, y, curve)
        d = _int_field(obj, "d", required=False)
        key = epub.public_key() if d is None else ec.EllipticCurvePrivateNumbers(d, epub).private_key()
    elif kty == "OKP":
        if obj.get("crv") != "Ed25519":
            raise ValueError(f"unsupported curve {obj.get('crv')}")
        d_raw = _b64_field(obj, "d", required=False)
        if d_raw is not None:
            key = ed25519.Ed25519PrivateKey.from_private_bytes(d_raw)
        else:
            x_raw = _b64_field(obj, "x")
            assert x_raw is not None
            key = ed25519.Ed25519PublicKey.from_public_bytes(x_raw)
    elif kty == "oct":
        k = _b64_field(obj, "k")
        key = k
    else:
        raise ValueError(f"invalid key type from JSON ({kty})")
    return Jwk(key, kty, alg, kid)


#: The type jwx probes a key's JSON with (a key that is no object fails to fill it).
_PROBE = 'Go value of type struct { Kty string "json:\\"kty\\""; D json.RawMessage "json:\\"d,omitempty\\"" }'
#: What jwx's jwk.ParseString puts before jwk.Parse's error.
JWK_STRING_ERROR = "jwk.ParseString: failed to parse string: "
_PARSE = JWK_STRING_ERROR + "jwk.Parse: "


def _token_text(v: Any) -> str:
    """A JSON token as Go's ``%v`` prints what ``json.Decoder.Token`` gives."""
    if v is None:
        return "<nil>"
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is str:
        return v
    if type(v) in (dict, list):
        return "{" if type(v) is dict else "["
    f = float(v)
    return str(int(f)) if f.is_integer() and abs(f) < 1e21 else repr(f)


def _parse_key(v: Any) -> Jwk:
    """jwx's ``jwk.ParseKey`` of one decoded JSON value (null: a key of no type)."""
    if v is not None and type(v) is not dict:
        raise ValueError(f"jwk.ParseKey: jwk.Parse: failed to probe data: probe: failed to unmarshal data: json: cannot unmarshal {json_kind(v)} into {_PROBE}")
    try:
        return jwk_to_key(v or {})
    except ValueError as exc:
        raise ValueError(f"jwk.ParseKey: {exc}") from None


def parse_jwk_set(text: str | bytes) -> list[Jwk]:
    """A JWK or a JWK set (``{"keys": [...]}``) as a list of keys, as jwx's
    ``jwk.ParseString`` reads it (the first JSON value, every key of a set);
    ValueError with its error text if bad."""
    try:
        obj = go_decode_first(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    except ValueError as exc:
        raise ValueError(f"{_PARSE}failed to parse sole key: jwk.ParseKey: jwk.Parse: failed to probe data: probe: failed to unmarshal data: {exc}") from None
    if type(obj) is dict and "keys" in obj:
        keys = obj["keys"]
        if type(keys) is not list:
            raise ValueError(f"{_PARSE}failed to unmarshal JWK set: failed to decode \"keys\": expected '[' but got {_token_text(keys)}")
        out = []
        for i, k in enumerate(keys):
            try:
                out.append(_parse_key(k))
            except ValueError as exc:
                raise ValueError(f"{_PARSE}failed to unmarshal JWK set: failed to decode key #{i} in \"keys\": {exc}") from None
        return out
    try:
        return [_parse_key(obj)]
    except ValueError as exc:
        raise ValueError(f"{_PARSE}failed to parse sole key: {exc}") from None


def public_of(key: Any) -> Any:
    """The public half of a private key (others unchanged)."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey):
        return key.public_key()
    return key
