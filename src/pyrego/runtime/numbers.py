"""Rego numbers: arbitrary-precision integers and OPA's float arithmetic.

Numbers are stored as ``int`` (exact, any size), ``float``, or ``Decimal``.
A ``float`` stands for the decimal its shortest ``repr`` spells (``0.1`` is
one tenth, as in JSON text); a number that no float spells exactly
(``0.1234567890123456789``, ``1e-400``, ``1/3``) is a ``Decimal``.

Arithmetic gives OPA's exact answers. While both operands are integers,
``+ - * %`` are exact on ints of any size and ``/`` is exact when the
divisor divides a dividend that fits OPA's small-int path. Everything else
goes through OPA's 64-bit-mantissa binary floats and back to the shortest
decimal (:mod:`pyrego.runtime.bigfloat`): ``1/3`` is
``0.33333333333333333334``, ``1/3*3`` is ``1`` and ``0.1 + 0.2`` is ``0.3``.
A zero quotient or product with a negative sign is ``-0.0`` (OPA's ``-0``).
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any

from pyrego.runtime import bigfloat
from pyrego.runtime.bigint import INT_DIGITS, MAX_INT_BITS, decimal_to_int, int_decimal, int_text
from pyrego.runtime.bigint import ArithmeticError_ as ArithmeticError_  # (with the integer size limit)

# Enough digits for exact results on any float input and on large ints.
_CONTEXT = decimal.Context(prec=100, Emax=999999, Emin=-999999)

# Integers below these bounds come out of OPA's 64-bit floats unchanged, so
# the int shortcuts below give the same answers as OPA's float path there.
_DIV_LIMIT = 1 << 64
_ROUND_LIMIT = 1 << 63


def integral(d: Decimal) -> int | Decimal:
    """The value of an integral, finite ``d``: an ``int``, or ``d`` itself
    (normalized) past :data:`INT_DIGITS` digits."""
    if d.adjusted() < INT_DIGITS:
        return decimal_to_int(d)
    return d.normalize(_BIG)


_BIG = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


Number = int | float | Decimal

#: The largest integer product computed (the builtins' integer size limit):
#: one bigger multiplication, or printing the result, would run for most of a
#: second or more between deadline checks.
MAX_PRODUCT_BITS = MAX_INT_BITS


def to_decimal(x: int | float | Decimal) -> Decimal:
    """The decimal a number stands for (a float's is its shortest repr)."""
    if type(x) is int:
        return int_decimal(x)  # type: ignore[arg-type]
    if type(x) is Decimal:
        return x
    return Decimal(repr(x))


def exact_number(d: Decimal) -> int | float | Decimal:
    """``d`` as an ``int`` when integral, a ``float`` when one holds it exactly,
    else ``d`` itself (normalized)."""
    if not d.is_finite():
        raise ArithmeticError_("number is not finite")
    if d == d.to_integral_value(context=_CONTEXT):
        return integral(d)
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


def as_int(x: int | float | Decimal) -> int | None:
    """The integer a number is, or None when it has a fraction (``1e300`` is
    ``10**300``, the decimal its repr spells)."""
    t = type(x)
    if t is int:
        return x  # type: ignore[return-value]
    if t is float:
        if not x.is_integer():  # type: ignore[union-attr]
            return None
        if -9007199254740992.0 < x < 9007199254740992.0:  # type: ignore[operator]
            return int(x)
        return int(Decimal(repr(x)))
    d: Decimal = x  # type: ignore[assignment]
    if not d.is_finite():
        return None  # (a Python caller's Decimal NaN or infinity, as a float's)
    if d.as_tuple().exponent >= 0 or d == d.to_integral_value(context=_CONTEXT):  # type: ignore[operator]
        return decimal_to_int(d)  # (past the size limit: IntTooBig, an ArithmeticError_)
    return None


def _integral(x: Number) -> bool:
    """Whether a number is an integer (without making the int: see :func:`as_int`)."""
    t = type(x)
    if t is int:
        return True
    if t is float:
        return x.is_integer()  # type: ignore[union-attr]
    if not x.is_finite():  # type: ignore[union-attr]
        return False  # (a Python caller's NaN or infinity, as a float's)
    return x.as_tuple().exponent >= 0 or x == x.to_integral_value(context=_CONTEXT)  # type: ignore[union-attr, operator]


def normalize(x: int | float | Decimal) -> int | float | Decimal:
    """An integral number becomes an int (used when a number must print as OPA does)."""
    if type(x) is int:
        return x
    i = as_int(x)
    return x if i is None else i


def compare(a: Number, b: Number) -> int:
    """-1, 0 or 1 as the numbers compare in OPA: by the decimals they spell
    (Python would compare a float's binary value with a ``Decimal``)."""
    x = to_decimal(a)
    y = to_decimal(b)
    return -1 if x < y else (1 if x > y else 0)


# Results of float-path operations on nonzero int/float operands: policies
# repeat the same computations, and each one costs microseconds. (Zeros and
# Decimals are left out: -0.0 == 0.0 and Decimal("0.10") == Decimal("0.1")
# as keys, but OPA can tell them apart.)
_RESULTS: dict[tuple[Any, ...], Number] = {}
_RESULTS_SIZE = 4096


def _float_op(op: Any, a: Number, b: Number) -> Number:
    ta = type(a)
    tb = type(b)
    if ta is Decimal or tb is Decimal or not a or not b:
        return bigfloat.to_number(op(bigfloat.from_number(a), bigfloat.from_number(b)))
    key = (op, ta, a, tb, b)
    r = _RESULTS.get(key)
    if r is None:
        if len(_RESULTS) >= _RESULTS_SIZE:
            _RESULTS.clear()
        r = _RESULTS[key] = bigfloat.to_number(op(bigfloat.from_number(a), bigfloat.from_number(b)))
    return r


def add(a: Number, b: Number) -> Number:
    """``a + b`` as OPA computes it."""
    if type(a) is int and type(b) is int:
        return a + b
    if _integral(a) and _integral(b):
        if _huge(a) or _huge(b):
            return _exact_decimal(_BIG.add, a, b)
        return as_int(a) + as_int(b)  # type: ignore[operator]
    return _float_op(bigfloat.add, a, b)


def sub(a: Number, b: Number) -> Number:
    """``a - b`` as OPA computes it."""
    if type(a) is int and type(b) is int:
        return a - b
    if _integral(a) and _integral(b):
        if _huge(a) or _huge(b):
            return _exact_decimal(_BIG.subtract, a, b)
        return as_int(a) - as_int(b)  # type: ignore[operator]
    return _float_op(bigfloat.sub, a, b)


def _exact_decimal(op: Any, a: Number, b: Number) -> Number:
    """An integer sum or difference with a huge ``Decimal`` operand (``1e1000000 + 1``),
    exact in decimal arithmetic: an int when it has few digits, else a ``Decimal``."""
    for x in (a, b):
        if type(x) is int and x.bit_length() > MAX_INT_BITS:  # type: ignore[union-attr]
            raise ArithmeticError_(f"the integer would have more than the limit of {MAX_INT_BITS} bits")
    x, y = to_decimal(a), to_decimal(b)
    # A zero takes the other operand's exponent: the exact result has the
    # smaller one (1e999999999 - 0 would be written out in a billion digits).
    ex: int = x.as_tuple().exponent  # type: ignore[assignment]  # (finite: an int)
    ey: int = y.as_tuple().exponent  # type: ignore[assignment]
    if not x:
        x, ex = Decimal((0, (0,), ey)), ey
    if not y:
        y, ey = Decimal((0, (0,), ex)), ex
    # The exact result spans the digits from the larger operand's leading
    # one to the smaller exponent: refused before it is written out
    # (``1e999999999 + 1`` would have a billion digits).
    if x and y:
        span = max(x.adjusted(), y.adjusted()) - min(ex, ey)
        if span * 3.33 > MAX_INT_BITS:
            raise ArithmeticError_(f"the integer would have more than the limit of {MAX_INT_BITS} bits")
    d = op(x, y)
    if len(d.as_tuple().digits) * 3.33 > MAX_INT_BITS:
        raise ArithmeticError_(f"the integer would have more than the limit of {MAX_INT_BITS} bits")
    return integral(d) if d else 0


def mul(a: Number, b: Number) -> Number:
    """``a * b`` as OPA computes it."""
    if type(a) is int and type(b) is int:
        return a * b
    ia = as_int(a) if _integral(a) and _integral(b) else None
    ib = as_int(b) if ia is not None else None
    if ia is not None and ib is not None:
        if ia.bit_length() + ib.bit_length() > MAX_PRODUCT_BITS:
            raise ArithmeticError_(f"the product would have more than the limit of {MAX_PRODUCT_BITS} bits")
        return ia * ib
    return _float_op(bigfloat.mul, a, b)


def div(a: Number, b: Number) -> Number:
    """``a / b`` as OPA computes it: an int when the divisor divides a nonzero
    int below 2**64, else a float quotient (so ``0 / -5`` is ``-0.0``)."""
    # (A divisor of such a dividend is below 2**64 too.)
    if type(a) is int and type(b) is int and b and a and not a % b and -_DIV_LIMIT < a < _DIV_LIMIT:
        return a // b
    if not b:
        raise ArithmeticError_("divide by zero")
    return _float_op(bigfloat.quo, a, b)


def rem(a: Number, b: Number) -> Number:
    """``%``: OPA requires integers and truncates toward zero, like Go."""
    if type(a) is not int or type(b) is not int:
        ia = as_int(a)
        ib = as_int(b)
        if ia is None or ib is None:
            raise ArithmeticError_("modulo on floating-point number")
        a, b = ia, ib
    if b == 0:
        raise ArithmeticError_("modulo by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def absolute(x: Number) -> Number:
    """``abs``: beyond 64 bits an integer keeps only its shortest 64-bit digits, as in OPA."""
    i = None if _huge(x) else as_int(x)
    if i is not None and -_DIV_LIMIT < i < _DIV_LIMIT:
        return abs(i)
    if i is None and type(x) is float:
        return abs(x)  # the float's repr digits are already OPA's
    return bigfloat.to_number(bigfloat.absolute(bigfloat.from_number(x)))


def _float_path(x: Number) -> bigfloat.BigFloat | None:
    """None for an int that round/ceil/floor leave alone, else the operand as OPA's float."""
    if _huge(x):
        f = bigfloat.from_number(x)
        if f.exp + f.mant.bit_length() > MAX_INT_BITS:
            # The integer _trunc refuses: refused before round's + 0.5 would
            # write out all its bits (1e999999999 has three billion).
            raise ArithmeticError_(f"the integer would have more than the limit of {MAX_INT_BITS} bits")
        return f
    i = as_int(x)
    if i is not None and -_ROUND_LIMIT < i < _ROUND_LIMIT:
        return None
    return bigfloat.from_number(x)


def _huge(x: Number) -> bool:
    """A ``Decimal`` past 2**64 in size (no int path applies to it)."""
    return type(x) is Decimal and x.adjusted() > 20  # type: ignore[union-attr]


def round_half_away(x: Number) -> int:
    """``round``: half away from zero, after adding ±0.5 in OPA's 64-bit float."""
    f = _float_path(x)
    if f is None:
        return as_int(x)  # type: ignore[return-value]
    return _trunc(bigfloat.add(f, bigfloat.BigFloat(f.neg, 1, -1, 53)))


def ceil(x: Number) -> int:
    """``ceil`` as OPA computes it, including ``ceil(-0.5) == 1``."""
    f = _float_path(x)
    if f is None:
        return as_int(x)  # type: ignore[return-value]
    i = _trunc(f)
    # OPA steps up from the truncated value unless it is negative, so a
    # number in (-1, 0) (truncated to +0) gets 1.
    return i if i < 0 or f.is_int() else i + 1


def floor(x: Number) -> int:
    """``floor`` as OPA computes it, including ``floor(-0.5) == 0``."""
    f = _float_path(x)
    if f is None:
        return as_int(x)  # type: ignore[return-value]
    i = _trunc(f)
    return i if i >= 0 or f.is_int() else i - 1


def truncate(x: Number) -> int:
    """The integer part OPA takes of a number (``format_int``): exact for an
    int, through the 64-bit float otherwise."""
    if type(x) is int:
        return x
    return _trunc(bigfloat.from_number(x))


def _trunc(f: bigfloat.BigFloat) -> int:
    """:func:`bigfloat.trunc`, refused past the integer size limit."""
    if f.exp + f.mant.bit_length() > MAX_INT_BITS:
        raise ArithmeticError_(f"the integer would have more than the limit of {MAX_INT_BITS} bits")
    return bigfloat.trunc(f)


def total(values: Any) -> Number:
    """``sum``: exact when every value is an integer, else accumulated left to
    right in OPA's 64-bit float."""
    ints = [as_int(v) for v in values]
    if None not in ints:
        return sum(ints)  # type: ignore[arg-type]
    acc = bigfloat.BigFloat(False, 0, 0, 0)
    for v in values:
        acc = bigfloat.add(acc, bigfloat.from_number(v))
    return bigfloat.to_number(acc)


def product(values: Any) -> Number:
    """``product``: exact when every value is an integer, else accumulated in
    a float that OPA starts at 1 with a 53-bit mantissa (and keeps there)."""
    ints = [as_int(v) for v in values]
    if None not in ints:
        result = 1
        for i in ints:
            if result.bit_length() + i.bit_length() > MAX_PRODUCT_BITS:  # type: ignore[union-attr]
                raise ArithmeticError_(f"the product would have more than the limit of {MAX_PRODUCT_BITS} bits")
            result *= i  # type: ignore[operator]
        return result
    acc = bigfloat.BigFloat(False, 1, 0, 53)
    for v in values:
        acc = bigfloat.mul(acc, bigfloat.from_number(v), 53)
    return bigfloat.to_number(acc)


#: Digits of the integral part past which a ``Decimal`` prints in exponent form.
MAX_PLAIN_DIGITS = 1_000_001

#: Bits of an int that surely has fewer than 4,000 decimal digits.
_STR_SAFE_BITS = 13_000


def format_number(x: int | float | Decimal) -> str:
    """The JSON text OPA prints for a number."""
    if type(x) is int:
        # Ints under Python's int-to-str digit limit (4,300 digits) are
        # most: test that by bit length, which costs nothing to read.
        if x.bit_length() < _STR_SAFE_BITS:
            return str(x)
        return int_text(x)  # past Python's own limit (and in close to linear time)
    if type(x) is Decimal:
        return _format_decimal(x)
    assert isinstance(x, float)
    if x.is_integer() and abs(x) < 1e21:
        if not x and math.copysign(1.0, x) < 0:
            return "-0"  # OPA's negative zero quotient or product
        return str(int(x))
    # repr's exponent form is OPA's for computed results (1.5e-07, 1e+22);
    # plain digits up to 1e16 keep the text of typical literals and input.
    return repr(x)


def _format_decimal(d: Decimal) -> str:
    """Exact decimal text in the form OPA gives arithmetic results: plain
    digits for exponents -4 to 5, else ``3.3333333333333333334e-06``."""
    if not d.is_finite():
        return "nan" if d.is_nan() else ("-inf" if d.is_signed() else "inf")  # (as a float's)
    if d.adjusted() >= INT_DIGITS:
        if d.adjusted() < MAX_PLAIN_DIGITS:
            # Integral at this size: all its digits, as OPA prints a big result.
            return format(d, "f")
        # Past that, all its digits would take seconds and gigabytes (JSON
        # input ``1e999999999``): the exponent form, as OPA echoes such input.
        big = d.normalize(_BIG)
        text = "".join(map(str, big.as_tuple().digits))
        mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{'-' if big.is_signed() else ''}{mant}e{big.adjusted()}"
    n = normalize(d)
    if type(n) is not Decimal:
        return format_number(n)
    n = n.normalize(_CONTEXT)
    adjusted = n.adjusted()
    if -4 <= adjusted < 6:
        return format(n, "f")
    sign, digits, _ = n.as_tuple()
    text = "".join(map(str, digits))
    mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{'-' if sign else ''}{mant}e{'-' if adjusted < 0 else '+'}{abs(adjusted):02d}"


def parse_number(text: str) -> int | float | Decimal:
    """A JSON/Rego number's text: ints stay exact (integral exponents too),
    others are the float that spells the same decimal, else the exact ``Decimal``."""
    if len(text) < 4000:
        try:
            return int(text)
        except ValueError:
            pass
    d = Decimal(text)
    if d.is_finite() and (d == d.to_integral_value(context=_CONTEXT)):
        return integral(d)
    return literal_number(d)


