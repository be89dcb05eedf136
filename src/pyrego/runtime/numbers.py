"""Rego numbers: arbitrary-precision integers and decimal arithmetic.

OPA computes with arbitrary-precision decimals, so ``0.1 + 0.2 == 0.3`` holds
in Rego. Numbers are stored as ``int`` (exact, any size) or ``float``; any
arithmetic that involves a float is done in :mod:`decimal` on the float's
shortest repr, and the result is turned back into an ``int`` when integral
or the nearest ``float`` otherwise.

A number literal that no float holds exactly (``0.1234567890123456789``,
``1e-400``) is a ``Decimal``. Arithmetic with a ``Decimal`` operand gives an
``int`` when integral, a ``float`` when a float holds the result exactly, and
otherwise keeps the ``Decimal`` (an inexact quotient becomes a ``float``).
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

# Enough digits for exact results on any float input and on large ints.
_CONTEXT = decimal.Context(prec=100, Emax=999999, Emin=-999999)


class ArithmeticError_(Exception):
    """Raised for division by zero and similar; builtins turn it into an eval error."""


Number = int | float | Decimal


def to_decimal(x: int | float | Decimal) -> Decimal:
    if type(x) is int:
        return Decimal(x)
    if type(x) is Decimal:
        return x
    return Decimal(repr(x))


def from_decimal(d: Decimal) -> int | float:
    """Integral results become ``int``; others the nearest ``float``."""
    if d == d.to_integral_value(context=_CONTEXT):
        return int(d)
    return float(d)


def exact_number(d: Decimal) -> int | float | Decimal:
    """``d`` as an ``int`` when integral, a ``float`` when one holds it exactly,
    else ``d`` itself (normalized)."""
    if not d.is_finite():
        raise ArithmeticError_("number is not finite")
    if d == d.to_integral_value(context=_CONTEXT):
        return int(d)
    f = float(d)
    if f and f - f == 0 and Decimal(repr(f)) == d:
        return f
    return d.normalize(_CONTEXT)


def literal_number(d: Decimal) -> int | float | Decimal:
    """The value of a finite, non-integral decimal literal: its float when that
    float denotes the same number, else the exact ``Decimal``."""
    f = float(d)
    if f and f - f == 0 and Decimal(repr(f)) == d:
        return f
    if not f and not d:
        return 0.0
    return d.normalize(_CONTEXT)


def normalize(x: int | float | Decimal) -> int | float | Decimal:
    """An integral float becomes an int (used when a number must print as OPA does)."""
    if type(x) is float and x.is_integer():
        return int(x)
    if type(x) is Decimal:
        return exact_number(x)
    return x


def add(a: Number, b: Number) -> Number:
    if type(a) is int and type(b) is int:
        return a + b
    if type(a) is Decimal or type(b) is Decimal:
        return exact_number(_CONTEXT.add(to_decimal(a), to_decimal(b)))
    return from_decimal(_CONTEXT.add(to_decimal(a), to_decimal(b)))


def sub(a: Number, b: Number) -> Number:
    if type(a) is int and type(b) is int:
        return a - b
    if type(a) is Decimal or type(b) is Decimal:
        return exact_number(_CONTEXT.subtract(to_decimal(a), to_decimal(b)))
    return from_decimal(_CONTEXT.subtract(to_decimal(a), to_decimal(b)))


def mul(a: Number, b: Number) -> Number:
    if type(a) is int and type(b) is int:
        return a * b
    if type(a) is Decimal or type(b) is Decimal:
        return exact_number(_CONTEXT.multiply(to_decimal(a), to_decimal(b)))
    return from_decimal(_CONTEXT.multiply(to_decimal(a), to_decimal(b)))


def div(a: Number, b: Number) -> Number:
    if b == 0:
        raise ArithmeticError_("divide by zero")
    if type(a) is int and type(b) is int and a % b == 0:
        return a // b
    if type(a) is Decimal or type(b) is Decimal:
        return _div_decimal(to_decimal(a), to_decimal(b))
    return from_decimal(_CONTEXT.divide(to_decimal(a), to_decimal(b)))


def _div_decimal(a: Decimal, b: Decimal) -> Number:
    ctx = _CONTEXT.copy()
    ctx.clear_flags()
    q = ctx.divide(a, b)
    if not ctx.flags[decimal.Inexact]:
        return exact_number(q)
    # An inexact quotient is a float, as for float operands; one beyond the
    # float range keeps 17 significant digits.
    f = float(q)
    if f and f - f == 0:
        return f
    return decimal.Context(prec=17, Emax=999999, Emin=-999999).plus(q).normalize(_CONTEXT)


def rem(a: Number, b: Number) -> Number:
    """``%``: OPA requires integers and truncates toward zero, like Go."""
    if type(a) is not int or type(b) is not int:
        a_n, b_n = normalize(a), normalize(b)
        if type(a_n) is not int or type(b_n) is not int:
            raise ArithmeticError_("modulo on floating-point number")
        a, b = a_n, b_n
    if b == 0:
        raise ArithmeticError_("modulo by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def format_number(x: int | float | Decimal) -> str:
    """The JSON text OPA prints for a number."""
    if type(x) is int:
        if -(10**4000) < x < 10**4000:
            return str(x)
        # Past Python's int-to-str digit limit: Decimal formats any size.
        return format(Decimal(x), "f")
    if type(x) is Decimal:
        return _format_decimal(x)
    assert isinstance(x, float)
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mant}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return text


def _format_decimal(d: Decimal) -> str:
    """Exact decimal text: plain digits for moderate exponents, else ``1.5e-400``."""
    n = normalize(d)
    if type(n) is not Decimal:
        return format_number(n)
    n = n.normalize(_CONTEXT)
    adjusted = n.adjusted()
    if -5 <= adjusted < 21:
        return format(n, "f")
    sign, digits, _ = n.as_tuple()
    text = "".join(map(str, digits))
    mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{'-' if sign else ''}{mant}e{'-' if adjusted < 0 else '+'}{abs(adjusted)}"


def parse_number(text: str) -> int | float:
    """A JSON/Rego number literal: ints stay exact, integral exponents become ints."""
    if len(text) < 4000:
        try:
            return int(text)
        except ValueError:
            pass
    d = Decimal(text)
    if d.is_finite() and d == d.to_integral_value(context=_CONTEXT) and d.adjusted() < 100000:
        return int(d)
    return float(text)


def coerce(x: Any) -> Any:
    """Pass-through for values that are already Rego numbers; a Decimal input
    becomes an int/float where that is exact."""
    if type(x) is Decimal:
        return exact_number(x)
    return x
