"""Binary floating point with OPA's exact rounding, for non-integer arithmetic.

OPA does not compute ``1/3`` or ``0.1 + 0.2`` in decimal: it parses each
operand's number text into a binary float with a 64-bit mantissa (rounded
to nearest, ties to even, with a particular way of applying large powers of
ten), does one correctly rounded operation, and turns the result back into
the shortest decimal text that parses to the same 64-bit value. The next
operation starts again from that text. So ``1/3`` is
``0.33333333333333333334`` and ``1/3*3`` is exactly ``1``, while a big
integer that goes through a float keeps only 64 significant bits.

This module reproduces that pipeline bit for bit, with Python integers for
mantissas: :func:`from_number` (number to float), :func:`add`, :func:`sub`,
:func:`mul`, :func:`quo`, and :func:`to_number` (float back to a Rego
number: an ``int`` when integral, a ``float`` when a float holds the
decimal, else a ``Decimal`` of the exact digits). :func:`text` gives the
number text OPA would print.
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from functools import lru_cache

from pyrego.runtime.bigint import INT_DIGITS, MAX_INT_BITS, int_text, text_int

#: The mantissa width OPA's arithmetic uses (the default of its float type).
PREC = 64


class BigFloat:
    """``(-1)**neg * mant * 2**exp`` held at ``prec`` bits; ``mant == 0`` is a
    (signed) zero. ``mant`` never has more than ``prec`` bits."""

    __slots__ = ("neg", "mant", "exp", "prec")

    def __init__(self, neg: bool, mant: int, exp: int, prec: int) -> None:
        self.neg = neg
        self.mant = mant
        self.exp = exp
        self.prec = prec

    def __repr__(self) -> str:
        return f"BigFloat({'-' if self.neg else '+'}{self.mant}p{self.exp}, prec={self.prec})"

    def is_int(self) -> bool:
        """Whether the value is an integer (zero included)."""
        e = self.exp
        return e >= 0 or not self.mant & ((1 << -e) - 1)


def _round(neg: bool, mant: int, exp: int, prec: int, sticky: bool = False) -> BigFloat:
    """The nearest ``prec``-bit float to ``mant * 2**exp`` (ties to even);
    ``sticky`` says the exact value is a little above ``mant * 2**exp``."""
    extra = mant.bit_length() - prec
    if extra <= 0:
        return BigFloat(neg, mant, exp, prec)
    q = mant >> extra
    rest = mant & ((1 << extra) - 1)
    half = 1 << (extra - 1)
    if rest > half or (rest == half and (sticky or q & 1)):
        q += 1
        if q >> prec:
            q >>= 1
            extra += 1
    return BigFloat(neg, q, exp + extra, prec)


# ---------------------------------------------------------------- arithmetic


def add(x: BigFloat, y: BigFloat) -> BigFloat:
    """``x + y`` rounded to the wider of the two precisions."""
    prec = max(x.prec, y.prec)
    if not y.mant:
        if not x.mant:
            return BigFloat(x.neg and y.neg, 0, 0, prec)
        return _round(x.neg, x.mant, x.exp, prec)
    if not x.mant:
        return _round(y.neg, y.mant, y.exp, prec)
    x, y = _near(x, y, prec), _near(y, x, prec)
    e = min(x.exp, y.exp)
    a = x.mant << (x.exp - e)
    b = y.mant << (y.exp - e)
    if x.neg:
        a = -a
    if y.neg:
        b = -b
    s = a + b
    if not s:
        return BigFloat(False, 0, 0, prec)  # an exact zero difference is +0
    return _round(s < 0, abs(s), e, prec)


def _near(x: BigFloat, y: BigFloat, prec: int) -> BigFloat:
    """``x``, or when all of it lies below ``y``'s rounding and guard bits a
    stand-in just below them (same sign, nonzero: the sum rounds the same),
    so that aligning the two does not shift ``y`` by billions of bits
    (``1e999999999 + 0.5``)."""
    limit = min(y.exp, y.exp + y.mant.bit_length() - prec - 3)
    if x.exp + x.mant.bit_length() < limit:
        return BigFloat(x.neg, 1, limit - 1, x.prec)
    return x


def sub(x: BigFloat, y: BigFloat) -> BigFloat:
    """``x - y`` rounded to the wider of the two precisions."""
    return add(x, BigFloat(not y.neg, y.mant, y.exp, y.prec))


def mul(x: BigFloat, y: BigFloat, prec: int = 0) -> BigFloat:
    """``x * y`` rounded to ``prec`` bits (default: the wider precision)."""
    prec = prec or max(x.prec, y.prec)
    neg = x.neg != y.neg
    if not x.mant or not y.mant:
        return BigFloat(neg, 0, 0, prec)
    return _round(neg, x.mant * y.mant, x.exp + y.exp, prec)


def quo(x: BigFloat, y: BigFloat, prec: int = 0) -> BigFloat:
    """``x / y`` correctly rounded to ``prec`` bits (default: the wider
    precision); ``y`` must not be zero."""
    prec = prec or max(x.prec, y.prec)
    neg = x.neg != y.neg
    if not x.mant:
        return BigFloat(neg, 0, 0, prec)
    # Enough quotient bits for the rounding bit; the remainder is the sticky bit.
    shift = max(0, prec + 2 - x.mant.bit_length() + y.mant.bit_length())
    q, r = divmod(x.mant << shift, y.mant)
    return _round(neg, q, x.exp - y.exp - shift, prec, r != 0)


def absolute(x: BigFloat) -> BigFloat:
    """``|x|`` (a zero becomes +0)."""
    return BigFloat(False, x.mant, x.exp, x.prec)


def trunc(x: BigFloat) -> int:
    """The integer part of ``x``, rounded toward zero."""
    e = x.exp
    m = x.mant << e if e >= 0 else x.mant >> -e
    return -m if x.neg else m


# Python refuses int <-> str conversions past 4300 digits (and is quadratic).
_STR_BITS = 14000


def _int_text(n: int) -> str:
    return str(n) if n.bit_length() < _STR_BITS else int_text(n)


def _text_int(s: str) -> int:
    return int(s) if len(s) < 4000 else text_int(s)


# ---------------------------------------------------------------- parsing

_POW5_EXACT = 27  # 5**27 is the largest power of five in 64 bits


@lru_cache(maxsize=256)
def _pow5(n: int) -> BigFloat:
    """``5**n`` as the parser builds it: exact up to ``5**27``, beyond that by
    repeated squaring at 128 bits (the factor at 192), so not always exact."""
    if n <= _POW5_EXACT:
        return BigFloat(False, 5**n, 0, PREC + 64)
    z = BigFloat(False, 5**_POW5_EXACT, 0, PREC + 64)
    f = BigFloat(False, 5, 0, PREC + 128)
    n -= _POW5_EXACT
    while n:
        if n & 1:
            z = mul(z, f, z.prec)
        f = mul(f, f, f.prec)
        n >>= 1
    return z


def parse(neg: bool, digits: int, exp10: int) -> BigFloat:
    """The 64-bit float OPA reads from the text ``digits * 10**exp10``: the
    digits' integer times ``2**exp10``, then one rounded multiplication or
    division by ``5**|exp10|``. Trailing zeros in the digits matter only
    when ``|exp10| > 27`` (in the last bit, if ever)."""
    if not digits:
        return BigFloat(neg, 0, 0, PREC)
    if not exp10:
        return _round(neg, digits, 0, PREC)
    z = BigFloat(neg, digits, exp10, PREC)  # not rounded before the scaling
    if exp10 < 0:
        return quo(z, _pow5(-exp10), PREC)
    return mul(z, _pow5(exp10), PREC)


def parse_float_repr(text: str) -> tuple[bool, int, int]:
    """``(negative, digits, exp10)`` of a Python float's ``repr``."""
    neg = text[0] == "-"
    if neg:
        text = text[1:]
    mant, _, e = text.partition("e")
    whole, _, frac = mant.partition(".")
    exp10 = (int(e) if e else 0) - len(frac)
    return neg, int(whole + frac), exp10


def parse_text(text: str) -> BigFloat:
    """The 64-bit float OPA reads from decimal number text such as ``-1.5e3``
    or ``.5`` (the caller has checked the syntax)."""
    neg = text[:1] == "-"
    body = text.lstrip("+-")
    mant, _, e = body.replace("E", "e").partition("e")
    whole, _, frac = mant.partition(".")
    return parse(neg, _text_int(whole + frac or "0"), (int(e) if e else 0) - len(frac))


# Floats seen as operands, read once (BigFloat values are never mutated).
_FLOAT_CACHE: dict[float, BigFloat] = {}
_CACHE_SIZE = 4096


def from_number(x: int | float | Decimal) -> BigFloat:
    """The 64-bit float OPA reads from a number's text (a float's text is its
    shortest ``repr``, as in JSON; a ``Decimal``'s is its digits as stored)."""
    if type(x) is int:
        return _round(x < 0, abs(x), 0, PREC)
    if isinstance(x, float):
        if not x:
            return BigFloat(str(x)[0] == "-", 0, 0, PREC)
        f = _FLOAT_CACHE.get(x)
        if f is None:
            if x - x:  # NaN or an infinity: only a Python caller can pass one
                from pyrego.runtime.builtin_errors import BuiltinError

                raise BuiltinError(f"{x!r} is not a number: Rego numbers are finite")
            if len(_FLOAT_CACHE) >= _CACHE_SIZE:
                _FLOAT_CACHE.clear()
            f = _FLOAT_CACHE[x] = parse(*parse_float_repr(repr(x)))
        return f
    assert isinstance(x, Decimal)
    if not x.is_finite():
        from pyrego.runtime.builtin_errors import BuiltinError

        raise BuiltinError(f"{x} is not a number: Rego numbers are finite")
    sign, dtuple, exponent = x.as_tuple()
    assert isinstance(exponent, int)
    if len(dtuple) > _MAX_DIGITS:
        # (Only a sum with a huge number has this many digits: 1e1000000 + 1.)
        from pyrego.runtime.bigint import too_big

        raise too_big("the number's digits")
    digits = _text_int("".join(map(str, dtuple))) if dtuple else 0
    return parse(bool(sign), digits, exponent)


#: The most digits of a ``Decimal`` read into a float (the integer size limit's worth).
_MAX_DIGITS = int(MAX_INT_BITS / 3.33)


# ---------------------------------------------------------------- printing


@lru_cache(maxsize=512)
def _pow5_int(n: int) -> int:
    return 5**n


def _decimal(mant: int, exp: int, lead: bool = False) -> tuple[str, int]:
    """Exact decimal digits of ``mant * 2**exp`` (no trailing zeros) and the
    position of the decimal point: the value is ``0.<digits> * 10**point``.

    ``lead``: a number with more than a few thousand digits may come back as
    its first :data:`_LEAD` digits and a ``1`` standing for the nonzero rest
    (enough for :func:`shortest` at up to 100 bits of precision)."""
    if exp >= 0:
        if lead and mant.bit_length() + exp > _STR_BITS:
            found = _leading(mant, 2, exp, 0)
            if found is not None:
                return found
        s = _int_text(mant << exp)
        point = len(s)
    else:
        tz = (mant & -mant).bit_length() - 1  # drop trailing zero bits first
        if tz:
            take = min(tz, -exp)
            mant >>= take
            exp += take
        if lead and exp and mant.bit_length() - exp * 2.33 > _STR_BITS:
            # mant * 5**-exp, an odd number of that many digits, then the point moved left
            found = _leading(mant, 5, -exp, exp)
            if found is not None:
                return found
        s = _int_text(mant * _pow5_int(-exp)) if exp else _int_text(mant)
        point = len(s) + exp
    stripped = s.rstrip("0")
    return stripped, (point if stripped else 0)


#: Digits :func:`_decimal` keeps of a long expansion, and the guard digits after them.
_LEAD = 50
_GUARD = 16
_LEAD_CONTEXT = decimal.Context(
    prec=_LEAD + _GUARD + 14, rounding=decimal.ROUND_DOWN, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN
)


def _leading(mant: int, base: int, k: int, shift: int) -> tuple[str, int] | None:
    """The first :data:`_LEAD` digits of ``mant * base**k`` (which has thousands
    of digits, not ending in zeros beyond the first few dozen) followed by
    ``1``, and its point moved by ``shift``; None when the rounding error of
    the short computation could reach those digits."""
    ctx = _LEAD_CONTEXT
    v = ctx.multiply(Decimal(mant), ctx.power(Decimal(base), k))
    text = "".join(map(str, v.as_tuple().digits))
    guard = text[_LEAD : _LEAD + _GUARD]
    if len(guard) < _GUARD or guard == "0" * _GUARD or guard == "9" * _GUARD:
        return None
    return text[:_LEAD] + "1", v.adjusted() + 1 + shift


def _round_up(d: str, point: int, n: int) -> tuple[str, int]:
    i = n
    while i > 0 and d[i - 1] == "9":
        i -= 1
    if i == 0:
        return "1", point + 1
    return d[: i - 1] + chr(ord(d[i - 1]) + 1), point


def _round_down(d: str, point: int, n: int) -> tuple[str, int]:
    d = d[:n].rstrip("0")
    return d, (point if d else 0)


def shortest(x: BigFloat) -> tuple[str, int]:
    """The fewest decimal digits that read back as ``x`` at its precision,
    found the way OPA's float formatting does (compare ``x``'s digits with
    those of the two half-way points to its neighbours)."""
    lead = x.prec <= 100
    d, point = _decimal(x.mant, x.exp, lead)
    if not d:
        return d, point
    # Mantissa with exactly prec+1 bits, so that its last bit is half an ulp.
    s = x.mant.bit_length() - (x.prec + 1)
    m2 = x.mant << -s if s < 0 else x.mant >> s
    e2 = x.exp + s
    lower, _ = _decimal(m2 - 1, e2, lead)
    upper, _ = _decimal(m2 + 1, e2, lead)
    inclusive = not m2 & 2
    nl, nu = len(lower), len(upper)
    # Skip the digits all three share: no decision can be made there (the
    # inclusive lower bound decides at its own last digit, so stop before it).
    same, hi = 0, min(len(d), nl - 1 if inclusive else nl, nu)
    while same < hi:
        mid = (same + hi + 1) >> 1
        if d[:mid] == lower[:mid] == upper[:mid]:
            same = mid
        else:
            hi = mid - 1
    for i in range(same, len(d)):
        m = d[i]
        lo = lower[i] if i < nl else "0"
        up = upper[i] if i < nu else "0"
        okdown = lo != m or (inclusive and i + 1 == nl)
        okup = m != up and (inclusive or ord(m) + 1 < ord(up) or i + 1 < nu)
        n = i + 1
        if okdown and okup:
            if n >= len(d):
                return d, point
            c = d[n]
            if c == "5" and n + 1 == len(d):
                up_wins = (ord(d[n - 1]) - 48) & 1 == 1  # a tie goes to even
            else:
                up_wins = c >= "5"
            return _round_up(d, point, n) if up_wins else _round_down(d, point, n)
        if okdown:
            return (_round_down(d, point, n)) if n < len(d) else (d, point)
        if okup:
            return (_round_up(d, point, n)) if n < len(d) else (d, point)
    return d, point


def text(x: BigFloat) -> str:
    """The number text OPA makes of a float result: plain digits for an
    integral value, else the shortest ``%g`` form (``0.25``, ``1.5e-07``)."""
    d, point = shortest(x)
    sign = "-" if x.neg else ""
    if x.is_int():
        if not d:
            return sign + "0"
        return sign + d + "0" * (point - len(d))
    exp = point - 1
    if exp < -4 or exp >= 6:
        mant = d[0] + ("." + d[1:] if len(d) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{d}"
    if point >= len(d):
        return sign + d + "0" * (point - len(d))
    return f"{sign}{d[:point]}.{d[point:]}"


_NUMBER_CACHE: dict[tuple[bool, int, int, int], int | float | Decimal] = {}


def to_number(x: BigFloat) -> int | float | Decimal:
    """The Rego number for ``x``'s text: an ``int`` when integral (a negative
    zero is ``-0.0``), a ``float`` when that float's shortest repr is the same
    decimal, otherwise the exact ``Decimal``."""
    key = (x.neg, x.mant, x.exp, x.prec)
    n = _NUMBER_CACHE.get(key)
    if n is None:
        if len(_NUMBER_CACHE) >= _CACHE_SIZE:
            _NUMBER_CACHE.clear()
        n = _NUMBER_CACHE[key] = _to_number(x)
    return n


def _to_number(x: BigFloat) -> int | float | Decimal:
    d, point = shortest(x)
    if x.is_int():
        if not d:
            return -0.0 if x.neg else 0
        if point > INT_DIGITS:
            # Too long for an int: the exact digits in exponent form.
            return Decimal((1 if x.neg else 0, tuple(map(int, d)), point - len(d)))
        n = int(d) * 10 ** (point - len(d)) if point > len(d) else int(d)
        return -n if x.neg else n
    exp10 = point - len(d)
    if len(d) <= 17:
        f = float(f"{'-' if x.neg else ''}{d}e{exp10}")
        if f and f - f == 0:
            neg, digits, e = parse_float_repr(repr(f))
            if digits:
                while not digits % 10:
                    digits //= 10
                    e += 1
                if digits == int(d) and e == exp10:
                    return f
    return Decimal((1 if x.neg else 0, tuple(map(int, d)), exp10))
