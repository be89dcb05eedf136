"""Base64 decoding with Go's rules and error texts (``encoding/base64``:
``illegal base64 data at input byte N``), shared by the parser (annotations'
``base64`` values) and the encoding and token builtins."""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["Base64Error", "go_b64decode"]

_STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_STD_SET = frozenset(_STD.encode())
_URL_SET = frozenset(_URL.encode())


_STD_FAST = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_URL_FAST = re.compile(rb"(?:[A-Za-z0-9\-_]{4})*(?:[A-Za-z0-9\-_]{2}==|[A-Za-z0-9\-_]{3}=)?")


class Base64Error(ValueError):
    """Go's ``CorruptInputError``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def go_b64decode(data: str | bytes, *, url: bool = False, padded: bool = True) -> bytes:
    """Decode base64 with Go's rules and error offsets.

    Go skips CR and LF anywhere, requires exact padding (when ``padded``),
    rejects trailing garbage after padding, and does not check the unused
    trailing bits (non-strict mode).
    """
    src = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if padded and (_URL_FAST if url else _STD_FAST).fullmatch(src):
        # Well-formed padded input (the common case): the C decoder gives Go's answer.
        return binascii.a2b_base64(src.replace(b"-", b"+").replace(b"_", b"/") if url else src)
    alphabet = _URL_SET if url else _STD_SET
    n = len(src)
    clean = bytearray()
    si = 0
    while True:
        quantum = bytearray()
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return _finish(clean)
                if j == 1 or padded:
                    raise Base64Error(si - j)
                _flush(clean, quantum)
                return _finish(clean)
            c = src[si]
            si += 1
            if c in alphabet:
                quantum.append(c)
                j += 1
                continue
            if c in (0x0A, 0x0D):
                continue
            if not padded or c != 0x3D:  # '='
                raise Base64Error(si - 1)
            # padding: only after 2 or 3 data characters
            if j in (0, 1):
                raise Base64Error(si - 1)
            if j == 2:
                while si < n and src[si] in (0x0A, 0x0D):
                    si += 1
                if si == n:
                    raise Base64Error(n)
                if src[si] != 0x3D:
                    raise Base64Error(si - 1)
                si += 1
            while si < n and src[si] in (0x0A, 0x0D):
                si += 1
            if si < n:
                raise Base64Error(si)
            _flush(clean, quantum)
            return _finish(clean)
        _flush(clean, quantum)


def _flush(out: bytearray, quantum: bytearray) -> None:
    out.extend(quantum)


def _finish(chars: bytearray) -> bytes:
    # Characters were validated; decode them leniently about trailing bits.
    text = bytes(chars).translate(bytes.maketrans(b"-_", b"+/"))
    rem = len(text) % 4
    if rem:
        text += b"=" * (4 - rem)
    try:
        return base64.b64decode(text, validate=False)
    except binascii.Error as exc:  # pragma: no cover - input already checked
        raise Base64Error(0) from exc
