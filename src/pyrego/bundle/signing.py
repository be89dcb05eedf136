"""Bundle signatures: OPA's file digests and the JWT that lists them.

A signed bundle carries ``.signatures.json``: ``{"signatures": [JWT]}``. The
JWT's payload lists every file of the bundle as ``{"name", "hash",
"algorithm"}`` (names without a leading ``/``), plus optional claims
(``keyid``, ``scope``, ``iss``, ``iat``). A JSON or YAML document
(``data.json``, ``data.yaml``, ``.manifest``) is hashed in OPA's canonical
form, so that whitespace and key order do not matter: objects as ``{`` key
``:`` value ``,`` ... ``}`` with keys sorted, arrays as ``[...]``, scalars in
Go's JSON text (numbers as written, strings without HTML escapes). Other
files are hashed as bytes. SHA-256 is what OPA writes; MD5, SHA-1, SHA-224,
SHA-384, SHA-512, SHA-512-224 and SHA-512-256 are read.

JWT algorithms: RS256/384/512, PS256/384/512, ES256/384/512 (PEM keys) and
HS256/384/512 (the key text is the secret), through the ``cryptography``
library, imported only when a signature is made or checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from pyrego.bundle.model import BundleError

__all__ = [
    "KeyConfig",
    "VerificationConfig",
    "SigningConfig",
    "ALGORITHMS",
    "hash_file",
    "canonical_bytes",
    "sign_files",
    "verify_token",
    "is_structured",
    "signatures_json",
]

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "HS256", "HS384", "HS512")

_HASHES = {
    "MD5": "md5",
    "SHA-1": "sha1",
    "SHA-224": "sha224",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
    "SHA-512-224": "sha512_224",
    "SHA-512-256": "sha512_256",
}


@dataclass
class KeyConfig:
    """One entry of OPA's ``keys`` configuration: a public key (PEM) or an HMAC secret."""

    key: str
    algorithm: str = "RS256"
    scope: str = ""


@dataclass
class VerificationConfig:
    """How a bundle's signature is checked (OPA's ``VerificationConfig``).

    ``public_keys`` by key id; ``key_id`` picks one (else the JWT's ``kid``
    header, else its ``keyid`` claim); ``scope`` must equal the JWT's
    ``scope`` claim (default: the key's scope); ``exclude_files``: glob
    patterns of files not checked."""

    public_keys: dict[str, KeyConfig] = field(default_factory=dict)
    key_id: str = ""
    scope: str = ""
    exclude_files: list[str] = field(default_factory=list)

    def public_key(self, key_id: str) -> KeyConfig:
        kc = self.public_keys.get(key_id)
        if kc is None:
            raise BundleError(f"verification key corresponding to ID {key_id} not found")
        return kc

    @classmethod
    def from_opa_config(cls, keys: dict[str, Any], signing: dict[str, Any] | None) -> VerificationConfig:
        """From OPA's ``keys`` section and a bundle's ``signing`` section
        (``keyid``, ``scope``, ``exclude_files``)."""
        public = {}
        for kid, raw in (keys or {}).items():
            if not isinstance(raw, dict):
                continue
            public[str(kid)] = KeyConfig(
                key=str(raw.get("key") or raw.get("private_key") or ""),
                algorithm=str(raw.get("algorithm") or "RS256"),
                scope=str(raw.get("scope") or ""),
            )
        signing = signing or {}
        vc = cls(public, str(signing.get("keyid") or ""), str(signing.get("scope") or ""), list(signing.get("exclude_files") or []))
        if vc.key_id and vc.key_id not in public:
            raise BundleError(f"key id {vc.key_id} not found")
        return vc


@dataclass
class SigningConfig:
    """How a bundle is signed: the private key (PEM text, a PEM file, or an HMAC
    secret), the JWT algorithm, optional extra claims."""

    key: str
    algorithm: str = "RS256"
    claims: dict[str, Any] | None = None

    def key_material(self) -> str:
        """OPA's ``GetPrivateKey`` input: PEM text as is, else a file's content if one exists, else the text."""
        if self.key.startswith("-----BEGIN"):
            return self.key
        if os.path.isfile(self.key):
            with open(self.key, encoding="utf-8") as f:
                return f.read()
        return self.key


# ---------------------------------------------------------------- digests


def is_structured(name: str) -> bool:
    """OPA's ``IsStructuredDoc``: files hashed as documents rather than bytes."""
    base = name.rsplit("/", 1)[-1]
    return base in ("data.json", "data.yaml", "signatures.json", ".manifest")


def _go_hash_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch in "\u2028\u2029" or ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class _Number(str):
    """A JSON number kept as its text (Go's ``json.Number``)."""


def _canonical(v: Any, out: list[str]) -> None:
    if isinstance(v, dict):
        out.append("{")
        for i, k in enumerate(sorted(v, key=lambda s: s.encode("utf-8", "surrogatepass"))):
            if i:
                out.append(",")
            out.append(_go_hash_string(k))
            out.append(":")
            _canonical(v[k], out)
        out.append("}")
    elif isinstance(v, list):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _canonical(x, out)
        out.append("]")
    elif isinstance(v, _Number):
        out.append(str.__str__(v))
    elif isinstance(v, str):
        out.append(_go_hash_string(v))
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif v is None:
        out.append("null")
    elif isinstance(v, int):
        out.append(str(v))
    else:
        from pyrego.go_json import marshal

        out.append(marshal(v, indent=None))


def _decode_document(name: str, data: bytes) -> Any:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    try:
        return json.loads(text, parse_float=_Number, parse_int=_Number)
    except ValueError:
        pass
    from pyrego.yaml_safe import load_yaml

    try:
        return load_yaml(text)
    except Exception as exc:  # noqa: BLE001 - yaml raises many kinds
        raise BundleError(f"{name}: cannot decode for its digest: {exc}") from None


def canonical_bytes(value: Any) -> bytes:
    """A decoded document in OPA's hashing form."""
    out: list[str] = []
    _canonical(value, out)
    return "".join(out).encode("utf-8")


def hash_file(name: str, data: bytes | None = None, *, document: Any = None, algorithm: str = "SHA-256") -> str:
    """The hex digest OPA records for a bundle file: ``data`` as bytes, or
    (structured files, or ``document`` given) the canonical form of the document."""
    hname = _HASHES.get(algorithm)
    if hname is None:
        raise BundleError(f"unsupported hashing algorithm: {algorithm}")
    h = hashlib.new(hname)
    if document is not None:
        h.update(canonical_bytes(document))
    elif data is not None and is_structured(name):
        h.update(canonical_bytes(_decode_document(name, data)))
    else:
        h.update(data or b"")
    return h.hexdigest()


# ---------------------------------------------------------------- JWT


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(alg: str) -> Any:
    from cryptography.hazmat.primitives import hashes

    return {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]


def _load_private(pem: str) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    if "-----BEGIN" not in pem:
        raise BundleError("failed to parse PEM block containing the key")
    try:
        return load_pem_private_key(pem.encode("utf-8"), password=None)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"failed to parse the private key: {exc}") from None


def _load_public(pem: str) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

    data = pem.encode("utf-8")
    try:
        if "CERTIFICATE" in pem:
            return x509.load_pem_x509_certificate(data).public_key()
        if "PRIVATE KEY" in pem:
            return load_pem_private_key(data, password=None).public_key()
        return load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"failed to parse the verification key: {exc}") from None


def _sign(alg: str, key_text: str, signing_input: bytes) -> bytes:
    if alg not in ALGORITHMS:
        raise BundleError(f"unknown signature algorithm: {alg}")
    if alg.startswith("HS"):
        import hmac

        return hmac.new(key_text.encode("utf-8"), signing_input, "sha" + alg[2:]).digest()
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    key = _load_private(key_text)
    h = _digest(alg)
    if alg[:2] in ("RS", "PS"):
        if not isinstance(key, rsa.RSAPrivateKey):
            raise BundleError(f"{alg} needs an RSA private key")
        pad = (
            padding.PKCS1v15()
            if alg.startswith("RS")
            else padding.PSS(mgf=padding.MGF1(h), salt_length=padding.PSS.DIGEST_LENGTH)
        )
        return key.sign(signing_input, pad, h)  # type: ignore[no-any-return]
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise BundleError(f"{alg} needs an EC private key")
    r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(h)))
    size = (key.curve.key_size + 7) // 8
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def _verify(alg: str, key_text: str, signing_input: bytes, sig: bytes) -> bool:
    if alg.startswith("HS"):
        import hmac

        return hmac.compare_digest(hmac.new(key_text.encode("utf-8"), signing_input, "sha" + alg[2:]).digest(), sig)
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    key = _load_public(key_text)
    h = _digest(alg)
    try:
        if alg[:2] in ("RS", "PS"):
            if not isinstance(key, rsa.RSAPublicKey):
                return False
            pad = padding.PKCS1v15() if alg.startswith("RS") else padding.PSS(mgf=padding.MGF1(h), salt_length=padding.PSS.AUTO)
            key.verify(sig, signing_input, pad, h)
            return True
        if not isinstance(key, ec.EllipticCurvePublicKey):
            return False
        size = (key.curve.key_size + 7) // 8
        if len(sig) != 2 * size:
            return False
        der = encode_dss_signature(int.from_bytes(sig[:size], "big"), int.from_bytes(sig[size:], "big"))
        key.verify(der, signing_input, ec.ECDSA(h))
        return True
    except InvalidSignature:
        return False


def sign_files(files: list[dict[str, str]], config: SigningConfig, key_id: str = "") -> str:
    """The compact JWT OPA's default signer makes for ``files``
    (``[{"name", "hash", "algorithm"}]``): header ``alg`` (and ``kid``), payload
    ``files`` plus the claims (or the deprecated ``keyid`` claim)."""
    from pyrego.go_json import marshal

    payload: dict[str, Any] = {"files": [{"name": f["name"], "hash": f["hash"], "algorithm": f["algorithm"]} for f in files]}
    if config.claims:
        payload.update(config.claims)
    elif key_id:
        payload["keyid"] = key_id
    header: dict[str, Any] = {"alg": config.algorithm}
    if key_id:
        header["kid"] = key_id
    ordered = {k: payload[k] for k in sorted(payload)}
    signing_input = (_b64(marshal(header, indent=None).encode()) + "." + _b64(marshal(ordered, indent=None).encode())).encode()
    sig = _sign(config.algorithm, config.key_material(), signing_input)
    return signing_input.decode("ascii") + "." + _b64(sig)


def verify_token(token: str, config: VerificationConfig) -> dict[str, dict[str, str]]:
    """Check a bundle JWT against ``config``; return its files by name.

    Raises :class:`BundleError` with OPA's message when the token is
    malformed, names no key, names an unknown key, fails the signature check
    or has another scope."""
    parts = token.split(".")
    if len(parts) != 3:
        raise BundleError("failed to parse jws: invalid compact serialization format: invalid number of segments")
    try:
        header = json.loads(_unb64(parts[0]))
    except (ValueError, TypeError) as exc:
        raise BundleError(f"failed to parse JWT headers: {exc}") from None
    try:
        payload = json.loads(_unb64(parts[1]))
        sig = _unb64(parts[2])
    except (ValueError, TypeError) as exc:
        raise BundleError(f"failed to decode JWT payload: {exc}") from None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise BundleError("failed to parse JWT: header and payload must be objects")
    key_id = config.key_id or (header.get("kid") if isinstance(header.get("kid"), str) else "") or str(payload.get("keyid") or "")
    if not key_id:
        raise BundleError("verification key ID is empty")
    kc = config.public_key(key_id)
    if kc.algorithm not in ALGORITHMS:
        raise BundleError(f"unknown signature algorithm: {kc.algorithm}")
    if header.get("alg") != kc.algorithm:
        raise BundleError(f"failed to verify message: the token's algorithm {header.get('alg')} is not the key's ({kc.algorithm})")
    if not _verify(kc.algorithm, kc.key, (parts[0] + "." + parts[1]).encode("ascii"), sig):
        raise BundleError("failed to verify message: could not verify message using any of the signatures or keys")
    scope = config.scope or kc.scope
    if str(payload.get("scope") or "") != scope:
        raise BundleError("scope mismatch")
    files: dict[str, dict[str, str]] = {}
    for f in payload.get("files") or []:
        if isinstance(f, dict) and isinstance(f.get("name"), str):
            files[f["name"]] = {"name": f["name"], "hash": str(f.get("hash") or ""), "algorithm": str(f.get("algorithm") or "")}
    return files


def signatures_json(token: str) -> bytes:
    """``.signatures.json`` as OPA writes it (``json.MarshalIndent(x, "", " ")``)."""
    from pyrego.go_json import marshal

    return marshal({"signatures": [token]}, indent=" ").encode("utf-8")
