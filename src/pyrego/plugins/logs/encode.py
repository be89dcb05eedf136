"""Decision log events: building them, their JSON text, and gzip-compressed batches.

An event is a JSON object with OPA's fields in OPA's order (``EventV1``):
``labels, decision_id, trace_id, span_id, bundles, path, query, input, result,
mapped_result, nd_builtin_cache, erased, masked, error, requested_by,
timestamp, metrics, req_id, request_context``; empty optional fields are left
out as OPA's ``omitempty`` leaves them out.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

#: OPA's field order (Go struct order).
FIELD_ORDER = (
    "labels",
    "decision_id",
    "trace_id",
    "span_id",
    "revision",
    "bundles",
    "path",
    "query",
    "input",
    "result",
    "mapped_result",
    "nd_builtin_cache",
    "erased",
    "masked",
    "error",
    "requested_by",
    "timestamp",
    "metrics",
    "req_id",
    "request_context",
)
#: Fields OPA writes even when empty.
_ALWAYS = ("labels", "decision_id", "timestamp")
#: Fields whose presence (even as null) is meaningful: ``input: null`` is an input.
_PRESENCE = ("input", "result", "mapped_result", "nd_builtin_cache")


def rfc3339_nano(ns: int | None = None) -> str:
    """A UTC time as Go's ``time.RFC3339Nano`` writes it: nanoseconds, trailing zeros
    (and an empty fraction) dropped, ``Z`` for UTC."""
    if ns is None:
        ns = time.time_ns()
    secs, frac = divmod(ns, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs))
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def new_decision_id() -> str:
    """A new decision id (a random UUID, as OPA's)."""
    return str(uuid.uuid4())


def json_ready(value: Any) -> Any:
    """``value`` as plain JSON data: sets (and frozensets) as arrays in a stable
    order, tuples as arrays, objects with non-string keys keyed by their JSON text
    (what ``Engine.eval_rule`` gives back for Rego sets and composite keys),
    decimals as numbers. TypeError for what has no JSON form."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if isinstance(value, dict):
        return {_key(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, frozenset) and type(value).__name__ == "FrozenObject":
        return {_key(k): json_ready(v) for k, v in value}
    if isinstance(value, (set, frozenset)):
        members = [json_ready(v) for v in value]
        return sorted(members, key=lambda m: json.dumps(m, sort_keys=True))
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"no JSON form for a {type(value).__name__}")


def _key(k: Any) -> str:
    if type(k) is str:
        return k
    if type(k) is bool or k is None:
        return json.dumps(k)
    if type(k) is int or type(k) is float:
        return str(k)
    return json.dumps(json_ready(k), sort_keys=True)


def make_decision_event(
    path: str | None = None,
    input: Any = None,
    result: Any = None,
    *,
    has_input: bool | None = None,
    has_result: bool | None = None,
    decision_id: str | None = None,
    query: str | None = None,
    metrics: Mapping[str, Any] | None = None,
    bundles: Mapping[str, Any] | None = None,
    requested_by: str | None = None,
    trace_id: str | None = None,
    span_id: str | None = None,
    req_id: int | None = None,
    nd_builtin_cache: Any = None,
    error: Any = None,
    request_context: Mapping[str, Any] | None = None,
    timestamp: str | None = None,
) -> dict[str, Any]:
    """A decision log event in OPA's shape, for :meth:`DecisionLogger.log`.

    ``path``: the decision's path as OPA logs it (``"bench/allow"``, no
    ``data.``, slashes; a leading ``/`` or ``data/`` is taken off); ``query``
    instead for the Query API. ``input``/``result``: the decision's input and
    value; ``has_input``/``has_result`` say whether there was one (default:
    whether the value is not ``None``: pass ``has_result=False`` for an
    undefined decision, ``has_input=True`` for a ``null`` input). ``bundles``:
    ``{name: revision}`` or ``{name: {"revision": ...}}``. ``metrics``: the
    request's metrics (``timer_rego_query_eval_ns``, ...). ``timestamp``: RFC
    3339 text; now if not given. The labels are the logger's, added by ``log``."""
    event: dict[str, Any] = {"decision_id": decision_id or new_decision_id()}
    if trace_id:
        event["trace_id"] = trace_id
    if span_id:
        event["span_id"] = span_id
    if bundles:
        event["bundles"] = {
            name: ({"revision": info} if isinstance(info, str) else dict(info)) for name, info in bundles.items()
        }
    if path:
        p = path.lstrip("/")
        if p.startswith("data/"):
            p = p[5:]
        elif p == "data":
            p = ""
        event["path"] = p
    if query:
        event["query"] = query
    if (input is not None) if has_input is None else has_input:
        event["input"] = input
    if (result is not None) if has_result is None else has_result:
        event["result"] = result
    if nd_builtin_cache is not None:
        event["nd_builtin_cache"] = nd_builtin_cache
    if error is not None:
        event["error"] = error
    if requested_by:
        event["requested_by"] = requested_by
    event["timestamp"] = timestamp or rfc3339_nano()
    if metrics:
        event["metrics"] = dict(metrics)
    if req_id:
        event["req_id"] = req_id
    if request_context:
        event["request_context"] = dict(request_context)
    return event


def ordered(event: Mapping[str, Any]) -> dict[str, Any]:
    """``event`` with OPA's fields in OPA's order and empty optional ones left out
    (unknown fields follow, in their order)."""
    out: dict[str, Any] = {}
    for key in FIELD_ORDER:
        if key not in event:
            if key in _ALWAYS:
                out[key] = None if key == "labels" else ""
            continue
        value = event[key]
        if key in _ALWAYS or key in _PRESENCE:
            out[key] = value
        elif value is None or value == "" or value == 0 and type(value) is int or value == [] or value == {}:
            continue
        else:
            out[key] = value
    for key, value in event.items():
        if key not in out and key not in FIELD_ORDER:
            out[key] = value
    return out


def encode_event(event: Mapping[str, Any]) -> bytes:
    """The compact JSON text of an event, UTF-8, non-ASCII kept (as Go's encoder
    writes it); values without a JSON form of their own (sets, tuples) as
    :func:`json_ready` gives them."""
    body = ordered(event)
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=json_ready)
    except TypeError:  # (keys json cannot write: tuples, frozen objects)
        text = json.dumps(json_ready(body), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode()


def gzip_array(events: list[bytes]) -> bytes:
    """A gzip-compressed JSON array of the encoded ``events``."""
    return gzip.compress(b"[" + b",".join(events) + b"]", compresslevel=6, mtime=0)


def compressed_size_may_exceed(size: int, limit: int) -> bool:
    """Whether one event of ``size`` bytes might compress past ``limit`` (gzip's
    worst case adds a header and 5 bytes per 16 KiB stored block)."""
    return size + 2 + 32 + 5 * (size // 16384 + 1) > limit


class ChunkBuilder:
    """Packs encoded events into gzip batches of at most ``limit`` compressed bytes.

    Like OPA's encoder it guesses how many uncompressed bytes fit from the
    ratio of the last batch, then checks the compressed size: a batch over
    the limit is halved until it fits, so no upload is ever above the limit. A
    single event over the limit cannot be sent and is returned apart (the
    logger refuses such events before they are buffered)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ratio = 1.0  # uncompressed bytes per compressed byte, learnt from each batch

    def chunks(self, events: list[bytes]) -> tuple[list[tuple[bytes, list[bytes]]], list[bytes]]:
        """``(batches, oversized)``: each batch as ``(gzip bytes, its events)``, in
        the events' order; ``oversized``: the single events over the limit."""
        out: list[tuple[bytes, list[bytes]]] = []
        oversized: list[bytes] = []
        i, n = 0, len(events)
        while i < n:
            budget = max(1.0, self.limit * self.ratio * 0.9)
            j, size = i, 0
            while j < n and (j == i or size + len(events[j]) + 1 <= budget):
                size += len(events[j]) + 1
                j += 1
            data = gzip_array(events[i:j])
            while len(data) > self.limit and j - i > 1:
                j = i + (j - i) // 2
                data = gzip_array(events[i:j])
            if len(data) > self.limit:
                oversized.append(events[i])
                i = j
                continue
            raw = sum(len(e) + 1 for e in events[i:j]) + 1
            self.ratio = max(1.0, raw / max(1, len(data)))
            out.append((data, events[i:j]))
            i = j
        return out, oversized
