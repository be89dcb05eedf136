"""Batches across worker processes.

Each worker builds its evaluator once, at start (the pool's initializer):
from a compiled artifact's text when the policies can be written as one (no
parsing or code generation in the worker), else from the policies' texts and
data. Inputs go to the workers in chunks, at most a few chunks ahead of the
results being read (a generator of millions is never read ahead in full);
results come back in input order.

Shipping inputs costs a pickling in the parent and an unpickling in the
worker; for JSON Lines the workers parse the text themselves
(:func:`pool_lines`), and send back each line's output text.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from pyrego.batch.prepared import PreparedRule, run_prepared
from pyrego.batch.results import BatchResult, OnError, Wire, error_from_wire, error_result, error_to_wire, ok_result
from pyrego.errors import ArgumentError, RegoError

#: Chunks sent to the workers ahead of the results read, per worker.
CHUNKS_AHEAD = 3

# The worker's evaluator (set by the pool's initializer, in the worker).
_worker_rule: PreparedRule | None = None


def worker_rule(spec: tuple[Any, ...], path: str) -> PreparedRule:
    """The :class:`PreparedRule` a worker builds from ``spec``: ``(factory, *args)``,
    called as ``factory(path, *args)`` (a module-level function: pickled by name)."""
    factory, *args = spec
    return factory(path, *args)  # type: ignore[no-any-return]


def engine_rule(path: str, engine_class: type, texts: dict[str, str], data: Any, settings: dict[str, Any]) -> PreparedRule:
    """A worker's evaluator built from policy texts, data and settings (compiled here)."""
    from pyrego.batch.from_engine import prepare_from_engine

    engine = engine_class()
    if settings.get("rego_v0"):
        engine.set_rego_v0(True)
    if settings.get("strict"):
        engine.set_strict_builtin_errors(True)
    if settings.get("timeout") is not None:
        engine.set_eval_timeout(settings["timeout"])
    engine.set_gather_prints(False)
    engine.add_policies(texts)
    if data:
        engine.add_data(data)
    return prepare_from_engine(engine, path)


def _init_worker(spec: tuple[Any, ...], path: str) -> None:
    global _worker_rule
    _worker_rule = worker_rule(spec, path)


def _run_values(chunk: list[Any]) -> list[tuple[bool, Any]]:
    rule = _worker_rule
    assert rule is not None
    return [(True, v) if e is None else (False, error_to_wire(e)) for v, e in run_prepared(rule, chunk)]


def _run_lines(chunk: tuple[int, list[str | bytes]]) -> list[tuple[bool, str]]:
    from pyrego.batch.lines import eval_line_chunk

    rule = _worker_rule
    assert rule is not None
    return eval_line_chunk(rule, chunk[1], chunk[0])


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while True:
        chunk = list(itertools.islice(it, size))
        if not chunk:
            return
        yield chunk


def _ordered(
    spec: tuple[Any, ...], path: str, tasks: Iterator[Any], work: Callable[[Any], Any], processes: int, mp_context: Any
) -> Iterator[Any]:
    """Each task's result, in order, with at most CHUNKS_AHEAD tasks per worker in flight."""
    context = multiprocessing.get_context(mp_context or "spawn")
    executor = ProcessPoolExecutor(max_workers=processes, mp_context=context, initializer=_init_worker, initargs=(spec, path))
    pending: deque[Future[Any]] = deque()
    try:
        for task in tasks:
            pending.append(executor.submit(work, task))
            if len(pending) >= processes * CHUNKS_AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()
        executor.shutdown(wait=True, cancel_futures=True)


def _check(processes: int, chunk_size: int) -> None:
    if type(processes) is not int or processes < 1:
        raise ArgumentError(f"processes must be a positive integer, not {processes!r}")
    if type(chunk_size) is not int or chunk_size < 1:
        raise ArgumentError(f"chunk_size must be a positive integer, not {chunk_size!r}")


def pool_values(
    spec: tuple[Any, ...],
    path: str,
    inputs: Iterable[Any],
    *,
    processes: int,
    chunk_size: int,
    on_error: OnError = "report",
    mp_context: str | None = None,
) -> Iterator[BatchResult]:
    """:func:`pyrego.batch.eval_many` over ``processes`` workers built from ``spec``."""
    _check(processes, chunk_size)
    if on_error not in ("report", "raise"):
        raise ArgumentError(f"on_error must be 'report' or 'raise', not {on_error!r}")
    for results in _ordered(spec, path, _chunks(inputs, chunk_size), _run_values, processes, mp_context):
        for ok, payload in results:
            if ok:
                yield ok_result(payload)
                continue
            err: RegoError = error_from_wire(payload)
            if on_error == "raise":
                raise err
            yield error_result(err)


def pool_lines(
    spec: tuple[Any, ...],
    path: str,
    lines: Iterable[str | bytes],
    *,
    processes: int,
    chunk_size: int,
    mp_context: str | None = None,
) -> Iterator[tuple[bool, str]]:
    """:func:`pyrego.batch.lines.eval_lines` over ``processes`` workers: each
    input line's ``(ok, output line)``, in order."""
    _check(processes, chunk_size)
    numbered = ((i * chunk_size + 1, chunk) for i, chunk in enumerate(_chunks(lines, chunk_size)))
    for results in _ordered(spec, path, numbered, _run_lines, processes, mp_context):
        yield from results


Spec = tuple[Any, ...]
__all__ = ["CHUNKS_AHEAD", "Spec", "Wire", "engine_rule", "pool_lines", "pool_values", "worker_rule"]
