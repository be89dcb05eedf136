"""crypto.md5/sha1/sha256, crypto.hmac.*, crypto.hmac.equal."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup


def call(name: str, *args: object) -> object:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


@pytest.mark.parametrize(
    "name,algo",
    [("crypto.md5", hashlib.md5), ("crypto.sha1", hashlib.sha1), ("crypto.sha256", hashlib.sha256)],
)
@pytest.mark.parametrize("text", ["", "abc", "héllo wörld ✓", "x" * 10000])
def test_digests(name: str, algo: object, text: str) -> None:
    assert call(name, text) == algo(text.encode()).hexdigest()  # type: ignore[operator]


def test_known_vectors() -> None:
    assert call("crypto.md5", "abc") == "900150983cd24fb0d6963f7d28e17f72"
    assert call("crypto.sha1", "abc") == "a9993e364706816aba3e25717850c26c9cd0d89d"
    assert call("crypto.sha256", "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.parametrize(
    "name,algo",
    [
        ("crypto.hmac.md5", hashlib.md5),
        ("crypto.hmac.sha1", hashlib.sha1),
        ("crypto.hmac.sha256", hashlib.sha256),
        ("crypto.hmac.sha512", hashlib.sha512),
    ],
)
def test_hmacs(name: str, algo: object) -> None:
    assert call(name, "message", "key") == hmac.new(b"key", b"message", algo).hexdigest()  # type: ignore[arg-type]
    assert call(name, "", "") == hmac.new(b"", b"", algo).hexdigest()  # type: ignore[arg-type]
    assert call(name, "ünï", "ключ") == hmac.new("ключ".encode(), "ünï".encode(), algo).hexdigest()  # type: ignore[arg-type]


def test_hmac_sha256_known_vector() -> None:
    # RFC 4231 test case 2
    assert (
        call("crypto.hmac.sha256", "what do ya want for nothing?", "Jefe")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )


def test_hmac_equal() -> None:
    assert call("crypto.hmac.equal", "abc", "abc") is True
    assert call("crypto.hmac.equal", "abc", "abd") is False
    assert call("crypto.hmac.equal", "31b6db9e5eb4addb42f1a6ca07367adc", "31b6db9e5eb4addb") is False
    assert call("crypto.hmac.equal", "", "") is True
    assert call("crypto.hmac.equal", "é", "é") is True


@pytest.mark.parametrize("name", ["crypto.md5", "crypto.sha1", "crypto.sha256"])
@pytest.mark.parametrize("bad", [1, None, True, [], {}, frozenset()])
def test_digest_type_errors(name: str, bad: object) -> None:
    with pytest.raises(OperandTypeError, match="operand 1 must be string"):
        call(name, bad)


def test_hmac_type_errors() -> None:
    with pytest.raises(OperandTypeError, match="operand 1 must be string but got number"):
        call("crypto.hmac.sha256", 1, "k")
    with pytest.raises(OperandTypeError, match="operand 2 must be string but got boolean"):
        call("crypto.hmac.sha256", "m", True)
    with pytest.raises(OperandTypeError, match="operand 2 must be string but got null"):
        call("crypto.hmac.equal", "m", None)
    assert issubclass(OperandTypeError, BuiltinError)
