"""The evaluation's time limit, checked from walks over values.

Equality, ordering, key building (:func:`~.values.freeze`), JSON output and
number conversions are plain functions called from generated code and
builtins without the evaluation context. A value with shared parts (``a1 :=
[a0, a0]``, ..., ``a22 := [a21, a21]``) is small in memory but millions of
nodes deep when walked, so one such call can outlive the evaluation's time
limit. Walks count their nodes with :func:`tick`; every :data:`TICK` nodes
(counted across all walks of the process) one check finds the running
evaluation's deadline and ends it with :class:`pyrego.EvalCancelError` once
it has passed.

The deadline is found from the call stack: generated code, builtins and the
engine hold the evaluation's :class:`~.context.EvalContext` in a local named
``ctx``. The search runs once per :data:`TICK` nodes, so small walks never
pay for it; outside any evaluation it finds nothing and nothing is checked.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from pyrego.errors import EvalCancelError
from pyrego.runtime.builtin_errors import BuiltinCancel

#: Nodes walked between two deadline checks.
TICK = 1 << 12

_left = TICK


def tick(units: int = 1) -> None:
    """Count ``units`` nodes of work; every :data:`TICK` nodes, check the deadline.

    (The count is shared by every thread: it only decides how often the
    clock is read, so lost updates do no harm.)"""
    global _left
    _left -= units
    if _left <= 0:
        _left = TICK
        check()


def check() -> None:
    """Raise :class:`pyrego.EvalCancelError` if the running evaluation's time limit has passed."""
    deadline = current_deadline()
    if deadline is not None and time.monotonic() > deadline:
        raise _cancel_error()


class WalkCancelled(EvalCancelError, BuiltinCancel):
    """The deadline passed during a walk over a value."""


def _cancel_error() -> EvalCancelError:
    """The error that ends an evaluation from a walk: an :class:`EvalCancelError`
    that is also a builtin's cancel, so that inside a builtin the error names
    the builtin and its location, as a builtin's own deadline check does."""
    return WalkCancelled("evaluation timed out")


class HasDeadline:
    """What :func:`current_deadline` looks for in a caller's ``ctx``: the base of
    :class:`pyrego.runtime.context.EvalContext`, defined here so that this module,
    which the value walks import, does not import the context (which imports them)."""

    __slots__ = ()
    deadline: float | None


def current_deadline() -> float | None:
    """The deadline of the evaluation running on this thread (None: none, or no limit)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if "ctx" in code.co_varnames or "ctx" in code.co_freevars or "ctx" in code.co_cellvars:
            ctx = frame.f_locals.get("ctx")
            if isinstance(ctx, HasDeadline):
                return ctx.deadline
        frame = frame.f_back
    return None
