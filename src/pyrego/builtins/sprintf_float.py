"""Go's float formatting (``strconv.FormatFloat`` and fmt's ``#`` flag) for sprintf.

Fixed precisions come from Python's own ``format``, which rounds the exact
binary value like Go; the shortest forms come from ``repr`` digits laid out
as Go lays them out (``%v`` of a float64 switches to an exponent at 1e+06
and below 1e-04, unlike JSON).
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal


def sharp_float(num: str, verb: str, prec: int) -> str:
    """Go's ``#`` flag on floats: keep a decimal point and the trailing zeros."""
    digits = 0
    if verb in ("v", "g", "G", "x"):
        digits = 6 if prec == -1 else prec
    tail = ""
    body = num
    has_point = False
    saw_nonzero = False
    i = 1
    while i < len(body):
        c = body[i]
        if c == ".":
            has_point = True
        elif c in "pP":
            tail = body[i:]
            body = body[:i]
            break
        elif c in "eE" and verb not in ("x", "X"):
            tail = body[i:]
            body = body[:i]
            break
        else:
            if c != "0":
                saw_nonzero = True
            if saw_nonzero:
                digits -= 1
        i += 1
    if not has_point:
        if len(body) == 2 and body[1] == "0":
            digits -= 1
        body += "."
    if digits > 0:
        body += "0" * digits
    return body + tail


def _shortest(v: float) -> tuple[str, int]:
    """Shortest round-trip digits of |v| > 0 (no trailing zeros) and the decimal point position."""
    _, digit_tuple, exp = Decimal(repr(abs(v))).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    return stripped, len(stripped) + exp


def _fmt_e(neg: bool, digits: str, dp: int, prec: int, e: str) -> str:
    out = "-" if neg else ""
    out += digits[0] if digits else "0"
    if prec > 0:
        frac = digits[1 : prec + 1]
        out += "." + frac + "0" * (prec - len(frac))
    exp = dp - 1 if digits else 0
    sign = "-" if exp < 0 else "+"
    return out + e + sign + f"{abs(exp):02d}"


def _fmt_f(neg: bool, digits: str, dp: int, prec: int) -> str:
    out = "-" if neg else ""
    if dp > 0:
        out += digits[:dp] + "0" * max(dp - len(digits), 0)
    else:
        out += "0"
    if prec > 0:
        frac = "".join(digits[dp + i] if 0 <= dp + i < len(digits) else "0" for i in range(prec))
        out += "." + frac
    return out


def format_float(v: float, verb: str, prec: int) -> str:
    """Go's ``strconv.FormatFloat(v, verb, prec, 64)``."""
    neg = math.copysign(1.0, v) < 0
    if verb == "b":
        return _format_b(v)
    if verb in ("x", "X"):
        return _format_x(v, verb, prec)
    if prec >= 0:
        if verb in ("g", "G") and prec == 0:
            prec = 1
        spec = {"f": "f", "e": "e", "E": "E", "g": "g", "G": "G"}[verb]
        text = format(v, f".{prec}{spec}")
        return text
    # Shortest representation.
    if v == 0:
        digits, dp = "", 0
    else:
        digits, dp = _shortest(v)
    if verb in ("e", "E"):
        return _fmt_e(neg, digits, dp, len(digits) - 1, verb)
    if verb == "f":
        return _fmt_f(neg, digits, dp, max(len(digits) - dp, 0))
    exp = dp - 1
    if exp < -4 or exp >= 6:
        return _fmt_e(neg, digits, dp, len(digits) - 1, "e" if verb == "g" else "E")
    return _fmt_f(neg, digits, dp, max(len(digits) - dp, 0))


def _format_b(v: float) -> str:
    bits = struct.unpack(">Q", struct.pack(">d", v))[0]
    neg = bits >> 63
    exp = (bits >> 52) & 0x7FF
    mant = bits & ((1 << 52) - 1)
    if exp == 0:
        exp = 1
    else:
        mant |= 1 << 52
    exp = exp - 1023 - 52
    return ("-" if neg else "") + f"{mant}p" + ("+" if exp >= 0 else "-") + str(abs(exp))


def _format_x(v: float, verb: str, prec: int) -> str:
    neg = math.copysign(1.0, v) < 0
    if v == 0:
        mant, exp = 0, 0
    else:
        m, e = math.frexp(abs(v))
        mant = int(math.ldexp(m, 61))  # leading 1 at bit 60
        exp = e - 1
    if 0 <= prec < 15:
        shift = prec * 4
        extra = (mant << shift) & ((1 << 60) - 1)
        mant >>= 60 - shift
        if extra | (mant & 1) > 1 << 59:
            mant += 1
        mant <<= 60 - shift
        if mant & (1 << 61):
            mant >>= 1
            exp += 1
    hexdigits = "0123456789ABCDEF" if verb == "X" else "0123456789abcdef"
    out = ("-" if neg else "") + "0" + verb + str((mant >> 60) & 1)
    mant = (mant << 4) & ((1 << 64) - 1)
    if prec < 0 and mant:
        out += "."
        while mant:
            out += hexdigits[(mant >> 60) & 15]
            mant = (mant << 4) & ((1 << 64) - 1)
    elif prec > 0:
        out += "."
        for _ in range(prec):
            out += hexdigits[(mant >> 60) & 15]
            mant = (mant << 4) & ((1 << 64) - 1)
    out += "P" if verb == "X" else "p"
    out += "-" if exp < 0 else "+"
    return out + f"{abs(exp):02d}"
