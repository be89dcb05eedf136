"""The exceptions a builtin raises (see :mod:`pyrego.builtins.registry`).

They live below both the runtime and the builtins: the runtime catches them
around builtin calls and raises them from number conversions and deadline
checks, without importing the builtins.
"""

from __future__ import annotations

__all__ = ["BuiltinCancel", "BuiltinError", "BuiltinHalt", "OperandTypeError"]


class BuiltinError(Exception):
    """A builtin failed; the message is OPA's text without the builtin name."""

    code = "eval_builtin_error"


class OperandTypeError(BuiltinError):
    """An argument of the wrong type."""

    code = "eval_type_error"


class BuiltinHalt(Exception):
    """An error that always ends the evaluation, even without strict builtin errors
    (OPA's ``Halt``: e.g. ``http.send`` with ``raise_error`` false never halts,
    but some builtins do)."""

    def __init__(self, message: str, code: str = "eval_builtin_error") -> None:
        super().__init__(message)
        self.code = code


class BuiltinCancel(BuiltinHalt):
    """The evaluation's deadline passed while a builtin worked: the evaluation
    ends with :class:`pyrego.EvalCancelError`."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "eval_cancel_error")
