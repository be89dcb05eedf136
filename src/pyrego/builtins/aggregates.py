"""Aggregates: count, sum, product, max, min, sort, all, any.

``count`` of a string counts code points. ``sum``/``product`` stay exact on
integers of any size and otherwise accumulate in OPA's binary floats, so
``sum([0.1, 0.2]) == 0.3`` as in OPA (see :mod:`pyrego.runtime.numbers`).
``max``/``min`` of an empty collection are undefined. ``sort`` and
``max``/``min`` use OPA's total order.
"""

from __future__ import annotations

import decimal
from typing import Any

from pyrego.builtins import limits
from pyrego.builtins.registry import builtin
from pyrego.builtins.types import elem_err, type_err
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.numbers import ArithmeticError_, product, total
from pyrego.runtime.values import TRUE_KEY, UNDEF, compare, sort_key, sorted_values, thaw


@builtin("count", 1)
def count(x: Any) -> int:
    t = type(x)
    if t is str or t is list or t is dict or t is frozenset or t is set or t is tuple:
        return len(x)
    raise type_err(1, x, "array", "object", "set", "string")


def _members(x: Any) -> Any:
    """The values of an array or set operand (set members thawed), else an operand error."""
    t = type(x)
    if t is list or t is tuple:
        return x
    if t is frozenset or t is set:
        return [thaw(k) for k in x]
    raise type_err(1, x, "set", "array")


def _check_numbers(coll: Any, values: Any) -> bool:
    """True when every value is an int; raise OPA's element error on a non-number."""
    all_int = True
    for v in values:
        t = type(v)
        if t is int:
            continue
        if t is float or t is decimal.Decimal:
            all_int = False
            continue
        raise elem_err(1, coll, v, "number")
    return all_int


def _in_order(x: Any, values: Any) -> Any:
    """A set's members in OPA's order (sorted), which float sums depend on."""
    t = type(x)
    if t is frozenset or t is set:
        return sorted(values, key=sort_key)
    return values


@builtin("sum", 1)
def agg_sum(x: Any) -> int | float | decimal.Decimal:
    values = _members(x)
    if _check_numbers(x, values):
        return sum(values)
    try:
        return total(_in_order(x, values))
    except ArithmeticError_ as exc:
        raise BuiltinError(str(exc)) from None


@builtin("product", 1)
def agg_product(x: Any) -> int | float | decimal.Decimal:
    values = _members(x)
    if _check_numbers(x, values):
        result = 1
        for v in values:
            # Stop before a multiplication too big to interrupt (see operators.mul).
            if result.bit_length() + v.bit_length() > limits.MAX_INT_BITS:
                limits.check_int_bits(result.bit_length() + v.bit_length(), "the product")
            result *= v
        return result
    try:
        return product(_in_order(x, values))
    except ArithmeticError_ as exc:
        raise BuiltinError(str(exc)) from None


@builtin("max", 1)
def agg_max(x: Any) -> Any:
    values = _members(x)
    if not values:
        return UNDEF
    best = values[0]
    for v in values:
        # `>= 0` keeps the last of equal values, like OPA.
        if compare(v, best) >= 0:
            best = v
    return best


@builtin("min", 1)
def agg_min(x: Any) -> Any:
    values = _members(x)
    if not values:
        return UNDEF
    best = values[0]
    for v in values:
        if compare(v, best) <= 0:
            best = v
    return best


def _homogeneous(values: Any) -> bool:
    """True when Python's own sort orders these values as OPA does."""
    first = type(values[0])
    if first is str:
        return all(type(v) is str for v in values)
    if first is int or first is float:
        return all(type(v) is int or type(v) is float for v in values)
    return False


@builtin("sort", 1)
def agg_sort(x: Any) -> list[Any]:
    t = type(x)
    if t is list or t is tuple:
        if not x:
            return []
        if _homogeneous(x):
            return sorted(x)
        return sorted(x, key=sort_key)
    if t is frozenset or t is set:
        values = [thaw(k) for k in x]
        if values and _homogeneous(values):
            return sorted(values)
        return sorted_values(x)
    raise type_err(1, x, "set", "array")


@builtin("all", 1)
def agg_all(x: Any) -> bool:
    t = type(x)
    if t is list or t is tuple:
        return all(v is True for v in x)
    if t is frozenset or t is set:
        return all(k is TRUE_KEY for k in x)
    raise type_err(1, x, "array", "set")


@builtin("any", 1)
def agg_any(x: Any) -> bool:
    t = type(x)
    if t is list or t is tuple:
        return any(v is True for v in x)
    if t is frozenset or t is set:
        return TRUE_KEY in x
    raise type_err(1, x, "array", "set")
