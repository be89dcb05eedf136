"""Operators: comparison, arithmetic, set ``&``/``|`` and membership (``in``).

Comparison uses OPA's total order across types (null < boolean < number <
string < array < object < set). Arithmetic keeps integers exact and does
decimal arithmetic otherwise (see :mod:`pyrego.runtime.numbers`); ``-`` is
also set difference. ``x in coll`` looks at the values of arrays, sets and
objects; ``k, v in coll`` checks a key (index) and its value. Membership in
anything that is not a collection is ``false``, not an error.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..runtime import numbers
from ..runtime.values import compare, equal, freeze
from .registry import BuiltinError, builtin
from .types import type_err

# Room to round any literal Decimal to an integer.
_ROUND_CONTEXT = numbers.decimal.Context(prec=40000, Emax=999999, Emin=-999999)

# ---------------------------------------------------------------- comparison

@builtin("equal", 2)
def op_equal(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int):
        return a == b  # type: ignore[no-any-return]
    return equal(a, b)


@builtin("neq", 2)
def op_neq(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int):
        return a != b  # type: ignore[no-any-return]
    return not equal(a, b)


def _ordered(a: Any, b: Any) -> bool:
    """True when Python's own ordering of a and b is OPA's (numbers, or two strings)."""
    ta = type(a)
    tb = type(b)
    if ta is str:
        return tb is str
    return (ta is int or ta is float or ta is Decimal) and (tb is int or tb is float or tb is Decimal)


@builtin("lt", 2)
def op_lt(a: Any, b: Any) -> bool:
    if _ordered(a, b):
        return a < b  # type: ignore[no-any-return]
    return compare(a, b) < 0


@builtin("lte", 2)
def op_lte(a: Any, b: Any) -> bool:
    if _ordered(a, b):
        return a <= b  # type: ignore[no-any-return]
    return compare(a, b) <= 0


@builtin("gt", 2)
def op_gt(a: Any, b: Any) -> bool:
    if _ordered(a, b):
        return a > b  # type: ignore[no-any-return]
    return compare(a, b) > 0


@builtin("gte", 2)
def op_gte(a: Any, b: Any) -> bool:
    if _ordered(a, b):
        return a >= b  # type: ignore[no-any-return]
    return compare(a, b) >= 0


# ---------------------------------------------------------------- arithmetic


def _numbers(a: Any, b: Any) -> None:
    """Raise OPA's operand error unless both are numbers."""
    ta = type(a)
    if ta is not int and ta is not float and ta is not Decimal:
        raise type_err(1, a, "number")
    tb = type(b)
    if tb is not int and tb is not float and tb is not Decimal:
        raise type_err(2, b, "number")


def _result(x: int | float | Decimal) -> int | float | Decimal:
    """An integral float result is an int, as OPA prints it."""
    if type(x) is float and x.is_integer():
        return _exact_int(x)
    return x


def _exact_int(x: float) -> int:
    """The integer an integral float's shortest text denotes (1e+300 is 10**300)."""
    if abs(x) < 9007199254740992.0:  # 2**53: the float is the integer exactly
        return int(x)
    return int(Decimal(repr(x)))


@builtin("plus", 2)
def plus(a: Any, b: Any) -> int | float | Decimal:
    if type(a) is int and type(b) is int:
        return a + b  # type: ignore[no-any-return]
    _numbers(a, b)
    try:
        return _result(numbers.add(a, b))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("minus", 2)
def minus(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        return a - b
    a_num = ta is int or ta is float or ta is Decimal
    b_num = tb is int or tb is float or tb is Decimal
    if a_num and b_num:
        try:
            return _result(numbers.sub(a, b))
        except numbers.ArithmeticError_ as exc:
            raise BuiltinError(str(exc))
    a_set = ta is frozenset or ta is set
    b_set = tb is frozenset or tb is set
    if a_set and b_set:
        return frozenset(a.difference(b))
    if not a_num and not a_set:
        raise type_err(1, a, "number", "set")
    if b_num:
        raise type_err(2, b, "set")
    raise type_err(2, b, "number")


@builtin("mul", 2)
def mul(a: Any, b: Any) -> int | float | Decimal:
    if type(a) is int and type(b) is int:
        return a * b  # type: ignore[no-any-return]
    _numbers(a, b)
    try:
        return _result(numbers.mul(a, b))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("div", 2)
def div(a: Any, b: Any) -> int | float | Decimal:
    _numbers(a, b)
    try:
        return _result(numbers.div(a, b))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("rem", 2)
def rem(a: Any, b: Any) -> int | float | Decimal:
    _numbers(a, b)
    try:
        return numbers.rem(a, b)
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


def _number(x: Any) -> int | float | Decimal:
    t = type(x)
    if t is not int and t is not float and t is not Decimal:
        raise type_err(1, x, "number")
    return x  # type: ignore[no-any-return]


@builtin("abs", 1)
def op_abs(x: Any) -> int | float | Decimal:
    n: Any = _number(x)
    return _result(abs(n))


@builtin("round", 1)
def op_round(x: Any) -> int:
    n = _number(x)
    if type(n) is Decimal:
        return int(n.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=_ROUND_CONTEXT))
    if type(n) is not float:
        return n  # type: ignore[return-value]
    if n.is_integer():
        return _exact_int(n)
    # Half away from zero, on the decimal the float denotes (|n| < 2**52 here).
    return int(Decimal(repr(n)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@builtin("ceil", 1)
def op_ceil(x: Any) -> int:
    # Note: OPA v1.20 returns 1 for ceil of a number in (-1, 0) and 0 for its
    # floor (it loses the sign of zero); we follow the documented behaviour.
    n = _number(x)
    if type(n) is float and n.is_integer():
        return _exact_int(n)
    return math.ceil(n)


@builtin("floor", 1)
def op_floor(x: Any) -> int:
    n = _number(x)
    if type(n) is float and n.is_integer():
        return _exact_int(n)
    return math.floor(n)


# ---------------------------------------------------------------- set operators


def _two_sets(a: Any, b: Any) -> None:
    ta = type(a)
    if ta is not frozenset and ta is not set:
        raise type_err(1, a, "set")
    tb = type(b)
    if tb is not frozenset and tb is not set:
        raise type_err(2, b, "set")


@builtin("and", 2)
def set_and(a: Any, b: Any) -> frozenset[Any]:
    _two_sets(a, b)
    return frozenset(a & b)


@builtin("or", 2)
def set_or(a: Any, b: Any) -> frozenset[Any]:
    _two_sets(a, b)
    return frozenset(a | b)


# ---------------------------------------------------------------- membership


@builtin("internal.member_2", 2)
def member_2(x: Any, coll: Any) -> bool:
    t = type(coll)
    if t is frozenset or t is set:
        return freeze(x) in coll
    if t is list or t is tuple:
        tx = type(x)
        if tx is str:
            # str == non-str is always False in Python, so `in` is exact here.
            return x in coll
        if tx is int or tx is float:
            # Python's == only errs by matching booleans (1 == True): skip those.
            i = 0
            while True:
                try:
                    i = coll.index(x, i)
                except ValueError:
                    return False
                if type(coll[i]) is not bool:
                    return True
                i += 1
        return any(equal(x, e) for e in coll)
    if t is dict:
        if type(x) is str:
            return x in coll.values()
        return any(equal(x, v) for v in coll.values())
    return False


@builtin("internal.member_3", 3)
def member_3(key: Any, value: Any, coll: Any) -> bool:
    t = type(coll)
    if t is dict:
        found = coll.get(freeze(key), _MISSING)
        return found is not _MISSING and equal(found, value)
    if t is list or t is tuple:
        tk = type(key)
        if tk is float and key.is_integer():
            key = int(key)
        elif tk is not int:
            return False
        return 0 <= key < len(coll) and equal(coll[key], value)
    if t is frozenset or t is set:
        return freeze(key) in coll and equal(key, value)
    return False


_MISSING = object()
