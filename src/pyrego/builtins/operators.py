"""Operators: comparison, arithmetic, set ``&``/``|`` and membership (``in``).

Comparison uses OPA's total order across types (null < boolean < number <
string < array < object < set). Arithmetic gives OPA's exact answers: integers
stay exact, other numbers go through OPA's float pipeline (see
:mod:`pyrego.runtime.numbers`); ``-`` is also set difference. ``x in coll``
looks at the values of arrays, sets and objects; ``k, v in coll`` checks a
key (index) and its value. Membership in anything that is not a collection
is ``false``, not an error.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pyrego.builtins import limits
from pyrego.builtins.registry import builtin
from pyrego.builtins.types import type_err
from pyrego.runtime import numbers
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.values import compare, equal, freeze

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
    """True when Python's own ordering of a and b is OPA's (numbers, or two strings).

    Not for a float and a ``Decimal``: Python compares the float's binary value,
    OPA the decimal it spells (0.1 < 0.10000000000000000002 in Rego)."""
    ta = type(a)
    tb = type(b)
    if ta is str:
        return tb is str
    if ta is int:
        return tb is int or tb is float or tb is Decimal
    if ta is float:
        return tb is float or tb is int
    if ta is Decimal:
        return tb is Decimal or tb is int
    return False


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


@builtin("plus", 2)
def plus(a: Any, b: Any) -> int | float | Decimal:
    if type(a) is int and type(b) is int:
        return a + b  # type: ignore[no-any-return]
    _numbers(a, b)
    try:
        return numbers.add(a, b)
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
            return numbers.sub(a, b)
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
        # A product past the integer size limit would take seconds no deadline
        # check can interrupt (one multiplication); refuse it before starting.
        if a.bit_length() + b.bit_length() > limits.MAX_INT_BITS:
            limits.check_int_bits(a.bit_length() + b.bit_length(), "the product")
        return a * b  # type: ignore[no-any-return]
    _numbers(a, b)
    try:
        return numbers.mul(a, b)
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("div", 2)
def div(a: Any, b: Any) -> int | float | Decimal:
    _numbers(a, b)
    try:
        return numbers.div(a, b)
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


# Ints in this range come back exact from abs/round/ceil/floor (as from OPA's
# float path), without the call into numbers.
_SMALL = 1 << 62


@builtin("abs", 1)
def op_abs(x: Any) -> int | float | Decimal:
    if type(x) is int and -_SMALL < x < _SMALL:
        return abs(x)
    try:
        return numbers.absolute(_number(x))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("round", 1)
def op_round(x: Any) -> int:
    if type(x) is int and -_SMALL < x < _SMALL:
        return x
    try:
        return numbers.round_half_away(_number(x))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("ceil", 1)
def op_ceil(x: Any) -> int:
    if type(x) is int and -_SMALL < x < _SMALL:
        return x
    # As in OPA v1.20, a number in (-1, 0) has ceil 1 and floor 0.
    try:
        return numbers.ceil(_number(x))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


@builtin("floor", 1)
def op_floor(x: Any) -> int:
    if type(x) is int and -_SMALL < x < _SMALL:
        return x
    try:
        return numbers.floor(_number(x))
    except numbers.ArithmeticError_ as exc:
        raise BuiltinError(str(exc))


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
