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
    # Whether a parse error is printed with OPA's detail lines (the source line
    # and a caret): not those OPA makes after parsing, as its v1 rule checks.
    detailed = True

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
        # (line, byte index) worked out from the whole source text, when known
        self.full_detail: tuple[str, int] | None = None
        # The text written where an evaluation error in a query happened (a
        # query has no file name: OPA names the place by its text).
        self.location_text: str | None = None
        super().__init__(self.format())

    def format(self) -> str:
        """Return OPA's text for the error, byte for byte.

        ``file:row: code: message`` (``row:col: code: message`` when there is
        no file name, or the text written there for an evaluation error in a
        query; the code and message alone without a location), then,
        for a parse error, OPA's detail lines: the offending source line
        without its leading tabs and a caret under the offending byte."""
        loc = self.location
        if loc is None:
            return f"{self.code}: {self.message}"
        if loc.file:
            prefix = f"{loc.file}:{loc.row}"
        else:
            prefix = self.location_text if self.location_text else f"{loc.row}:{loc.col}"
        text = f"{prefix}: {self.code}: {self.message}"
        detail = self.detail()
        if detail is not None:
            shown, caret = detail_lines(*detail)
            text += f"\n\t{shown}\n\t{caret}"
        return text

    def detail(self) -> tuple[str, int] | None:
        """OPA's parse error detail: the source line and the byte index of the
        error in it (None for other errors, which OPA prints without one)."""
        if self.code != "rego_parse_error" or self.source_line is None or self.location is None or not self.detailed:
            return None
        if self.full_detail is not None:
            return self.full_detail
        line = self.source_line.rstrip("\n").rstrip("\r")
        return line, _back_to_text(line, _byte_index(line, self.location.col))

    def attach_text(self, text: str) -> None:
        """Give a parse error the whole text it came from, so that its detail is
        worked out as OPA's parser does (from the byte offset in the file,
        moving back over whitespace, across lines if need be)."""
        loc = self.location
        if loc is None or self.code != "rego_parse_error":
            return
        self.full_detail = parser_detail(text, loc.row, loc.col)
        if self.source_line is None:
            self.source_line = self.full_detail[0]
        self.args = (self.format(),)

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


#: The bytes Go's unicode.IsSpace takes for spaces when OPA reads a byte as a rune.
_GO_SPACE_BYTES = frozenset(b"\t\n\v\f\r \x85\xa0")


def _byte_index(line: str, col: int) -> int:
    """The UTF-8 byte index in ``line`` of 1-based character column ``col``."""
    return len(line[: max(col - 1, 0)].encode("utf-8", "surrogatepass"))


def _back_to_text(line: str, idx: int) -> int:
    """OPA moves an error's offset back to the nearest non-space byte (here
    within the line: the whole text is not known)."""
    data = line.encode("utf-8", "surrogatepass")
    if not data:
        return 0
    idx = min(idx, len(data) - 1)
    while idx > 0 and data[idx] in _GO_SPACE_BYTES:
        idx -= 1
    return idx


def parser_detail(text: str, row: int, col: int) -> tuple[str, int]:
    """OPA's ParserErrorDetail for an error at ``row``/``col`` of ``text``:
    the line holding the nearest non-space byte at or before the error's
    offset, and that byte's index in the line."""
    data = text.encode("utf-8", "surrogatepass")
    lines = text.split("\n")
    offset = sum(len(x.encode("utf-8", "surrogatepass")) + 1 for x in lines[: max(row - 1, 0)])
    if 0 < row <= len(lines):
        offset += _byte_index(lines[row - 1], col)
    if not data:
        return "", 0
    offset = min(max(offset, 0), len(data) - 1)
    while offset > 0 and data[offset] in _GO_SPACE_BYTES:
        offset -= 1
    begin = offset
    while begin > 0 and data[begin] not in (0x0A, 0x0D):
        begin -= 1
    if data[begin] in (0x0A, 0x0D):
        begin += 1
    end = offset
    while end < len(data) and data[end] not in (0x0A, 0x0D):
        end += 1
    begin = min(begin, end)
    return data[begin:end].decode("utf-8", "replace"), offset - begin


def detail_lines(line: str, idx: int) -> tuple[str, str]:
    """OPA's two detail lines for a parse error: ``line`` without its leading
    tabs (spaces are kept), and a caret under byte ``idx`` of ``line``."""
    shown = line.lstrip("\t")
    indent = max(idx - (len(line) - len(shown)), 0)
    return shown, " " * indent + "^"


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
