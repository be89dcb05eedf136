"""Arrow columns (Spark's typed rows, as ``mapInArrow`` gives them) to plain Python inputs.

``pyarrow``'s ``to_pylist`` is exact for strings, numbers, booleans, structs
(dicts) and lists; :func:`column_inputs` fixes what it is not: maps (pairs
become an object), dates and timestamps (RFC 3339 text), binary (base64, as
Go's JSON writes bytes). No Spark type reaches an input: only dicts, lists,
strings, numbers, booleans and None. Imported only by the Spark front end.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from pyrego.distributed.records import BadInput, json_input, value_input

Convert = Callable[[Any], Any]


def _timestamp(value: datetime.datetime) -> str:
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _converter(t: pa.DataType) -> Convert | None:
    """What turns ``to_pylist``'s value of type ``t`` into a plain value (None: nothing to do)."""
    if pa.types.is_struct(t):
        fields = [(t.field(i).name, _converter(t.field(i).type)) for i in range(t.num_fields)]
        if all(c is None for _, c in fields):
            return None
        convs = [(n, c) for n, c in fields if c is not None]

        def struct(d: Any) -> Any:
            if d is None:
                return None
            for name, c in convs:
                d[name] = c(d[name])
            return d

        return struct
    if pa.types.is_map(t):
        kc, ic = _converter(t.key_type), _converter(t.item_type)

        def mapping(pairs: Any) -> Any:
            if pairs is None:
                return None
            out: dict[Any, Any] = {}
            for k, v in pairs:
                k = kc(k) if kc is not None else k
                if isinstance(k, (dict, list)):
                    raise ValueError("a map key that is a struct or an array is not supported")
                out[k] = ic(v) if ic is not None else v
            return out

        return mapping
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        ec = _converter(t.value_type)
        if ec is None:
            return None
        return lambda xs: None if xs is None else [ec(x) for x in xs]
    if pa.types.is_timestamp(t):
        return lambda v: None if v is None else _timestamp(v)
    if pa.types.is_date(t) or pa.types.is_time(t):
        return lambda v: None if v is None else v.isoformat()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return lambda v: None if v is None else base64.b64encode(v).decode("ascii")
    if pa.types.is_duration(t):
        return lambda v: None if v is None else v.total_seconds()
    return None


def column_inputs(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """The inputs of a column: JSON text read as JSON, any other type converted as a value."""
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [json_input(s) for s in column.to_pylist()]
    conv = _converter(t)
    out: list[Any] = []
    for v in column.to_pylist():
        if conv is not None and v is not None:
            try:
                v = conv(v)
            except (ValueError, TypeError, OverflowError) as exc:
                out.append(BadInput("invalid_input", str(exc)))
                continue
        out.append(value_input(v))
    return out


def row_inputs(batch: pa.RecordBatch, names: list[str]) -> list[Any]:
    """Each row of ``batch`` as an object of the columns ``names``."""
    struct = pa.StructArray.from_arrays([batch.column(n) for n in names], names=names)
    return column_inputs(struct)


__all__ = ["column_inputs", "row_inputs"]
