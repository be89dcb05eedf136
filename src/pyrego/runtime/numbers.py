"""Rego numbers: arbitrary-precision integers and decimal arithmetic.

OPA computes with arbitrary-precision decimals, so ``0.1 + 0.2 == 0.3`` holds
in Rego. Numbers are stored as ``int`` (exact, any size) or ``float``; any
arithmetic that involves a float is done in :mod:`decimal` on the float's
shortest repr, and the result is turned back into an ``int`` when integral
or the nearest ``float`` otherwise.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Any

# Enough digits for exact results on any float input and on large ints.
_CONTEXT = decimal.Context(prec=100, Emax=999999, Emin=-999999)


class ArithmeticError_(Exception):
    """Raised for division by zero and similar; builtins turn it into an eval error."""


def to_decimal(x: int | float) -> Decimal:
    if type(x) is int:
        return Decimal(x)
    return Decimal(repr(x))


def from_decimal(d: Decimal) -> int | float:
    """Integral results become ``int``; others the nearest ``float``."""
    if d == d.to_integral_value(context=_CONTEXT):
        return int(d)
    return float(d)


def normalize(x: int | float) -> int | float:
    """An integral float becomes an int (used when a number must print as OPA does)."""
    if type(x) is float and x.is_integer():
        return int(x)
    return x


def add(a: int | float, b: int | float) -> int | float:
    if type(a) is int and type(b) is int:
        return a + b
    return from_decimal(_CONTEXT.add(to_decimal(a), to_decimal(b)))


def sub(a: int | float, b: int | float) -> int | float:
    if type(a) is int and type(b) is int:
        return a - b
    return from_decimal(_CONTEXT.subtract(to_decimal(a), to_decimal(b)))


def mul(a: int | float, b: int | float) -> int | float:
    if type(a) is int and type(b) is int:
        return a * b
    return from_decimal(_CONTEXT.multiply(to_decimal(a), to_decimal(b)))


def div(a: int | float, b: int | float) -> int | float:
    if b == 0:
        raise ArithmeticError_("divide by zero")
    if type(a) is int and type(b) is int and a % b == 0:
        return a // b
    return from_decimal(_CONTEXT.divide(to_decimal(a), to_decimal(b)))


def rem(a: int | float, b: int | float) -> int | float:
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


def format_number(x: int | float) -> str:
    """The JSON text OPA prints for a number."""
    if type(x) is int:
        if -(10**4000) < x < 10**4000:
            return str(x)
        # Past Python's int-to-str digit limit: Decimal formats any size.
        return format(Decimal(x), "f")
    assert isinstance(x, float)
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if "e" in text:
        mant, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mant}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return text


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
    """Pass-through for values that are already Rego numbers (hook for Decimal inputs)."""
    if type(x) is Decimal:
        return from_decimal(x)
    return x
