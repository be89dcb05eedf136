"""Conversions: to_number, format_int and the deprecated cast_* builtins."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from pyrego.builtins._goutil import int_to_decimal
from pyrego.builtins.registry import builtin
from pyrego.builtins.sprintf import go_quote
from pyrego.builtins.types import num_operand, operand_msg, type_err
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.numbers import ArithmeticError_, parse_number, truncate
from pyrego.runtime.values import make_set, sort_key, thaw

# Go's strconv.ParseFloat syntax: decimal or hexadecimal (with a p exponent),
# with `_` allowed only between digits (or right after a base prefix).
_DEC_DIGITS = r"[0-9](?:_?[0-9])*"
_HEX_DIGITS = r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_DECIMAL = re.compile(rf"[+-]?(?:{_DEC_DIGITS}(?:\.(?:{_DEC_DIGITS})?)?|\.{_DEC_DIGITS})(?:[eE][+-]?{_DEC_DIGITS})?")
_HEX = re.compile(rf"[+-]?0[xX]_?(?:{_HEX_DIGITS}(?:\.(?:{_HEX_DIGITS})?)?|\.{_HEX_DIGITS})[pP][+-]?{_DEC_DIGITS}")

_FLOAT_MAX = Decimal("1.7976931348623157e308")


def _parse_float_error(text: str, why: str) -> BuiltinError:
    return BuiltinError(f"strconv.ParseFloat: parsing {go_quote(text)}: {why}")


def _parse_go_float(text: str) -> int | float | Decimal:
    """A number from text that Go's ParseFloat accepts; ints stay exact."""
    if _DECIMAL.fullmatch(text):
        clean = text.replace("_", "")
        try:
            d = Decimal(clean)
        except InvalidOperation:  # pragma: no cover - the regex admits only valid text
            raise _parse_float_error(text, "invalid syntax")
        # Go rounds to the nearest float64; out of range is an error (underflow is not).
        if d.copy_abs() > _FLOAT_MAX and not math.isfinite(float(d)):  # (abs() would overflow the context)
            raise _parse_float_error(text, "value out of range")
        return parse_number(clean.lstrip("+"))
    if _HEX.fullmatch(text):
        clean = text.replace("_", "")
        try:
            value = float.fromhex(clean)
        except OverflowError:
            raise _parse_float_error(text, "value out of range")
        return int(value) if value.is_integer() else value
    raise _parse_float_error(text, "invalid syntax")


_INT_TEXT = re.compile(r"-?[0-9]+")


@builtin("to_number", 1)
def to_number(x: Any) -> int | float | Decimal:
    t = type(x)
    if t is int or t is float or t is Decimal:
        return x  # type: ignore[no-any-return]
    if t is str:
        n: int | float | Decimal
        if _INT_TEXT.fullmatch(x):
            if len(x) > 4000:
                # Past what Go's ParseFloat reads (and Python's int() takes): OPA's error.
                raise _parse_float_error(x, "value out of range")
            n = int(x)
        else:
            word = x.lstrip("+-").lower()
            if word in ("inf", "infinity", "nan"):
                raise type_err(1, x, "valid number string")
            n = _parse_go_float(x)
        if not n and x.startswith("-"):
            return -0.0  # OPA keeps the text: "-0" stays a negative zero
        return n
    if t is bool:
        return 1 if x else 0
    if x is None:
        return 0
    raise type_err(1, x, "null", "boolean", "number", "string")


_BASES = {2: "b", 8: "o", 10: "d", 16: "x"}


@builtin("format_int", 2)
def format_int(x: Any, base: Any) -> str:
    num_operand(x, 1)
    num_operand(base, 2)
    spec = _BASES.get(base) if type(base) is int else None
    if spec is None:
        raise operand_msg(2, "must be one of {2, 8, 10, 16}")
    # A number that is not an int goes through OPA's 64-bit float first.
    try:
        n = truncate(x)
    except ArithmeticError_ as exc:
        raise BuiltinError(str(exc)) from None
    if spec == "d":
        return int_to_decimal(n)  # any size, as Go prints a big.Int
    return format(n, spec)


# ---------------------------------------------------------------- deprecated casts


@builtin("cast_array", 1)
def cast_array(x: Any) -> list[Any]:
    t = type(x)
    if t is list or t is tuple:
        return list(x)
    if t is frozenset or t is set:
        return sorted((thaw(k) for k in x), key=sort_key)
    raise type_err(1, x, "array", "set")


@builtin("cast_set", 1)
def cast_set(x: Any) -> frozenset[Any]:
    t = type(x)
    if t is frozenset:
        return x  # type: ignore[no-any-return]
    if t is set:
        return frozenset(x)
    if t is list or t is tuple:
        return make_set(x)
    raise type_err(1, x, "array", "set")


@builtin("cast_string", 1)
def cast_string(x: Any) -> str:
    if type(x) is str:
        return x  # type: ignore[no-any-return]
    raise type_err(1, x, "string")


@builtin("cast_boolean", 1)
def cast_boolean(x: Any) -> bool:
    if type(x) is bool:
        return x  # type: ignore[no-any-return]
    raise type_err(1, x, "boolean")


@builtin("cast_null", 1)
def cast_null(x: Any) -> None:
    if x is None:
        return None
    raise type_err(1, x, "null")


@builtin("cast_object", 1)
def cast_object(x: Any) -> dict[Any, Any]:
    if type(x) is dict:
        return x  # type: ignore[no-any-return]
    raise type_err(1, x, "object")
