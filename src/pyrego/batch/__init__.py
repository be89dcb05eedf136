"""Many inputs, one rule: batch evaluation in one process or across processes.

>>> from pyrego.batch import eval_many
>>> for value, error in eval_many(engine, "data.authz.allow", inputs):  # doctest: +SKIP
...     ...

:func:`eval_many` takes any iterable of inputs (read lazily: a generator of
millions is never held in memory) and yields one :class:`BatchResult` per
input, in input order. An input whose evaluation fails gets its error as its
result (``on_error="report"``, the default); the batch goes on. With
``processes=N`` the inputs are evaluated by ``N`` worker processes, each of
which compiles the policies once when it starts. :func:`eval_lines` does the
same for JSON Lines text (``pyrego eval --input-lines``).

The rule is resolved and its evaluation context set up once per batch; each
input then costs one call into the generated code. The policies, data and
settings are those of the engine when the batch starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, Union

from pyrego.batch.prepared import PreparedRule, run_prepared
from pyrego.batch.results import OK_FALSE, OK_TRUE, BatchResult, OnError, error_result, ok_result
from pyrego.errors import RegoError

if TYPE_CHECKING:
    from pyrego.batch.pool import BatchPool
    from pyrego.engine_support import ProgramSource

#: Inputs sent to a worker process at a time (and parsed at a time, for JSON Lines).
DEFAULT_CHUNK_SIZE = 1000

_from_engine: Any = None


def _load_from_engine() -> Any:
    """``prepare_from_engine``, imported on first use (a loaded artifact never needs the engine's side)."""
    global _from_engine
    from pyrego.batch.from_engine import prepare_from_engine

    _from_engine = prepare_from_engine
    return prepare_from_engine


def _each(rule: Callable[[Any], Any], inputs: Iterable[Any], raising: bool) -> Iterator[BatchResult]:
    """``rule`` (an engine's prepared rule) for each of ``inputs``, lazily."""
    for value in inputs:
        try:
            result = rule(value)
        except RegoError as err:
            if raising or not err.code.startswith("eval_"):
                raise  # (a compile error or a bad path is not the input's)
            yield error_result(err)
            continue
        yield OK_TRUE if result is True else OK_FALSE if result is False else ok_result(result)


class Preparable(Protocol):
    """What a batch can run on besides an engine: a loaded artifact."""

    def prepare(self, path: str) -> PreparedRule: ...

    def worker_spec(self) -> tuple[Any, ...]: ...


Target = Union["ProgramSource", Preparable]


#: Whether objects of a type are Preparable (an artifact) rather than engines, by type
#: (asked per batch: ``hasattr`` on a type that lacks the name formats an error message).
_preparable_types: dict[type, bool] = {}


def _preparable(target: Any) -> bool:
    t = type(target)
    known = _preparable_types.get(t)
    if known is None:
        known = _preparable_types[t] = callable(getattr(t, "prepare", None)) and callable(getattr(t, "worker_spec", None))
    return known


def prepare(target: Target, path: str) -> PreparedRule:
    """``path`` of ``target`` (an engine, or a loaded artifact) resolved for many evaluations.

    Compiles the policies now: a compile error is raised here, not per input."""
    if _preparable(target):
        return target.prepare(path)  # type: ignore[union-attr]
    from_engine = _from_engine or _load_from_engine()
    return from_engine(target, path)  # type: ignore[no-any-return]


def worker_spec(target: Target) -> tuple[Any, ...]:
    """What a worker process builds its evaluator from: the target written as
    a compiled artifact when its policies allow, else its policy texts, data and settings."""
    if _preparable(target):
        return target.worker_spec()  # type: ignore[union-attr]
    from pyrego.artifact.format import ArtifactError
    from pyrego.artifact.load import artifact_rule
    from pyrego.artifact.write import artifact_text
    from pyrego.batch.pool import engine_rule

    try:
        return (artifact_rule, artifact_text(target))  # type: ignore[arg-type]
    except ArtifactError:
        pass
    compiled = target.program()  # type: ignore[union-attr]
    if compiled.builtins_key[0]:
        from pyrego.errors import ArgumentError

        raise ArgumentError("an engine with extension functions cannot evaluate in worker processes (they are not sent to workers)")
    ctx = compiled.context(None)
    settings = {"rego_v0": compiled.rego_v0, "strict": ctx.cfg.strict, "timeout": ctx.cfg.timeout}
    return (engine_rule, type(target), compiled.texts, ctx.data, settings)


def batch_pool(
    target: Target, path: str, *, processes: int, chunk_size: int = DEFAULT_CHUNK_SIZE, mp_context: str | None = None
) -> BatchPool:
    """Worker processes with ``path`` of ``target`` prepared, for many batches
    (``with batch_pool(engine, path, processes=2) as pool: pool.eval_many(inputs)``):
    see :class:`pyrego.batch.pool.BatchPool`. The workers start with the first batch,
    or at once with ``.start()``."""
    from pyrego.batch.pool import BatchPool

    return BatchPool(worker_spec(target), path, processes=processes, chunk_size=chunk_size, mp_context=mp_context)


def eval_many(
    target: Target,
    path: str,
    inputs: Iterable[Any],
    *,
    processes: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    on_error: OnError = "report",
    mp_context: str | None = None,
) -> Iterator[BatchResult]:
    """Evaluate the rule ``path`` once per input; yield a :class:`BatchResult` per input, in order.

    ``target``: an :class:`~pyrego.Engine` (its policies, data and settings
    as the batch starts) or a loaded artifact (:func:`pyrego.artifact.load_artifact`).
    ``inputs``: any iterable, read lazily. ``on_error``: ``"report"`` (an
    input's error is its result; the batch goes on) or ``"raise"`` (raised
    at that input). ``processes``: None evaluates in this process; ``N``
    uses ``N`` worker processes (started with ``mp_context``, default
    ``"spawn"``), ``chunk_size`` inputs at a time. Errors that are not an
    input's (a policy that does not compile, a path that is not one) are
    raised, by this call or at the first result, never reported per input.
    """
    if processes is None:
        if not _preparable(target) and on_error in ("report", "raise"):
            # The engine's prepared rule (kept by the engine while it does not
            # change): where the rule needs no context, one call per input.
            return _each(target.prepare_rule(path), inputs, on_error == "raise")  # type: ignore[union-attr]
        return run_prepared(prepare(target, path), inputs, on_error)
    from pyrego.batch.pool import pool_values

    return pool_values(
        worker_spec(target), path, inputs, processes=processes, chunk_size=chunk_size, on_error=on_error, mp_context=mp_context
    )


def eval_lines(
    target: Target,
    path: str,
    lines: Iterable[str | bytes],
    *,
    processes: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    mp_context: str | None = None,
) -> Iterator[tuple[bool, str]]:
    """JSON Lines: for each non-blank line of ``lines`` (an input document),
    ``(ok, output line)`` in order (see :mod:`pyrego.batch.lines` for the
    output's shape); ``ok`` is False for an input that failed or is not JSON."""
    if processes is None:
        from pyrego.batch.lines import eval_lines_prepared

        return eval_lines_prepared(prepare(target, path), lines, chunk_size)
    from pyrego.batch.pool import pool_lines

    return pool_lines(worker_spec(target), path, lines, processes=processes, chunk_size=chunk_size, mp_context=mp_context)


__all__ = ["DEFAULT_CHUNK_SIZE", "BatchResult", "batch_pool", "OnError", "Preparable", "PreparedRule", "eval_lines", "eval_many", "prepare", "worker_spec"]
