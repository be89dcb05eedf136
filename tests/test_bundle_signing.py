"""Bundle signatures (OPA's ``sign.go``, ``verify.go``, ``hash.go``): every JWT
algorithm signs and verifies, a changed file, a wrong key, another scope, an
unlisted or missing file and an unsigned bundle (keys configured) are refused
with OPA's messages; the digests of JSON documents do not depend on layout."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from pyrego.bundle.model import BundleError
from pyrego.bundle.reader import read_bundle_bytes
from pyrego.bundle.signing import ALGORITHMS, KeyConfig, SigningConfig, VerificationConfig, canonical_bytes, hash_file
from pyrego.bundle.writer import build_bundle, bundle_members, write_bundle


def _pem_private(key: object) -> str:
    return key.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _pem_public(key: object) -> str:
    return key.public_key().public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


_KEYS: dict[str, tuple[str, str]] = {}


def keypair(alg: str) -> tuple[str, str]:
    """(signing key, verification key) for ``alg``: PEM texts, or one HMAC secret."""
    family = alg[:2]
    curve = {"ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}
    cache_key = alg if family == "ES" else family
    if cache_key not in _KEYS:
        if family == "HS":
            _KEYS[cache_key] = ("s3cret-" + alg, "s3cret-" + alg)
        elif family == "ES":
            k = ec.generate_private_key(curve[alg])
            _KEYS[cache_key] = (_pem_private(k), _pem_public(k))
        else:
            k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            _KEYS[cache_key] = (_pem_private(k), _pem_public(k))
    return _KEYS[cache_key]


def other_key(alg: str) -> str:
    if alg.startswith("HS"):
        return "another secret"
    if alg.startswith("ES"):
        curve = {"ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}[alg]
        return _pem_public(ec.generate_private_key(curve))
    return _pem_public(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def make_source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "authz").mkdir(parents=True)
    (src / "authz" / "p.rego").write_text("package authz\n\nallow if input.ok\n")
    (src / "authz" / "data.json").write_text('{"users": ["a", "b"], "n": 1.50}')
    (src / ".manifest").write_text('{"revision": "s1", "roots": ["authz"]}')
    return src


def signed_archive(tmp_path: Path, alg: str, key_id: str = "", claims: dict[str, object] | None = None) -> bytes:
    b = build_bundle([str(make_source(tmp_path))], _bundle_mode())
    buf = io.BytesIO()
    write_bundle(b, buf, SigningConfig(keypair(alg)[0], alg, claims), key_id)
    return buf.getvalue()


def _bundle_mode():  # type: ignore[no-untyped-def]
    from pyrego.bundle.writer import BuildOptions

    return BuildOptions(bundle_mode=True)


def vc(alg: str, key: str | None = None, *, scope: str = "", key_id: str = "k1", exclude: list[str] | None = None) -> VerificationConfig:
    return VerificationConfig({"k1": KeyConfig(key or keypair(alg)[1], alg)}, key_id, scope, exclude or [])


def rewrite(archive: bytes, name: str, content: bytes | None) -> bytes:
    """The archive with member ``name`` replaced (or removed, for None)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as src, gzip.GzipFile(fileobj=out, mode="wb") as gz, tarfile.open(
        fileobj=gz, mode="w"
    ) as dst:
        for m in src:
            fh = src.extractfile(m)
            data = fh.read() if fh is not None else b""
            if m.name == name:
                if content is None:
                    continue
                data = content
            info = tarfile.TarInfo(m.name)
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def jwt_parts(archive: bytes) -> tuple[dict[str, object], dict[str, object]]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        fh = tar.extractfile("/.signatures.json")
        assert fh is not None
        token = json.loads(fh.read())["signatures"][0]
    h, p, _ = token.split(".")
    dec = lambda s: json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))  # noqa: E731
    return dec(h), dec(p)


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_every_algorithm_signs_and_verifies(tmp_path: Path, alg: str) -> None:
    archive = signed_archive(tmp_path, alg, key_id="k1")
    b = read_bundle_bytes(archive, verification=vc(alg))
    assert b.revision == "s1" and b.data == {"authz": {"users": ["a", "b"], "n": 1.5}}
    header, payload = jwt_parts(archive)
    assert header == {"alg": alg, "kid": "k1"}
    names = [f["name"] for f in payload["files"]]  # type: ignore[index, union-attr]
    assert names[-2:] == ["data.json", ".manifest"] and names[0].endswith("authz/p.rego")
    assert all(f["algorithm"] == "SHA-256" for f in payload["files"])  # type: ignore[index, union-attr]
    assert payload["keyid"] == "k1"  # the deprecated claim OPA still writes


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_wrong_key_fails(tmp_path: Path, alg: str) -> None:
    archive = signed_archive(tmp_path, alg, key_id="k1")
    with pytest.raises(BundleError, match="failed to verify message"):
        read_bundle_bytes(archive, verification=vc(alg, other_key(alg)))


@pytest.mark.parametrize("alg", ["RS256", "PS384", "ES512", "HS256"])
def test_tampered_file_fails(tmp_path: Path, alg: str) -> None:
    archive = signed_archive(tmp_path, alg, key_id="k1")
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        module = next(m.name for m in tar if m.name.endswith(".rego"))
    changed = rewrite(archive, module, b"package authz\n\nallow := true\n")
    with pytest.raises(BundleError, match=r"digest mismatch \(want: [0-9a-f]{64}, got: [0-9a-f]{64}\)"):
        read_bundle_bytes(changed, verification=vc(alg))
    data_changed = rewrite(archive, "/data.json", b'{"authz": {"users": ["a", "b", "mallory"], "n": 1.50}}')
    with pytest.raises(BundleError, match="data.json: digest mismatch"):
        read_bundle_bytes(data_changed, verification=vc(alg))


def test_json_digest_ignores_layout_but_not_content(tmp_path: Path) -> None:
    archive = signed_archive(tmp_path, "HS512", key_id="k1")
    relaid = rewrite(archive, "/data.json", b'{\n  "authz": {\n    "n": 1.5,\n    "users": ["a", "b"]\n  }\n}\n')
    read_bundle_bytes(relaid, verification=vc("HS512"))  # whitespace and key order do not count
    renumbered = rewrite(archive, "/data.json", b'{"authz": {"n": 1.50, "users": ["a", "b"]}}')
    with pytest.raises(BundleError, match="digest mismatch"):
        read_bundle_bytes(renumbered, verification=vc("HS512"))  # numbers hash as written (json.Number)
    assert canonical_bytes({"b": [1, {"z": None, "a": True}], "a": "<&>"}) == b'{"a":"<&>","b":[1,{"a":true,"z":null}]}'
    assert hash_file("x.rego", b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_unsigned_missing_and_unlisted(tmp_path: Path) -> None:
    signed = signed_archive(tmp_path, "RS256", key_id="k1")
    unsigned = rewrite(signed, "/.signatures.json", None)
    with pytest.raises(BundleError, match=r"^bundle missing \.signatures\.json file$"):
        read_bundle_bytes(unsigned, verification=vc("RS256"))
    read_bundle_bytes(unsigned)  # no keys configured: an unsigned bundle is fine
    with pytest.raises(BundleError, match=r"^verification key not provided$"):
        read_bundle_bytes(signed)
    read_bundle_bytes(signed, skip_verify=True)
    without_manifest = rewrite(signed, "/.manifest", None)
    with pytest.raises(BundleError, match=r"file\(s\) \[\.manifest\] specified in bundle signatures but not found in the target bundle"):
        read_bundle_bytes(without_manifest, verification=vc("RS256"))
    with tarfile.open(fileobj=io.BytesIO(signed), mode="r:gz") as tar:
        files = [(m.name, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]
    extra = _archive([*files, ("/authz/extra.rego", b"package authz\n\nq := 1\n")])
    with pytest.raises(BundleError, match=r"^file authz/extra\.rego not included in bundle signature$"):
        read_bundle_bytes(extra, verification=vc("RS256"))
    b = read_bundle_bytes(extra, verification=vc("RS256", exclude=["authz/*.rego"]))
    assert "/authz/extra.rego" in b.modules


def _archive(files: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_key_ids_and_scopes(tmp_path: Path) -> None:
    archive = signed_archive(tmp_path, "ES256", key_id="k1", claims={"scope": "write", "iss": "ci"})
    _, payload = jwt_parts(archive)
    assert payload["scope"] == "write" and "keyid" not in payload  # claims replace the keyid claim, as in OPA
    read_bundle_bytes(archive, verification=vc("ES256", scope="write"))
    with pytest.raises(BundleError, match=r"^scope mismatch$"):
        read_bundle_bytes(archive, verification=vc("ES256", scope="read"))
    # The key id comes from the configuration, else the JWT's kid header.
    read_bundle_bytes(archive, verification=vc("ES256", scope="write", key_id=""))
    no_kid = signed_archive(tmp_path / "n", "HS256")
    with pytest.raises(BundleError, match=r"^verification key ID is empty$"):
        read_bundle_bytes(no_kid, verification=vc("HS256", key_id=""))
    with pytest.raises(BundleError, match=r"^verification key corresponding to ID k2 not found$"):
        read_bundle_bytes(no_kid, verification=vc("HS256", key_id="k2"))
    with pytest.raises(BundleError, match=r"^key id nope not found$"):
        VerificationConfig.from_opa_config({"k": {"key": "x"}}, {"keyid": "nope"})


def test_signed_members_and_signatures_json_layout(tmp_path: Path) -> None:
    b = build_bundle([str(make_source(tmp_path))], _bundle_mode())
    mem = bundle_members(b, SigningConfig("secret", "HS256"))
    names = [n for n, _ in mem]
    assert names[0] == "/data.json" and names[-2:] == ["/.signatures.json", "/.manifest"]
    sig = dict(mem)["/.signatures.json"].decode()
    assert sig.startswith('{\n "signatures": [\n  "ey') and sig.endswith('"\n ]\n}')  # MarshalIndent(x, "", " ")


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_opa_accepts_the_signatures(tmp_path: Path, alg: str) -> None:
    """OPA's own JWT check (``io.jwt.verify_<alg>``) accepts the token pyrego
    signed, and refuses it with another key."""
    from opa_oracle import OracleUnavailable, get_oracle

    archive = signed_archive(tmp_path, alg, key_id="k1")
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        fh = tar.extractfile("/.signatures.json")
        assert fh is not None
        token = json.loads(fh.read())["signatures"][0]
    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    query = f"x := io.jwt.verify_{alg.lower()}(input.token, input.key)"
    good = oracle.evaluate({}, query, input={"token": token, "key": keypair(alg)[1]})
    assert not good.is_error, good.error_message
    assert good.bindings == [{"x": True}]
    bad = oracle.evaluate({}, query, input={"token": token, "key": other_key(alg)})
    assert bad.bindings == [{"x": False}]


def test_document_digest_is_the_compact_json_without_html_escapes() -> None:
    """OPA's ``hash_test.go`` property: a document's digest is the digest of its
    compact JSON (keys sorted, numbers as written, no HTML escapes, UTF-8 kept)."""
    text = b'{"key2": {"c": 123.45678911111111111111111111111111111111111111111111111, "b": 1, "a": 0}, "key1": ["element1", "element2"], "k3": ["$", "\xce\xb1", "\xc2\xa9", "<foo></foo>"]}'
    compact = (
        '{"k3":["$","\u03b1","\u00a9","<foo></foo>"],"key1":["element1","element2"],'
        '"key2":{"a":0,"b":1,"c":123.45678911111111111111111111111111111111111111111111111}}'
    ).encode()
    assert hash_file("x/data.json", text) == hashlib.sha256(compact).hexdigest()
    assert hash_file(".manifest", text, algorithm="MD5") == hashlib.md5(compact).hexdigest()
    assert hash_file("other.json", text) == hashlib.sha256(text).hexdigest()  # not a structured name: bytes
