"""Decisions as a column of a Spark DataFrame: :func:`with_decision`.

>>> from pyrego.distributed import PolicyPayload
>>> from pyrego.distributed.spark import with_decision
>>> payload = PolicyPayload.from_files(["policies/"])                       # doctest: +SKIP
>>> out = with_decision(df, payload, "data.k8s.deny", input_col="doc")      # doctest: +SKIP

The payload is sent to the executors once, as a broadcast variable; each
executor's Python worker builds (compiles, or loads the artifact) once per
payload and keeps it for every task it runs after (see
:mod:`pyrego.distributed.payload`). Records are evaluated in Arrow batches
(``mapInArrow``, or ``mapInPandas`` with ``mode="pandas"``).

Importing this module imports pyspark and pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from pyrego.distributed.arrow import column_inputs, row_inputs
from pyrego.distributed.payload import PolicyPayload, evaluator
from pyrego.distributed.records import check_columns
from pyrego.errors import ArgumentError

#: The type of the error column: null, or the record's error code and message.
ERROR_TYPE = StructType([StructField("code", StringType(), False), StructField("message", StringType(), True)])
_ARROW_ERROR = pa.struct([pa.field("code", pa.string(), nullable=False), pa.field("message", pa.string())])
MODES = ("arrow", "pandas")


def with_decision(
    df: DataFrame,
    payload: PolicyPayload,
    path: str,
    *,
    input_col: str | None = None,
    input_cols: list[str] | None = None,
    output_col: str = "decision",
    error_col: str = "decision_error",
    output: str = "json",
    timeout: float | None = None,
    mode: str = "arrow",
) -> DataFrame:
    """``df`` with two more columns: the decision of ``path`` for each row, and its error.

    The input of a row is, with ``input_col``, that column: a string column
    is read as JSON text, any other type (struct, array, map, number...) as
    the value it holds; with ``input_cols``, an object of those columns;
    with neither, an object of every column of the row.

    ``output="json"``: ``output_col`` is a string column holding the
    decision's JSON text as OPA writes it (sets as sorted arrays, numbers
    exactly as computed), null when the rule is undefined; ``"boolean"``: a
    boolean column (null when undefined; a value that is not a boolean is
    the record's error ``decision_not_boolean``).

    ``error_col``: null, or a struct ``(code, message)`` when the record
    failed (``invalid_input`` for an input that is not JSON, an evaluation
    error, ``eval_cancel_error`` past ``timeout`` seconds): a failing record
    never stops the job. ``mode``: ``"arrow"`` (``mapInArrow``, the
    default: faster) or ``"pandas"`` (``mapInPandas``, for a JSON text
    ``input_col`` only).
    """
    if not isinstance(payload, PolicyPayload):
        raise ArgumentError(f"payload must be a PolicyPayload, not {type(payload).__name__}")
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, not {mode!r}")
    names = list(df.columns)
    columns = check_columns(names, input_col, input_cols, output_col, error_col, output)
    if timeout is not None:
        payload = payload.with_timeout(timeout)
    shipped = _ship(df, payload)
    out_type = StringType() if output == "json" else BooleanType()
    schema = StructType(
        [*df.schema.fields, StructField(output_col, out_type, True), StructField(error_col, ERROR_TYPE, True)]
    )
    job = _Job(shipped, path, input_col, columns, output, (output_col, error_col))
    if mode == "arrow":
        return df.mapInArrow(job.arrow, schema)
    if input_col is None or not isinstance(df.schema[input_col].dataType, StringType):
        raise ArgumentError('mode="pandas" reads a JSON text column (input_col); typed inputs use mode="arrow"')
    return df.mapInPandas(job.pandas, schema)


def _ship(df: DataFrame, payload: PolicyPayload) -> Any:
    """A broadcast variable of the payload (sent once to each executor), or the
    payload itself where the session has no SparkContext (Spark Connect)."""
    try:
        sc = df.sparkSession.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect: the payload travels with the function
        return payload
    return sc.broadcast(payload)


class _Job:
    """The function each task runs (pickled with its broadcast handle, not the payload)."""

    def __init__(
        self,
        shipped: Any,
        path: str,
        input_col: str | None,
        columns: list[str] | None,
        output: str,
        names: tuple[str, str],
    ) -> None:
        self.shipped = shipped
        self.path = path
        self.input_col = input_col
        self.columns = columns
        self.output = output
        self.names = names

    def _payload(self) -> PolicyPayload:
        shipped = self.shipped
        return shipped if isinstance(shipped, PolicyPayload) else shipped.value  # type: ignore[no-any-return]

    def _batch(self, batch: pa.RecordBatch) -> tuple[pa.Array, pa.Array]:
        ev = evaluator(self._payload(), self.path)
        if self.input_col is not None:
            inputs = column_inputs(batch.column(self.input_col))
        else:
            assert self.columns is not None
            inputs = row_inputs(batch, self.columns)
        decisions, codes, messages = ev.decisions(inputs, self.output)
        out = pa.array(decisions, pa.string() if self.output == "json" else pa.bool_())
        mask = pa.array([c is None for c in codes], pa.bool_())
        errors = pa.StructArray.from_arrays(
            [pa.array([c or "" for c in codes], pa.string()), pa.array(messages, pa.string())],
            fields=list(_ARROW_ERROR),
            mask=mask,
        )
        return out, errors

    def arrow(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out, errors = self._batch(batch)
            yield pa.RecordBatch.from_arrays([*batch.columns, out, errors], names=[*batch.schema.names, *self.names])

    def pandas(self, frames: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        from pyrego.distributed.records import json_input

        assert self.input_col is not None
        for frame in frames:
            ev = evaluator(self._payload(), self.path)
            decisions, codes, messages = ev.decisions(
                [json_input(s) for s in frame[self.input_col].tolist()], self.output
            )
            result = frame.copy()
            result[self.names[0]] = pd.Series(decisions, index=frame.index, dtype=object)
            result[self.names[1]] = pd.Series(
                [None if c is None else {"code": c, "message": m} for c, m in zip(codes, messages, strict=True)],
                index=frame.index,
                dtype=object,
            )
            yield result


__all__ = ["ERROR_TYPE", "MODES", "with_decision"]
