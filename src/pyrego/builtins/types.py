"""Type builtins (``is_string``, ``type_name``, ...) and the operand checks the
core builtin modules share.

OPA words its operand errors in a fixed way (``topdown/builtins``):

- ``operand 2 must be one of {object, set, array} but got string``: the
  expected types are listed in the order the builtin gives them, which is not
  always sorted, so :func:`type_err` keeps the order it is given;
- ``operand 1 must be array of strings but got array containing number``
  for a bad element of a collection (:func:`elem_err`);
- ``operand 2 must be integer number but got floating-point number`` when an
  integer is needed (:func:`int_operand`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pyrego.builtins.registry import builtin
from pyrego.runtime.bigint import IntTooBig, decimal_to_int
from pyrego.runtime.builtin_errors import OperandTypeError
from pyrego.runtime.values import check_plain
from pyrego.runtime.values import type_name as _type_name

# Go's int is 64 bits: OPA's IntOperand refuses integers outside it.
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def value_type(value: Any) -> str:
    """OPA's name for the type of ``value`` (never raises)."""
    try:
        return _type_name(value)
    except TypeError:
        return type(value).__name__


def type_err(position: int, value: Any, *expected: str) -> OperandTypeError:
    """``operand N must be X but got Y``, expected types in the given order."""
    if len(expected) == 1:
        want = expected[0]
    else:
        want = "one of {" + ", ".join(expected) + "}"
    return OperandTypeError(f"operand {position} must be {want} but got {value_type(value)}")


def elem_err(position: int, composite: Any, element: Any, *expected: str) -> OperandTypeError:
    """OPA's error for an element of the wrong type inside a collection operand."""
    kind = value_type(composite)
    got = value_type(element)
    if len(expected) == 1:
        return OperandTypeError(f"operand {position} must be {kind} of {expected[0]}s but got {kind} containing {got}")
    want = ", ".join(expected)
    return OperandTypeError(f"operand {position} must be {kind} of (any of) {{{want}}} but got {kind} containing {got}")


def operand_msg(position: int, message: str) -> OperandTypeError:
    """A free-form operand error: ``operand N <message>``."""
    return OperandTypeError(f"operand {position} {message}")


_NOT_INTEGER = "must be integer number but got floating-point number"


def _integral(value: Any, position: int) -> int:
    """The integer a number stands for, or OPA's floating-point operand error."""
    if type(value) is float:
        if value.is_integer():
            return int(value)
        raise operand_msg(position, _NOT_INTEGER)
    if type(value) is Decimal:
        if value.is_finite() and value == value.to_integral_value():
            try:
                return decimal_to_int(value)
            except IntTooBig:  # (JSON's 1e999999999: OPA's error, not a billion digits)
                raise operand_msg(position, _NOT_INTEGER) from None
        raise operand_msg(position, _NOT_INTEGER)
    return int(value)


def int_operand(value: Any, position: int) -> int:
    """OPA's ``IntOperand``: a number that is an integer within Go's int."""
    t = type(value)
    if t is not int and t is not float and t is not Decimal:
        raise type_err(position, value, "number")
    if t is Decimal and value.is_finite() and value.adjusted() > 18:
        raise operand_msg(position, _NOT_INTEGER)  # past Go's int, and not worth making the int
    n = _integral(value, position)
    if n < INT64_MIN or n > INT64_MAX:
        raise operand_msg(position, _NOT_INTEGER)
    return n


def bigint_operand(value: Any, position: int) -> int:
    """OPA's ``BigIntOperand``: any integral number (non-numbers say ``integer``)."""
    t = type(value)
    if t is not int and t is not float and t is not Decimal:
        raise type_err(position, value, "integer")
    return _integral(value, position)


def str_operand(value: Any, position: int) -> str:
    if type(value) is not str:
        raise type_err(position, value, "string")
    return value  # type: ignore[no-any-return]


def num_operand(value: Any, position: int) -> int | float:
    """A number operand; a ``Decimal`` becomes its nearest float."""
    t = type(value)
    if t is not int and t is not float:
        if t is Decimal:
            return float(value)
        raise type_err(position, value, "number")
    return value  # type: ignore[no-any-return]


def obj_operand(value: Any, position: int) -> dict[Any, Any]:
    if type(value) is not dict:
        raise type_err(position, value, "object")
    return value  # type: ignore[no-any-return]


def arr_operand(value: Any, position: int) -> list[Any]:
    t = type(value)
    if t is not list and t is not tuple:
        raise type_err(position, value, "array")
    return value  # type: ignore[no-any-return]


def set_operand(value: Any, position: int) -> frozenset[Any]:
    t = type(value)
    if t is not frozenset and t is not set:
        raise type_err(position, value, "set")
    return value  # type: ignore[no-any-return]


# ---------------------------------------------------------------- builtins


@builtin("is_string", 1)
def is_string(x: Any) -> bool:
    # (check_plain: a false answer only for a value; another object is an error.)
    return type(x) is str or not check_plain(x)


@builtin("is_number", 1)
def is_number(x: Any) -> bool:
    t = type(x)
    return t is int or t is float or t is Decimal or not check_plain(x)


@builtin("is_boolean", 1)
def is_boolean(x: Any) -> bool:
    return type(x) is bool or not check_plain(x)


@builtin("is_null", 1)
def is_null(x: Any) -> bool:
    return x is None or not check_plain(x)


@builtin("is_array", 1)
def is_array(x: Any) -> bool:
    t = type(x)
    return t is list or t is tuple or not check_plain(x)


@builtin("is_object", 1)
def is_object(x: Any) -> bool:
    return type(x) is dict or not check_plain(x)


@builtin("is_set", 1)
def is_set(x: Any) -> bool:
    t = type(x)
    return t is frozenset or t is set or not check_plain(x)


@builtin("type_name", 1)
def type_name(x: Any) -> str:
    return _type_name(x)
