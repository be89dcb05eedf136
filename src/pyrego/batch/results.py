"""What a batch evaluation gives for each input: :class:`BatchResult`.

A batch never stops at an input that fails: the error is that input's
result. Errors cross process boundaries as plain data (:func:`error_to_wire`,
:func:`error_from_wire`), since not every error class can be pickled back.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pyrego.errors import EvalError, Location, RegoError
from pyrego.runtime.values import UNDEF

#: What :func:`pyrego.batch.eval_many` does when an input fails: ``"report"``
#: gives that input a result holding the error and goes on; ``"raise"`` raises it.
OnError = Literal["report", "raise"]


class BatchResult(NamedTuple):
    """One input's result: ``value`` (``pyrego.UNDEFINED`` when the rule is
    undefined or the evaluation failed) and ``error`` (None, or the
    :class:`~pyrego.errors.RegoError` that evaluation raised).

    A tuple, so ``value, error = result`` works; ``result.ok`` tells whether
    the evaluation succeeded and :meth:`unwrap` gives the value or raises.
    """

    value: Any
    error: RegoError | None = None

    @property
    def ok(self) -> bool:
        """True when the evaluation raised no error (the value may be undefined)."""
        return self.error is None

    @property
    def defined(self) -> bool:
        """True when the evaluation succeeded with a value (not undefined)."""
        return self.error is None and self.value is not UNDEF

    def unwrap(self) -> Any:
        """The value; raises the error when the evaluation failed."""
        if self.error is not None:
            raise self.error
        return self.value


_new = tuple.__new__

#: The results most decisions are (shared: a result is an immutable tuple).
OK_TRUE: BatchResult = _new(BatchResult, (True, None))
OK_FALSE: BatchResult = _new(BatchResult, (False, None))
OK_UNDEFINED: BatchResult = _new(BatchResult, (UNDEF, None))
OK_NULL: BatchResult = _new(BatchResult, (None, None))


def ok_result(value: Any) -> BatchResult:
    """A successful result (the shared one for true, false, null and undefined)."""
    if value is True:
        return OK_TRUE
    if value is False:
        return OK_FALSE
    if value is UNDEF:
        return OK_UNDEFINED
    if value is None:
        return OK_NULL
    return _new(BatchResult, (value, None))  # type: ignore[no-any-return]


def error_result(error: RegoError) -> BatchResult:
    """A failed result."""
    return _new(BatchResult, (UNDEF, error))  # type: ignore[no-any-return]


Wire = tuple[str, str, str, "tuple[str, int, int] | None", "str | None"]


def error_to_wire(error: RegoError) -> Wire:
    """An error as plain data (class name, code, message, location, source line)."""
    loc = error.location
    where = (loc.file, loc.row, loc.col) if loc is not None else None
    return type(error).__name__, error.code, error.message, where, error.source_line


def error_from_wire(wire: Wire) -> RegoError:
    """The error :func:`error_to_wire` described (of its class where pyrego has
    it and it takes the usual arguments, else a :class:`RegoError` with its code)."""
    import pyrego.errors as errors

    name, code, message, where, source_line = wire
    location = Location(*where) if where is not None else None
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, RegoError):
        try:
            return cls(message, location, code=code, source_line=source_line)
        except TypeError:
            pass
    base = EvalError if code.startswith("eval_") else RegoError
    return base(message, location, code=code, source_line=source_line)


__all__ = ["OK_FALSE", "OK_NULL", "OK_TRUE", "OK_UNDEFINED", "BatchResult", "OnError", "error_from_wire", "error_result", "error_to_wire", "ok_result"]
