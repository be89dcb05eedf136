"""Number builtins: numbers.range, numbers.range_step, bits.*, rand.intn.

Integers are exact at any size (Python ints behave like Go's big.Int here,
two's complement included for the bitwise operations). ``bits.lsh`` refuses
results of more than :data:`~.limits.MAX_INT_BITS` bits (OPA has no limit:
``bits.lsh(1, 1e10)`` would take over a gigabyte).
"""

from __future__ import annotations

import random
import time
from typing import Any

from pyrego.builtins.limits import check_int_bits
from pyrego.builtins.registry import builtin
from pyrego.builtins.types import bigint_operand, int_operand, operand_msg, str_operand
from pyrego.runtime.builtin_errors import BuiltinCancel, BuiltinError
from pyrego.runtime.context import EvalContext

_CHUNK = 1 << 20


def _range(ctx: EvalContext, start: int, stop: int, step: int) -> list[int]:
    """Inclusive range from start towards stop, ascending or descending.

    Huge ranges are built in chunks so that the query's time limit can end
    them cleanly (OPA: "timed out before generating all numbers in range").
    """
    if start > stop:
        step = -step
        stop -= 1
    else:
        stop += 1
    values = range(start, stop, step)
    if len(values) <= _CHUNK:
        return list(values)
    out: list[int] = []
    deadline = ctx.deadline
    for i in range(0, len(values), _CHUNK):
        if deadline is not None and time.monotonic() > deadline:
            raise BuiltinCancel("timed out before generating all numbers in range")
        out.extend(values[i : i + _CHUNK])
    return out


@builtin("numbers.range", 2, needs_context=True)
def numbers_range(ctx: EvalContext, a: Any, b: Any) -> list[int]:
    return _range(ctx, bigint_operand(a, 1), bigint_operand(b, 2), 1)


@builtin("numbers.range_step", 3, needs_context=True)
def numbers_range_step(ctx: EvalContext, a: Any, b: Any, step: Any) -> list[int]:
    start = bigint_operand(a, 1)
    stop = bigint_operand(b, 2)
    n = bigint_operand(step, 3)
    if n <= 0:
        # OPA's own message repeats the builtin name.
        raise BuiltinError("numbers.range_step: step must be a positive integer")
    return _range(ctx, start, stop, n)


# ---------------------------------------------------------------- bits


@builtin("bits.and", 2)
def bits_and(a: Any, b: Any) -> int:
    return bigint_operand(a, 1) & bigint_operand(b, 2)


@builtin("bits.or", 2)
def bits_or(a: Any, b: Any) -> int:
    return bigint_operand(a, 1) | bigint_operand(b, 2)


@builtin("bits.xor", 2)
def bits_xor(a: Any, b: Any) -> int:
    return bigint_operand(a, 1) ^ bigint_operand(b, 2)


@builtin("bits.negate", 1)
def bits_negate(a: Any) -> int:
    return ~bigint_operand(a, 1)


def _shift(b: Any) -> int:
    n = bigint_operand(b, 2)
    if n < 0:
        raise operand_msg(2, "must be an unsigned integer number but got a negative integer")
    return n & 0xFFFFFFFFFFFFFFFF  # OPA shifts by uint(b.Uint64()): the low 64 bits


@builtin("bits.lsh", 2)
def bits_lsh(a: Any, b: Any) -> int:
    x = bigint_operand(a, 1)
    n = _shift(b)
    if x and n > 64:
        check_int_bits(x.bit_length() + n, "the result")
    return x << n


@builtin("bits.rsh", 2)
def bits_rsh(a: Any, b: Any) -> int:
    x = bigint_operand(a, 1)
    return x >> _shift(b)


# ---------------------------------------------------------------- rand

_rng = random.SystemRandom()


@builtin("rand.intn", 2, needs_context=True)
def rand_intn(ctx: EvalContext, s: Any, n: Any) -> int:
    """A random int in [0, |n|), the same for the same (s, n) within one query."""
    key = str_operand(s, 1)
    bound = int_operand(n, 2)
    if bound == 0:
        return 0
    bound = abs(bound)
    cache = ctx.cache_for("rand.intn")
    cache_key = (key, bound)
    value = cache.get(cache_key)
    if value is None:
        value = cache[cache_key] = _rng.randrange(bound)
    return value  # type: ignore[no-any-return]
