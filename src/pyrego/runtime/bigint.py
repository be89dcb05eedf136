"""Big integers to decimal text and back, in time close to linear.

Python 3.11 converts between ``int`` and decimal text (``str``, ``int()``,
``Decimal(int)``, ``int(Decimal)``) in quadratic time: a million digits take
minutes, outside any deadline check. These conversions split the number in
halves and join the halves with multiplications, which Python's ints and the
``decimal`` module do fast for huge operands.
"""

from __future__ import annotations

import decimal
from decimal import Decimal

#: The largest integer arithmetic and builtins make or read, in bits (about
#: 315,000 decimal digits): past it, one multiplication, conversion or print
#: would run for most of a second or more between deadline checks.
MAX_INT_BITS = 1 << 20

#: An integral number with more decimal digits than this (``1e1000000`` in
#: JSON input, the quotient of a huge number) stays a ``Decimal`` in exponent
#: form: it prints and compares as it is, and becomes an ``int`` only for
#: integer arithmetic (refused past :data:`MAX_INT_BITS`).
INT_DIGITS = 100_000

#: Bits and digits below which Python's own conversions are fast (and allowed).
_DIRECT_BITS = 12_000
_DIRECT_DIGITS = 3_000

_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)

_LOG2_10 = 3.321928094887362


class ArithmeticError_(Exception):
    """Raised for division by zero and similar; builtins turn it into an eval error."""


class IntTooBig(ArithmeticError_):
    """An integer past :data:`MAX_INT_BITS` bits was asked for."""


def too_big(what: str = "the integer") -> IntTooBig:
    """The error for an integer past :data:`MAX_INT_BITS`."""
    return IntTooBig(f"{what} would have more than the limit of {MAX_INT_BITS} bits")


def int_text(n: int) -> str:
    """``str(n)`` for an int of any size."""
    if -(1 << _DIRECT_BITS) < n < 1 << _DIRECT_BITS:
        return str(n)
    text = format(int_decimal(abs(n)), "f")
    return "-" + text if n < 0 else text


def int_decimal(n: int) -> Decimal:
    """``Decimal(n)``, exactly, for an int of any size."""
    if -(1 << _DIRECT_BITS) < n < 1 << _DIRECT_BITS:
        return Decimal(n)
    powers: dict[int, Decimal] = {}

    def convert(x: int, bits: int) -> Decimal:
        if bits <= _DIRECT_BITS:
            return Decimal(x)
        half = bits >> 1
        hi = x >> half
        lo = x - (hi << half)
        p = powers.get(half)
        if p is None:
            p = powers[half] = _EXACT.power(Decimal(2), half)
        return _EXACT.add(_EXACT.multiply(convert(hi, bits - half), p), convert(lo, half))

    d = convert(abs(n), abs(n).bit_length())
    return -d if n < 0 else d


def text_int(digits: str) -> int:
    """``int(digits)`` for a string of decimal digits of any length (no sign)."""
    if len(digits) <= _DIRECT_DIGITS:
        return int(digits)
    powers: dict[int, int] = {}

    def convert(lo: int, hi: int) -> int:
        n = hi - lo
        if n <= _DIRECT_DIGITS:
            return int(digits[lo:hi])
        half = n >> 1  # the low half's length
        p = powers.get(half)
        if p is None:
            p = powers[half] = 10**half
        return convert(lo, hi - half) * p + convert(hi - half, hi)

    return convert(0, len(digits))


def decimal_to_int(d: Decimal) -> int:
    """The int an integral, finite ``Decimal`` stands for (``int(d)``, fast).

    Raises :class:`IntTooBig` past :data:`MAX_INT_BITS` bits."""
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    if not any(digits):
        return 0
    if (len(digits) + exponent) * _LOG2_10 > MAX_INT_BITS + 4:
        raise too_big()
    if exponent < 0:
        digits = digits[:exponent]  # integral: the dropped digits are zeros
        exponent = 0
    if len(digits) <= _DIRECT_DIGITS:
        coefficient = int("".join(map(str, digits)))
    else:
        coefficient = text_int("".join(map(str, digits)))
    if exponent:
        coefficient *= 10**exponent
    return -coefficient if sign else coefficient


