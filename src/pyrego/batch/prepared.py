"""The in-process batch loop: one rule, many inputs.

:class:`PreparedRule` is what the loop needs from a compiled rule: the
functions an evaluation calls, a context factory and the time limit. The work
``Engine.eval_rule`` does on every call — finding the rule's entry, checking
that its context is still usable, building a context — is done once per
batch here; each input then costs one context reset and one call into
generated code. Both an engine (:mod:`pyrego.batch.from_engine`) and a
compiled artifact (:mod:`pyrego.artifact`) give one. (This module imports
only the runtime: a loaded artifact uses it without the compiler.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pyrego.batch.results import OK_FALSE, OK_TRUE, BatchResult, OnError, error_result, ok_result
from pyrego.errors import ArgumentError, EvalError, EvalRecursionError, RegoError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import to_python, valid_text
from pyrego.runtime.helpers import REPLAYED_ERRORS, run_sorted
from pyrego.runtime.values import UNDEF

#: Inputs between two checks whether the program's code took its fast form.
REFRESH_EVERY = 64


@dataclass(slots=True)
class PreparedRule:
    """A rule ready for many evaluations.

    ``fn(ctx)`` is called first; while the value is undefined, each of
    ``more``; then ``default`` is taken (UNDEF: none). ``context(input)``
    makes a fresh evaluation context (its ``cfg.timeout``: the time limit
    per evaluation, seconds or None); ``attach_source(err)`` gives an error
    its policy line; ``refresh()`` gives the entry again once the program's
    code has its final (fast) form, or None while it has not.
    ``fallback(input)``: for a path that is not a rule (base data, part of a
    document), the evaluation itself, done the engine's way.
    """

    fn: Callable[[EvalContext], Any] | None
    more: tuple[Callable[[EvalContext], Any], ...]
    default: Any
    context: Callable[[Any], EvalContext]
    attach_source: Callable[[RegoError], None]
    refresh: Callable[[], tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any] | None] | None = None
    fallback: Callable[[Any], Any] | None = None
    where: Callable[[], Any] | None = None


def _convert(value: Any) -> Any:
    t = type(value)
    if t is bool or t is int or t is float or value is None or value is UNDEF:
        return value
    if t is str:
        return value if value.isascii() else valid_text(value)
    return to_python(value)


def _failure(rule: PreparedRule, exc: BaseException, input: Any) -> RegoError:
    """The error an evaluation for ``input`` that raised ``exc`` reports (as ``eval_rule`` raises it)."""
    from pyrego.runtime.input_faults import input_fault

    fault = input_fault(exc, input)
    if fault is not None:
        return fault
    if isinstance(exc, RegoError):
        rule.attach_source(exc)
        return exc
    if isinstance(exc, RecursionError):
        err: RegoError = EvalRecursionError("evaluation exceeded the maximum depth", rule.where() if rule.where is not None else None)
        rule.attach_source(err)
        return err
    err = EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error")
    err.__cause__ = exc
    return err


def _run_again(rule: PreparedRule, exc: BaseException, input: Any, fns: tuple[Callable[[EvalContext], Any], ...]) -> Any:
    """The value of an evaluation for ``input`` that raised ``exc``, run again
    in OPA's iteration order (see ``sorted_iteration``); else (or if that
    fails too) its error raised."""
    if type(exc) in REPLAYED_ERRORS and _failure(rule, exc, input) is exc:
        try:
            return run_sorted(fns, rule.default, rule.context(input))
        except Exception as again:  # noqa: BLE001 - reported as the first failure is
            exc = again
    failure = _failure(rule, exc, input)
    raise failure from (None if failure is exc else exc)


def eval_prepared(rule: PreparedRule, value: Any) -> Any:
    """One evaluation of ``rule`` for the input ``value``: its value (the
    Python form ``eval_rule`` returns) or ``UNDEF``; raises its error."""
    if rule.fallback is not None:
        return rule.fallback(value)
    fn = rule.fn
    assert fn is not None
    ctx = rule.context(value)
    try:
        result = fn(ctx)
        if result is UNDEF:
            for other in rule.more:
                result = other(ctx)
                if result is not UNDEF:
                    break
            else:
                result = rule.default
        return result if result is True or result is False or result is UNDEF or result is None else _convert(result)
    except Exception as exc:  # noqa: BLE001 - as run_prepared reports it
        result = _run_again(rule, exc, value, (fn, *rule.more))
        return result if result is True or result is False or result is UNDEF or result is None else _convert(result)


def run_prepared(
    rule: PreparedRule, inputs: Iterable[Any], on_error: OnError = "report", convert: Callable[[Any], Any] | None = None
) -> Iterator[BatchResult]:
    """Evaluate ``rule`` for each of ``inputs`` in turn, lazily; one
    :class:`BatchResult` per input, in order. ``on_error="raise"`` raises an
    input's error instead (the inputs after it are not evaluated).
    ``convert``: what a value that is not a boolean or null becomes (default:
    the Python form ``eval_rule`` returns; ``None`` there too)."""
    if on_error not in ("report", "raise"):
        raise ArgumentError(f"on_error must be 'report' or 'raise', not {on_error!r}")
    raising = on_error == "raise"
    fallback = rule.fallback
    if fallback is not None:
        for value in inputs:
            try:
                result = ok_result(fallback(value))
            except RegoError as err:
                if raising:
                    raise
                result = error_result(err)
            yield result
        return
    fn, more, default = rule.fn, rule.more, rule.default
    assert fn is not None
    if convert is None:
        convert = _convert
    refresh = rule.refresh
    monotonic = time.monotonic
    ctx = rule.context(None)
    timeout = ctx.cfg.timeout
    countdown = REFRESH_EVERY
    for value in inputs:
        # As Engine.eval_rule resets a spare context: only the memo and the
        # query state change during an evaluation.
        ctx.input = value
        if ctx.cache:
            ctx.cache = {}
        ctx.q = None
        if timeout is not None:
            ctx.deadline = monotonic() + timeout
        try:
            result = fn(ctx)
            if result is UNDEF:
                for other in more:
                    result = other(ctx)
                    if result is not UNDEF:
                        break
                else:
                    result = default
            if result is True:
                out = OK_TRUE
            elif result is False:
                out = OK_FALSE
            else:
                out = ok_result(result if result is UNDEF or result is None else convert(result))
        except Exception as exc:  # noqa: BLE001 - every failure is the input's result
            ctx = rule.context(None)
            try:
                result = _run_again(rule, exc, value, (fn, *more))
                out = ok_result(result if result is UNDEF or result is None or type(result) is bool else convert(result))
            except RegoError as failure:
                if raising:
                    raise
                yield error_result(failure)
                continue
        yield out
        if refresh is not None:
            countdown -= 1
            if countdown <= 0:
                countdown = REFRESH_EVERY
                entry = refresh()
                if entry is not None:
                    fn, more, default = entry
                    refresh = None


__all__ = ["PreparedRule", "eval_prepared", "run_prepared"]
