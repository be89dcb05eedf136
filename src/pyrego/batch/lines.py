"""JSON Lines in, JSON Lines out: one input document per line, one result per line.

Each output line is the shape of OPA's Data API response for that input:
``{"result": VALUE}``, ``{}`` when the rule is undefined, or
``{"error": {"code": ..., "message": ..., "location": {...}}}`` when the
evaluation failed or the line is not JSON (code ``invalid_input``, with the
line number in the message). Blank lines are skipped (no output line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pyrego.batch.prepared import PreparedRule, run_prepared
from pyrego.errors import RegoError
from pyrego.runtime.convert import dumps, loads, result_json_value
from pyrego.runtime.values import UNDEF

#: The code of a line that is not a JSON document.
INVALID_INPUT = "invalid_input"

_UNDEFINED_LINE = "{}"
_MISSING = object()


def _identity(value: Any) -> Any:
    return value


def error_line(code: str, message: str, location: Any = None) -> str:
    """The output line of a failed input."""
    error: dict[str, Any] = {"code": code, "message": message}
    if location is not None:
        error["location"] = {"file": location.file, "row": location.row, "col": location.col}
    return dumps({"error": error})


def _error_text(err: RegoError) -> str:
    return error_line(err.code, err.message, err.location)


def eval_line_chunk(rule: PreparedRule, lines: list[str | bytes], first_line: int = 1) -> list[tuple[bool, str]]:
    """``(ok, output line)`` for each non-blank line of ``lines`` (``first_line``:
    the number of ``lines[0]`` in its file, for messages)."""
    parsed: list[Any] = []
    bad: dict[int, str] = {}
    for number, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        try:
            parsed.append(loads(line, what="input JSON"))
        except RegoError as err:
            bad[len(parsed)] = error_line(INVALID_INPUT, f"line {number}: {err.message}")
            parsed.append(_MISSING)
    good = [v for v in parsed if v is not _MISSING] if bad else parsed
    results = run_prepared(rule, good, convert=_identity)
    out: list[tuple[bool, str]] = []
    for i in range(len(parsed)):
        text = bad.get(i) if bad else None
        if text is not None:
            out.append((False, text))
            continue
        value, failure = next(results)
        if failure is not None:
            out.append((False, _error_text(failure)))
        elif value is UNDEF:
            out.append((True, _UNDEFINED_LINE))
        else:
            try:
                out.append((True, dumps({"result": result_json_value(value)})))
            except RegoError as exc:
                out.append((False, _error_text(exc)))
            except RecursionError:
                out.append((False, error_line("eval_internal_error", "value nested too deeply to convert")))
    return out


def eval_lines_prepared(rule: PreparedRule, lines: Iterable[str | bytes], chunk_size: int = 1000) -> Iterator[tuple[bool, str]]:
    """:func:`eval_line_chunk` over ``lines`` in chunks, lazily."""
    chunk: list[str | bytes] = []
    first = 1
    for line in lines:
        chunk.append(line)
        if len(chunk) >= chunk_size:
            yield from eval_line_chunk(rule, chunk, first)
            first += len(chunk)
            chunk = []
    if chunk:
        yield from eval_line_chunk(rule, chunk, first)


__all__ = ["INVALID_INPUT", "error_line", "eval_line_chunk", "eval_lines_prepared"]
