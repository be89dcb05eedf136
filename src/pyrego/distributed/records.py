"""Evaluating a rule over a partition of records: :class:`RecordEvaluator`.

The code every cluster front end shares (Spark, Dask): inputs arrive as a
list of plain Python values (decoded from JSON text, or converted from a
typed row), and leave as three parallel lists — the decision (JSON text as
OPA writes it, or a boolean), the error code and the error message. A record
that fails (bad input, an evaluation error, its time limit) gets its error
and the others go on. Neither Spark nor Dask is imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pyrego.errors import ArgumentError, EvalError, RegoError
from pyrego.runtime.convert import dumps, from_python, loads, result_json_value
from pyrego.runtime.values import UNDEF

#: The code of a record whose input is not a JSON document (or is null).
INVALID_INPUT = "invalid_input"
#: The code of a record whose decision is not a boolean, for a boolean output column.
NOT_BOOLEAN = "decision_not_boolean"

#: How decisions are written: JSON text, or a boolean (null when undefined).
OUTPUT_KINDS = ("json", "boolean")


class BadInput:
    """A record whose input could not be read: its error in place of its input."""

    __slots__ = ("code", "message")

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message


def check_columns(
    names: list[str], input_col: str | None, input_cols: list[str] | None, output_col: str, error_col: str, output: str
) -> list[str] | None:
    """Refuse arguments a front end cannot use (an unknown output kind, both
    input forms, a missing input column, an output column already there);
    return the columns whose values make each record's input, None for the
    one column ``input_col``."""
    if output not in OUTPUT_KINDS:
        raise ArgumentError(f"output must be one of {OUTPUT_KINDS}, not {output!r}")
    if input_col is not None and input_cols is not None:
        raise ArgumentError("give input_col or input_cols, not both")
    for name in [input_col] if input_col is not None else input_cols or []:
        if name not in names:
            raise ArgumentError(f"no column {name!r} in the DataFrame")
    for name in (output_col, error_col):
        if name in names:
            raise ArgumentError(f"the DataFrame already has a column {name!r}")
    return input_cols if input_cols is not None else (None if input_col is not None else names)


def json_input(text: Any) -> Any:
    """A record's input from JSON text (str or bytes), read as OPA reads JSON
    (exact big numbers); a :class:`BadInput` when it is null or not JSON."""
    if isinstance(text, bytearray):
        text = bytes(text)
    if not isinstance(text, (str, bytes)):
        if text is None or text != text or str(text) == "<NA>":  # (pandas' missing values: NaN, NA)
            return BadInput(INVALID_INPUT, "the input is null")
        return BadInput(INVALID_INPUT, f"the input is not JSON text but {type(text).__name__}")
    try:
        return loads(text, what="input JSON")
    except RegoError as err:
        return BadInput(INVALID_INPUT, err.message)


def value_input(value: Any) -> Any:
    """A record's input from a Python value (dicts, lists, numbers, ...), checked
    as ``Engine.add_data`` checks data; a :class:`BadInput` when it is not a Rego value."""
    if value is None:
        return BadInput(INVALID_INPUT, "the input is null")
    try:
        return from_python(value)
    except RegoError as err:
        return BadInput(INVALID_INPUT, err.message)
    except RecursionError:
        return BadInput(INVALID_INPUT, "input nested too deeply")


def _internal(exc: BaseException) -> RegoError:
    return EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error")


class RecordEvaluator:
    """One rule of a compiled policy, evaluated record by record.

    ``target``: an :class:`~pyrego.Engine` or a loaded artifact (anything
    with ``eval_rule(path, input=...)``). When :mod:`pyrego.batch` is
    available the rule is prepared once (:func:`pyrego.batch.prepare`) and
    each record costs one call into the generated code; otherwise each
    record is one ``eval_rule`` call. Both give the values ``eval_rule`` gives.
    """

    def __init__(self, target: Any, path: str) -> None:
        self.target = target
        self.path = path
        self._prepared: Any = None
        self._run: Callable[..., Iterator[Any]] | None = None
        self._raw = False  # values in the runtime's form (else in eval_rule's Python form)
        try:
            from pyrego.batch import prepare  # type: ignore[import-not-found,unused-ignore]
            from pyrego.batch.prepared import run_prepared  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            pass
        else:
            self._prepared = prepare(target, path)
            self._run = run_prepared
            # (A path that is not a rule is evaluated the engine's way: its values come in Python form.)
            self._raw = getattr(self._prepared, "fallback", None) is None
        # (A first evaluation resolves the rule: errors of the path itself surface here, on the worker.)

    @property
    def prepared(self) -> bool:
        """True when records run through :mod:`pyrego.batch`'s prepared loop."""
        return self._run is not None

    def values(self, inputs: list[Any]) -> list[tuple[Any, RegoError | BadInput | None]]:
        """``(value, error)`` per input (a :class:`BadInput` input gives its own error).

        Values are in the runtime's form or in ``eval_rule``'s Python form:
        write them with :meth:`text`."""
        good = [v for v in inputs if type(v) is not BadInput]
        if self._run is not None:
            results: Iterator[Any] = iter(self._run(self._prepared, good, "report", _identity))
        else:
            results = self._loop(good)
        out: list[tuple[Any, RegoError | BadInput | None]] = []
        for v in inputs:
            if type(v) is BadInput:
                out.append((UNDEF, v))
            else:
                value, err = next(results)
                out.append((value, err))
        return out

    def _loop(self, inputs: list[Any]) -> Iterator[tuple[Any, RegoError | None]]:
        eval_rule = self.target.eval_rule
        path = self.path
        for doc in inputs:
            try:
                yield eval_rule(path, input=doc), None
            except RegoError as err:
                yield UNDEF, err
            except Exception as exc:  # noqa: BLE001 - a record's failure is its result
                yield UNDEF, _internal(exc)

    def text(self, value: Any) -> str:
        """The JSON text of a value :meth:`values` gave (OPA's form: sets as sorted arrays, exact numbers)."""
        if self._raw:
            return dumps(result_json_value(value))
        return dumps(from_python(value))

    def decisions(
        self, inputs: list[Any], output: str = "json"
    ) -> tuple[list[Any], list[str | None], list[str | None]]:
        """Decisions, error codes and error messages of ``inputs`` (three lists as long as it).

        ``output="json"``: each decision is its JSON text (None when undefined
        or failed); ``"boolean"``: True/False (None when undefined or failed;
        a value that is not a boolean is the error ``decision_not_boolean``)."""
        if output not in OUTPUT_KINDS:
            raise ValueError(f"output must be one of {OUTPUT_KINDS}, not {output!r}")
        decisions: list[Any] = []
        codes: list[str | None] = []
        messages: list[str | None] = []
        as_json = output == "json"
        for value, err in self.values(inputs):
            if err is None and value is not UNDEF:
                if as_json:
                    try:
                        value = self.text(value)
                    except RegoError as exc:
                        err = exc
                    except RecursionError:
                        err = EvalError("value nested too deeply to write as JSON", code="eval_internal_error")
                elif type(value) is not bool:
                    err = BadInput(NOT_BOOLEAN, f"the decision is not a boolean: {self._short(value)}")
            if err is not None:
                decisions.append(None)
                codes.append(err.code)
                messages.append(err.message)
            else:
                decisions.append(None if value is UNDEF else value)
                codes.append(None)
                messages.append(None)
        return decisions, codes, messages

    def _short(self, value: Any) -> str:
        try:
            text = self.text(value)
        except Exception:  # noqa: BLE001 - only for a message
            text = repr(value)
        return text if len(text) <= 200 else text[:200] + "..."


def _identity(value: Any) -> Any:
    return value


__all__ = ["INVALID_INPUT", "NOT_BOOLEAN", "OUTPUT_KINDS", "BadInput", "RecordEvaluator", "json_input", "value_input"]
