"""Decisions over Dask collections: :func:`with_decision` (DataFrame), :func:`bag_decisions` (Bag).

>>> from distributed import Client, LocalCluster
>>> from pyrego.distributed import PolicyPayload
>>> from pyrego.distributed.dask import with_decision
>>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))      # doctest: +SKIP
>>> out = with_decision(ddf, payload, "data.k8s.deny", input_col="doc", client=client)  # doctest: +SKIP

With a ``distributed`` client the payload is installed once on every
worker by a worker plugin (and on workers that join later); the tasks carry
only its digest. Without one (Dask's local schedulers) each task carries the
payload. Each worker process builds it once (see :mod:`pyrego.distributed.payload`).

Importing this module imports dask and pandas.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

import dask.bag as db
import dask.dataframe as dd
import pandas as pd

from pyrego.distributed.payload import PayloadRef, PolicyPayload, evaluator, install
from pyrego.distributed.records import OUTPUT_KINDS, check_columns, json_input, value_input
from pyrego.errors import ArgumentError


class PayloadPlugin:
    """A ``distributed`` worker plugin installing a payload on each worker as it starts."""

    idempotent = True

    def __init__(self, payload: PolicyPayload) -> None:
        self.payload = payload
        self.name = f"pyrego-payload-{payload.digest[:16]}"

    def setup(self, worker: Any) -> None:
        install(self.payload)

    def teardown(self, worker: Any) -> None:
        pass

    def transition(self, *args: Any, **kwargs: Any) -> None:
        pass

    def release_key(self, *args: Any, **kwargs: Any) -> None:
        pass


def ship(payload: PolicyPayload, client: Any = None) -> PayloadRef:
    """Send ``payload`` to the workers of ``client`` (default: the current
    ``distributed`` client, if any) once; the reference tasks carry."""
    if client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            return PayloadRef(payload.digest, payload)
    from distributed import WorkerPlugin

    plugin = type("PyregoPayloadPlugin", (PayloadPlugin, WorkerPlugin), {})(payload)
    client.register_plugin(plugin, name=plugin.name)
    return PayloadRef(payload.digest)


def plain(value: Any) -> Any:
    """A pandas/numpy cell as a plain Python value: numpy scalars and arrays
    become numbers and lists, pandas' missing values (NaN, NA, NaT) null,
    timestamps RFC 3339 text."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, datetime.datetime)):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        import base64

        return base64.b64encode(value).decode("ascii")
    tolist = getattr(value, "tolist", None)  # numpy scalars and arrays
    if tolist is not None:
        return plain(tolist())
    return value


def _cell_input(value: Any) -> Any:
    if isinstance(value, (str, bytes, bytearray)):
        return json_input(value)
    return value_input(plain(value))


def _frame_decisions(
    frame: pd.DataFrame,
    ref: PayloadRef,
    path: str,
    input_col: str | None,
    columns: list[str] | None,
    output: str,
    names: tuple[str, str],
) -> pd.DataFrame:
    ev = evaluator(ref.resolve(), path)
    if input_col is not None:
        inputs = [_cell_input(v) for v in frame[input_col].tolist()]
    else:
        inputs = [value_input(plain(row)) for row in frame[columns].to_dict("records")]
    decisions, codes, messages = ev.decisions(inputs, output)
    out = frame.copy()
    out[names[0]] = pd.Series(decisions, index=frame.index, dtype=object if output == "json" else "boolean")
    out[names[1]] = pd.Series(
        [None if c is None else {"code": c, "message": m} for c, m in zip(codes, messages, strict=True)],
        index=frame.index,
        dtype=object,
    )
    return out


def with_decision(
    ddf: dd.DataFrame,
    payload: PolicyPayload,
    path: str,
    *,
    input_col: str | None = None,
    input_cols: list[str] | None = None,
    output_col: str = "decision",
    error_col: str = "decision_error",
    output: str = "json",
    timeout: float | None = None,
    client: Any = None,
) -> dd.DataFrame:
    """``ddf`` with the decision of ``path`` for each row and its error (``map_partitions``).

    As :func:`pyrego.distributed.spark.with_decision`: the input is
    ``input_col`` (text read as JSON, a dict/list cell as the value),
    an object of ``input_cols``, or of the whole row; ``output_col`` holds
    the JSON text (``output="json"``) or a nullable boolean
    (``output="boolean"``), None when undefined; ``error_col`` holds None or
    ``{"code": ..., "message": ...}``. In a row, pandas' missing values
    (NaN, NA, NaT) read as null."""
    names = list(ddf.columns)
    columns = check_columns(names, input_col, input_cols, output_col, error_col, output)
    if timeout is not None:
        payload = payload.with_timeout(timeout)
    ref = ship(payload, client)
    meta = ddf._meta.copy()
    meta[output_col] = pd.Series([], dtype=object if output == "json" else "boolean")
    meta[error_col] = pd.Series([], dtype=object)
    return ddf.map_partitions(
        _frame_decisions, ref, path, input_col, columns, output, (output_col, error_col), meta=meta
    )


def _item_input(value: Any) -> Any:
    if isinstance(value, (str, bytes, bytearray)):
        return json_input(value)
    return value_input(value)


def _bag_partition(items: Any, ref: PayloadRef, path: str, output: str) -> list[dict[str, Any]]:
    ev = evaluator(ref.resolve(), path)
    decisions, codes, messages = ev.decisions([_item_input(v) for v in items], output)
    return [
        {"decision": d, "error": None if c is None else {"code": c, "message": m}}
        for d, c, m in zip(decisions, codes, messages, strict=True)
    ]


def bag_decisions(
    bag: db.Bag,
    payload: PolicyPayload,
    path: str,
    *,
    output: str = "json",
    timeout: float | None = None,
    client: Any = None,
) -> db.Bag:
    """A bag of ``{"decision": ..., "error": ...}``, one per item of ``bag`` and in its order.

    An item is an input document: JSON text, or a Python value (dicts,
    lists, numbers...: a NaN is that item's error ``invalid_input``);
    ``decision`` and ``error`` are as in :func:`with_decision`."""
    if output not in OUTPUT_KINDS:
        raise ArgumentError(f"output must be one of {OUTPUT_KINDS}, not {output!r}")
    if timeout is not None:
        payload = payload.with_timeout(timeout)
    ref = ship(payload, client)
    return bag.map_partitions(_bag_partition, ref, path, output)


__all__ = ["PayloadPlugin", "bag_decisions", "plain", "ship", "with_decision"]
