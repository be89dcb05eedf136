"""What keeps one builtin call bounded in time and memory.

**The deadline.** An evaluation may have a time limit
(``engine.set_eval_timeout``); generated code checks it between loop
iterations, but one builtin call can do unbounded work by itself (expand a
network, walk a document, apply thousands of patches). Builtins whose work
grows with their input are registered with ``cancellable=True``: they take
the :class:`~pyrego.runtime.context.EvalContext` first and count their work
(with a :class:`Deadline`, or a loop's own count and :func:`check`),
reading the clock only once every :data:`TICK` units; small inputs skip the
count, so normal calls do not pay for it. Past the
deadline they raise :class:`~.registry.BuiltinCancel`; the evaluation then
ends with :class:`pyrego.EvalCancelError` (``eval_cancel_error``), as it does
when generated code finds the deadline passed.

**Caps.** OPA has no limits on these; Go would run out of memory or time
(or, in a hosted service, take the whole machine) long before a result.
Each cap is far above any real policy's needs and raises a builtin error
(``eval_builtin_error``) whose message says which limit was hit:

- :data:`MAX_STRING`: 2**28 characters (256 Mi; at most 1 GiB in memory
  whatever the characters) for a string a builtin builds (``replace``,
  ``strings.replace_n``, ``concat``, ``regex.replace``, ``sprintf``
  padding, ``json.marshal_with_options`` indentation);
- :data:`MAX_INT_BITS`: 2**20 bits (about 315,000 decimal digits) for an
  integer ``*``, ``product`` or ``bits.lsh`` makes, one integer arithmetic
  reads (``1e1000000 + 1``) and one printed in decimal: at that size one
  multiplication or conversion takes a tenth of a second or so (see
  :mod:`pyrego.runtime.bigint`);
- :data:`MAX_CIDR_EXPAND`: 2**24 addresses for ``net.cidr_expand`` (a /8).
"""

from __future__ import annotations

import time
from typing import Any

from pyrego.runtime.builtin_errors import BuiltinCancel, BuiltinError
from pyrego.runtime.numbers import MAX_PRODUCT_BITS

#: Work units between two reads of the clock.
TICK = 1 << 12

MAX_STRING = 1 << 28
MAX_INT_BITS = MAX_PRODUCT_BITS  # one integer size limit for arithmetic and builtins
MAX_CIDR_EXPAND = 1 << 24

TIMED_OUT = "evaluation timed out"


class Deadline:
    """Counts a builtin's work; every :data:`TICK` units, checks the deadline.

    ``message`` is the cancel error's text (the builtin's name is added in
    front when the error ends the evaluation)."""

    __slots__ = ("at", "left", "message")

    def __init__(self, ctx: Any, message: str = TIMED_OUT) -> None:
        self.at: float | None = ctx.deadline if ctx is not None else None
        self.left = TICK
        self.message = message

    def tick(self, units: int = 1) -> None:
        self.left -= units
        if self.left <= 0:
            self.left = TICK
            self.check()

    def check(self) -> None:
        """Raise the cancel error if the deadline has passed (one clock read)."""
        if self.at is not None and time.monotonic() > self.at:
            raise BuiltinCancel(self.message)

    def seconds_left(self) -> float | None:
        """Time left before the deadline (None: no deadline); raises once it has passed."""
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise BuiltinCancel(self.message)
        return left


def check(ctx: Any, message: str = TIMED_OUT) -> None:
    """Raise the cancel error if ``ctx``'s deadline has passed (for loops that
    keep their own count and call this every :data:`TICK` units)."""
    at = ctx.deadline
    if at is not None and time.monotonic() > at:
        raise BuiltinCancel(message)


def check_string_size(size: int, what: str) -> None:
    """Refuse to build a string of ``size`` characters beyond :data:`MAX_STRING`."""
    if size > MAX_STRING:
        raise BuiltinError(f"{what} would be longer than the limit of {MAX_STRING} characters")


def check_int_bits(bits: int, what: str) -> None:
    """Refuse an integer of more than :data:`MAX_INT_BITS` bits."""
    if bits > MAX_INT_BITS:
        raise BuiltinError(f"{what} would have more than the limit of {MAX_INT_BITS} bits")
