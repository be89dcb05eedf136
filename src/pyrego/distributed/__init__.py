"""Decisions over many documents on a cluster: Spark and Dask front ends.

>>> from pyrego.distributed import PolicyPayload
>>> payload = PolicyPayload.from_files(["policies/"], data={"allowed": ["nginx"]})  # doctest: +SKIP

- :mod:`pyrego.distributed.spark`: :func:`~pyrego.distributed.spark.with_decision`
  adds a decision column (and an error column) to a Spark DataFrame;
- :mod:`pyrego.distributed.dask`: the same for a Dask DataFrame, and
  decisions for a Dask Bag.

A :class:`PolicyPayload` is what travels to the workers: policy texts and
data, or a compiled artifact. Each worker process builds it once and keeps
it. This package imports neither Spark nor Dask: its ``spark`` and ``dask``
modules do, when imported. See docs/distributed.md.
"""

from __future__ import annotations

from pyrego.distributed.payload import PolicyPayload, evaluator
from pyrego.distributed.records import INVALID_INPUT, NOT_BOOLEAN, RecordEvaluator

__all__ = ["INVALID_INPUT", "NOT_BOOLEAN", "PolicyPayload", "RecordEvaluator", "evaluator"]
