"""units.parse and units.parse_bytes (OPA's ``parse_units.go`` / ``parse_bytes.go``).

Arithmetic is exact where OPA's is (``units.parse`` uses rationals, printed
with 10 decimals when not whole) and rounded where OPA's is
(``units.parse_bytes`` uses 64-bit-mantissa big floats, then truncates).
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime import bigfloat
from pyrego.runtime.bigint import MAX_INT_BITS, too_big
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.numbers import parse_number

_MAX_EXPONENT_DIGITS = 6

_BINARY = {"ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40, "pi": 1 << 50, "ei": 1 << 60}
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15, "e": 10**18}

# units.parse: "m" is milli (OPA multiplies by the float64 0.001), "M" mega.
_UNITS: dict[str, Fraction] = {"": Fraction(1), "m": Fraction(0.001)}
for _k, _v in _DECIMAL.items():
    if _k != "m":
        _UNITS[_k] = _UNITS[_k.upper()] = Fraction(_v)
_UNITS["M"] = Fraction(10**6)
for _k, _v in _BINARY.items():
    _UNITS[_k] = _UNITS[_k[0].upper() + _k[1]] = Fraction(_v)

_BYTE_UNITS: dict[str, int] = {"": 1}
for _k, _v in _DECIMAL.items():
    _BYTE_UNITS[_k] = _BYTE_UNITS[_k + "b"] = _v
for _k, _v in _BINARY.items():
    _BYTE_UNITS[_k] = _BYTE_UNITS[_k + "b"] = _v

# Go's big.Rat / big.Float decimal syntax (what can reach them here)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _ExponentTooLarge(Exception):
    pass


def _split(s: str) -> tuple[str, str]:
    """OPA's ``extractNumAndUnit``: the numeric prefix and the unit after it."""
    first = -1
    b = s.encode("utf-8", "surrogateescape")
    n = len(b)
    idx = 0
    while idx < n:
        c = chr(b[idx])
        if not (c.isdigit() and c.isascii()) and c not in ".eE+-":
            first = idx
            break
        if c in "eE":
            nxt = chr(b[idx + 1]) if idx + 1 < n else ""
            if idx == n - 1 or not ((nxt.isdigit() and nxt.isascii()) or nxt in "+-"):
                first = idx
                break
            if nxt in "+-":
                idx += 1
            start = end = idx + 1
            while end < n and chr(b[end]).isdigit() and b[end] < 0x80:
                end += 1
            if end - start > _MAX_EXPONENT_DIGITS:
                raise _ExponentTooLarge
        idx += 1
    if first == -1:
        return s, ""
    num = b[:first].decode("utf-8", "surrogateescape")
    unit = b[first:].decode("utf-8", "surrogateescape")
    return num, unit


def _string(x: Any) -> str:
    if type(x) is not str:
        raise operand_error(1, x, "string")
    return x


@builtin("units.parse", 1)
def units_parse(x: Any) -> int | float | Decimal:
    s = _string(x).replace('"', "")
    if " " in s:
        raise BuiltinError("units.parse: spaces not allowed in resource strings")
    try:
        num, unit = _split(s)
    except _ExponentTooLarge:
        raise BuiltinError("units.parse: exponent too large") from None
    if num == "":
        raise BuiltinError("units.parse: no amount provided")
    # Only the letters after the first are case-insensitive ("m" vs "M").
    if len(unit) > 1:
        unit = unit[0] + unit[1:].lower()
    factor = _UNITS.get(unit)
    if factor is None:
        raise BuiltinError(f"units.parse: unit {unit} not recognized")
    if not _NUMBER.fullmatch(num):
        raise BuiltinError("units.parse: could not parse amount to a number")
    # Through Decimal: Fraction(str) stops at Python's int-to-str digit limit.
    amount = Decimal(num)
    if amount.adjusted() < -100:
        amount = Decimal(0)  # far below the 10 decimals of the result (1e-999999 would make a 10**999999)
    _, digits, exponent = amount.as_tuple()
    if (len(digits) + max(exponent, 0)) * 3.33 > MAX_INT_BITS:  # type: ignore[operator]
        # An exact fraction of a million-digit amount takes minutes to make.
        raise BuiltinError(f"units.parse: {too_big('the amount')}")
    value = Fraction(amount) * factor
    if value.denominator == 1:
        return value.numerator
    return parse_number(_float_string(value, 10))


def _float_string(q: Fraction, digits: int) -> str:
    """Go's ``Rat.FloatString``: rounded half away from zero to ``digits`` decimals."""
    scaled = abs(q) * 10**digits
    whole, rem = divmod(scaled.numerator, scaled.denominator)
    if 2 * rem >= scaled.denominator:
        whole += 1
    text = format(Decimal(whole), "f").rjust(digits + 1, "0")  # any number of digits
    sign = "-" if q < 0 else ""
    return f"{sign}{text[:-digits]}.{text[-digits:]}"


@builtin("units.parse_bytes", 1)
def units_parse_bytes(x: Any) -> int:
    s = _string(x).lower().replace('"', "")
    if " " in s:
        raise BuiltinError("units.parse_bytes: spaces not allowed in resource strings")
    try:
        num, unit = _split(s)
    except _ExponentTooLarge:
        raise BuiltinError("units.parse_bytes: exponent too large") from None
    if num == "":
        raise BuiltinError("units.parse_bytes: no byte amount provided")
    factor = _BYTE_UNITS.get(unit)
    if factor is None:
        raise BuiltinError(f"units.parse_bytes: byte unit {unit} not recognized")
    if not _NUMBER.fullmatch(num):
        raise BuiltinError("units.parse_bytes: could not parse byte amount to a number")
    # OPA reads the amount into a 64-bit float, multiplies there, and truncates.
    amount = bigfloat.parse_text(num)
    return bigfloat.trunc(bigfloat.mul(amount, bigfloat.BigFloat(False, factor, 0, bigfloat.PREC)))
