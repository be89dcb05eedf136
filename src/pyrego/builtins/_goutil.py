"""Helpers that reproduce Go's standard library behaviour OPA builtins rely on.

Rego strings are Go strings: byte sequences that are usually, but not always,
UTF-8 (``base64.decode`` can return any bytes). pyrego keeps such bytes in a
``str`` with Python's ``surrogateescape`` convention: each byte that is not
part of valid UTF-8 becomes one code point U+DC80..U+DCFF. That keeps a
byte-for-byte round trip (``hex.encode(base64.decode(x))``) and counts each
invalid byte as one character, as Go's ``utf8.RuneCountInString`` does.
JSON output turns such code points into U+FFFD, as Go's encoder does.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pyrego.runtime.bigint import int_text
from pyrego.runtime.builtin_errors import BuiltinError

_SURROGATES = re.compile("[\ud800-\udfff]")


def to_bytes(s: str) -> bytes:
    """The Go bytes of a Rego string."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        pass
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A surrogate that is not an escaped byte (e.g. a lone "\ud800" from
        # JSON input): Go would have replaced it with U+FFFD on input.
        return _SURROGATES.sub(_escaped_or_replacement, s).encode("utf-8", "surrogateescape")


def _escaped_or_replacement(m: re.Match[str]) -> str:
    c = m.group(0)
    return c if 0xDC80 <= ord(c) <= 0xDCFF else "\ufffd"


def from_bytes(b: bytes) -> str:
    """A Rego string holding the bytes ``b`` (invalid UTF-8 kept as escaped bytes)."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("utf-8", "surrogateescape")


def valid_utf8(s: str) -> str:
    """``s`` with every non-UTF-8 byte (and lone surrogate) replaced by U+FFFD."""
    if s.isascii():
        return s
    return _SURROGATES.sub("\ufffd", s)


def _is_print(c: str) -> bool:
    # Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space.
    return c == " " or (
        c.isprintable()
        and c not in "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\u1680"
    )


_SHORT_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
}


def go_quote(s: str, quote: str = '"') -> str:
    """Go's ``strconv.Quote`` (or ``QuoteRune``-style with ``quote="'"``)."""
    out = [quote]
    for c in s:
        o = ord(c)
        if c == quote:
            out.append("\\" + c)
        elif c in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[c])
        elif 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")
        elif o < 0x80:
            out.append(c if 0x20 <= o < 0x7F else f"\\x{o:02x}")
        elif _is_print(c):
            out.append(c)
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append(quote)
    return "".join(out)


def quote_char(c: str) -> str:
    """How Go's JSON scanner names a byte in an error (``'x'``)."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    return "'" + go_quote(c)[1:-1] + "'"


def format_float_g(x: float, bits: int = 64) -> str:
    """Go's ``strconv.FormatFloat(x, 'g', -1, bits)``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if bits == 32:
        import struct

        text = _shortest32(struct.unpack("f", struct.pack("f", x))[0])
    else:
        text = repr(x)
    d = Decimal(text)
    if d == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = len(digits) + exp - 1  # decimal exponent of the first digit
    neg = "-" if sign else ""
    # Shortest 'g' uses %e when the exponent is < -4 or >= 6 (Go's eprec for shortest).
    if e < -4 or e >= 6:
        return neg + _exp_form(ds, e)
    if e < 0:
        return neg + "0." + "0" * (-e - 1) + ds
    if len(ds) <= e + 1:
        return neg + ds + "0" * (e + 1 - len(ds))
    return neg + ds[: e + 1] + "." + ds[e + 1 :]


def _exp_form(ds: str, e: int) -> str:
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    sign = "-" if e < 0 else "+"
    return f"{mant}e{sign}{abs(e):02d}"


def _shortest32(x: float) -> str:
    """The shortest decimal that reads back as the same float32."""
    import struct

    target = struct.pack("f", x)
    for prec in range(1, 18):
        text = f"{x:.{prec}g}"
        if struct.pack("f", float(text)) == target:
            return text
    return repr(x)


# Python refuses to print an int of more than 4,300 decimal digits (its
# conversion is quadratic); Go prints any big.Int (runtime.bigint does it in
# close to linear time), up to MAX_INT_BITS (see limits).
_DIRECT_DIGITS_BITS = 12_000  # about 3,600 digits: str() is allowed and fast


def int_to_decimal(n: int) -> str:
    """``str(n)`` for an int of any size up to :data:`~.limits.MAX_INT_BITS` bits."""
    if n.bit_length() <= _DIRECT_DIGITS_BITS:
        return str(n)
    from pyrego.builtins.limits import check_int_bits

    check_int_bits(n.bit_length(), "the integer to print")
    return int_text(n)


def check_json_number(x: float | Decimal) -> None:
    """Raise Go's ``json: unsupported value: NaN`` (``+Inf``, ``-Inf``) for a
    number JSON cannot hold: a Python caller's NaN or infinity, never a Rego
    value, must not be written as the text ``nan``."""
    if x.is_finite() if type(x) is Decimal else math.isfinite(x):
        return
    text = "NaN" if x != x or (type(x) is Decimal and x.is_nan()) else ("-Inf" if x < 0 else "+Inf")
    raise BuiltinError(f"json: unsupported value: {text}")
