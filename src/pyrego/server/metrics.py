"""OPA's request duration metric, ``http_request_duration_seconds{code,handler,method}``.

A Prometheus collector of its own rather than ``prometheus_client.Histogram``:
one request costs a bucket search and two additions (the client's histogram
costs five calls and two locks, a noticeable part of a small decision's
request). Served by ``GET /metrics`` in Prometheus' text format, as OPA's
(buckets, ``_count`` and ``_sum``; no ``_created`` series, which OPA's Go
client does not write either).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

NAME = "http_request_duration_seconds"
HELP = "A histogram of duration for requests."
LABELS = ["code", "handler", "method"]


class DurationHistogram:
    """Counts by ``(code, handler, method)``: one per bucket (``le`` each bound, then ``+Inf``) and the sum."""

    def __init__(self, buckets: Sequence[float]) -> None:
        self.bounds = list(buckets)
        self.series: dict[tuple[int, str, str], list[float]] = {}
        self.lock = threading.Lock()

    def observe(self, status: int, handler: str, method: str, seconds: float) -> None:
        """Count one request of ``seconds``."""
        key = (status, handler, method)
        counts = self.series.get(key)
        if counts is None:
            with self.lock:
                counts = self.series.setdefault(key, [0] * (len(self.bounds) + 1) + [0.0])
        i = bisect_left(self.bounds, seconds)  # (the first bound >= seconds: Prometheus' "le")
        with self.lock:
            counts[i] += 1
            counts[-1] += seconds

    def describe(self) -> list[Any]:
        from prometheus_client.core import HistogramMetricFamily

        return [HistogramMetricFamily(NAME, HELP, labels=LABELS)]

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import HistogramMetricFamily
        from prometheus_client.utils import floatToGoString

        family = HistogramMetricFamily(NAME, HELP, labels=LABELS)
        with self.lock:
            series = [(k, list(v)) for k, v in self.series.items()]  # (in order of first use, as the client's)
        for (status, handler, method), counts in series:
            total = 0.0
            buckets = []
            for bound, n in zip([*self.bounds, float("inf")], counts[:-1]):
                total += n
                buckets.append((floatToGoString(bound), total))
            family.add_metric([str(status), handler, method], buckets, counts[-1])
        yield family
