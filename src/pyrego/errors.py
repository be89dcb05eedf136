"""Error types raised by pyrego.

Every error a user can see is a :class:`RegoError` carrying OPA's error code
(``rego_parse_error``, ``eval_conflict_error``, ...), a message and, where the
error comes from policy text, the file, row and column, plus a caret snippet of
the offending source line.
"""

from __future__ import annotations

from typing import NamedTuple


class Location(NamedTuple):
    """A position in policy text. ``row`` and ``col`` count from 1.

    A named tuple because the parser makes one per token and a tuple is much
    cheaper to make than a frozen dataclass; it compares and hashes as that
    dataclass did: equal only to another Location, unordered.
    """

    file: str
    row: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.row}:{self.col}"

    # Compared to anything else, a tuple's own methods would see a plain tuple.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is Location:
            return tuple.__eq__(self, other)  # type: ignore[arg-type]
        return False if isinstance(other, tuple) else NotImplemented

    def __ne__(self, other: object) -> bool:
        if other.__class__ is Location:
            return tuple.__ne__(self, other)  # type: ignore[arg-type]
        return True if isinstance(other, tuple) else NotImplemented

    def __lt__(self, other: object) -> bool:
        return NotImplemented

    def __le__(self, other: object) -> bool:
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        return NotImplemented


# the hash of the tuple of the fields, as the frozen dataclass had (defining
# __eq__ above dropped it)
Location.__hash__ = tuple.__hash__  # type: ignore[assignment]


class RegoError(Exception):
    """Base class of every error pyrego raises on bad policies, data or queries."""

    code: str = "rego_error"

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        *,
        code: str | None = None,
        source_line: str | None = None,
    ) -> None:
        if code is not None:
            self.code = code
        self.message = message
        self.location = location
        self.source_line = source_line
        super().__init__(self.format())

    def format(self) -> str:
        """Return the OPA-style text: ``file:row: code: message`` and a caret line."""
        if self.location is None:
            return f"{self.code}: {self.message}"
        text = f"{self.location}: {self.code}: {self.message}"
        if self.source_line is not None:
            line = self.source_line.rstrip("\n")
            text += f"\n\t{line}\n\t{' ' * (self.location.col - 1)}^"
        return text

    def to_dict(self) -> dict[str, object]:
        """The error as OPA reports it in JSON output."""
        out: dict[str, object] = {"code": self.code, "message": self.message}
        if self.location is not None:
            out["location"] = {
                "file": self.location.file,
                "row": self.location.row,
                "col": self.location.col,
            }
        return out


class RegoParseError(RegoError):
    """Policy or query text that is not valid Rego."""

    code = "rego_parse_error"


class RegoCompileError(RegoError):
    """A policy that parses but cannot be compiled (static errors)."""

    code = "rego_compile_error"


class RegoUnsafeVarError(RegoCompileError):
    """A variable that no expression in its body binds."""

    code = "rego_unsafe_var_error"


class RegoRecursionError(RegoCompileError):
    """Rules that depend on themselves."""

    code = "rego_recursion_error"


class RegoTypeError(RegoCompileError):
    """A static type error (for example a builtin called with the wrong arity)."""

    code = "rego_type_error"


class EvalError(RegoError):
    """An error raised while evaluating a query."""

    code = "eval_error"


class EvalConflictError(EvalError):
    """A complete rule or function produced two different values, or object keys clash."""

    code = "eval_conflict_error"


class EvalTypeError(EvalError):
    """A value of the wrong type reached an operation that cannot take it."""

    code = "eval_type_error"


class EvalBuiltinError(EvalError):
    """A builtin failed (raised only with strict builtin errors, or for hard failures)."""

    code = "eval_builtin_error"


class EvalCancelError(EvalError):
    """The evaluation ran past its time limit."""

    code = "eval_cancel_error"


class EvalRecursionError(EvalError):
    """The evaluation went deeper than the recursion limit."""

    code = "eval_recursion_error"


class ArgumentError(RegoError, ValueError):
    """An API call got an argument of the wrong kind (a rule path that is not a ref, a timeout that is not a number)."""

    code = "rego_argument_error"


class DataError(RegoError):
    """Bad data or input documents (malformed JSON/YAML, conflicting merges)."""

    code = "rego_data_error"


__all__ = [
    "Location",
    "RegoError",
    "ArgumentError",
    "RegoParseError",
    "RegoCompileError",
    "RegoUnsafeVarError",
    "RegoRecursionError",
    "RegoTypeError",
    "EvalError",
    "EvalConflictError",
    "EvalTypeError",
    "EvalBuiltinError",
    "EvalCancelError",
    "EvalRecursionError",
    "DataError",
]
