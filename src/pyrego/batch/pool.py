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
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from pyrego.batch.prepared import PreparedRule, run_prepared
from pyrego.batch.results import BatchResult, OnError, Wire, error_from_wire, error_result, error_to_wire, ok_result
from pyrego.errors import ArgumentError, EvalError, RegoError

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


def _ordered(executor: ProcessPoolExecutor, processes: int, tasks: Iterator[Any], work: Callable[[Any], Any]) -> Iterator[Any]:
    """Each task's result, in order, with at most CHUNKS_AHEAD tasks per worker in flight."""
    pending: deque[Future[Any]] = deque()
    try:
        for task in tasks:
            pending.append(executor.submit(work, task))
            if len(pending) >= processes * CHUNKS_AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        raise EvalError("a batch worker process ended abruptly (killed, out of memory, or its start failed)") from None
    finally:
        for f in pending:
            f.cancel()


def _check(processes: int, chunk_size: int) -> None:
    if type(processes) is not int or processes < 1:
        raise ArgumentError(f"processes must be a positive integer, not {processes!r}")
    if type(chunk_size) is not int or chunk_size < 1:
        raise ArgumentError(f"chunk_size must be a positive integer, not {chunk_size!r}")


class BatchPool:
    """Worker processes that keep one rule prepared, for many batches.

    ``eval_many(target, path, inputs, processes=N)`` starts ``N`` workers
    for one batch and stops them after; a pool is started once (each worker
    builds its evaluator from ``spec`` in the initializer) and serves any
    number of batches until :meth:`close` (or the end of a ``with`` block)::

        with BatchPool(worker_spec(engine), "data.authz.allow", processes=2) as pool:
            for chunk in chunks:
                results = list(pool.eval_many(chunk))
    """

    def __init__(self, spec: tuple[Any, ...], path: str, *, processes: int, chunk_size: int = 1000, mp_context: str | None = None) -> None:
        _check(processes, chunk_size)
        self.processes = processes
        self.chunk_size = chunk_size
        context = multiprocessing.get_context(mp_context or "spawn")
        self._executor = ProcessPoolExecutor(max_workers=processes, mp_context=context, initializer=_init_worker, initargs=(spec, path))

    def start(self) -> BatchPool:
        """Start every worker now (and build its evaluator), rather than at the first batch."""
        list(self._executor.map(_ready, range(self.processes * 2)))
        return self

    def eval_many(self, inputs: Iterable[Any], on_error: OnError = "report") -> Iterator[BatchResult]:
        """One :class:`BatchResult` per input, in order (as :func:`pyrego.batch.eval_many`)."""
        if on_error not in ("report", "raise"):
            raise ArgumentError(f"on_error must be 'report' or 'raise', not {on_error!r}")
        for results in _ordered(self._executor, self.processes, _chunks(inputs, self.chunk_size), _run_values):
            for ok, payload in results:
                if ok:
                    yield ok_result(payload)
                    continue
                err: RegoError = error_from_wire(payload)
                if on_error == "raise":
                    raise err
                yield error_result(err)

    def eval_lines(self, lines: Iterable[str | bytes]) -> Iterator[tuple[bool, str]]:
        """``(ok, output line)`` for each non-blank JSON line, in order (as :func:`pyrego.batch.eval_lines`)."""
        size = self.chunk_size
        numbered = ((i * size + 1, chunk) for i, chunk in enumerate(_chunks(lines, size)))
        for results in _ordered(self._executor, self.processes, numbered, _run_lines):
            yield from results

    def close(self) -> None:
        """Stop the workers (tasks not started are cancelled)."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> BatchPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ready(_: int) -> bool:
    return _worker_rule is not None


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
    """:func:`pyrego.batch.eval_many` over ``processes`` workers built from ``spec`` (started and stopped here)."""
    pool = BatchPool(spec, path, processes=processes, chunk_size=chunk_size, mp_context=mp_context)
    if on_error not in ("report", "raise"):
        pool.close()
        raise ArgumentError(f"on_error must be 'report' or 'raise', not {on_error!r}")
    return _closing(pool, pool.eval_many(inputs, on_error))


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
    pool = BatchPool(spec, path, processes=processes, chunk_size=chunk_size, mp_context=mp_context)
    return _closing(pool, pool.eval_lines(lines))


def _closing(pool: BatchPool, results: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from results
    finally:
        pool.close()


Spec = tuple[Any, ...]
__all__ = ["CHUNKS_AHEAD", "BatchPool", "Spec", "Wire", "engine_rule", "pool_lines", "pool_values", "worker_rule"]
