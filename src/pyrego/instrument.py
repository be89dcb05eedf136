"""Coverage and traced evaluation for :class:`pyrego.Engine` (its ``InstrumentationMixin``).

With coverage on, an engine evaluates through the instrumented program
(:mod:`pyrego.instrument_codegen`) and keeps the ranges each evaluation
reached; with coverage off nothing of this runs: turning coverage on puts
instrumented ``eval_rule``/``eval_query`` on the engine instance, in front of
the class's methods, and turning it off removes them, so the normal path is
the very code it was before (no flag is tested on it).

The instrumented program is built from the normal program's checked rule
tree, once per policy set, and cached in the same process-wide cache under a
key of its own (``("instrumented", ...)``).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Iterator

from .bounded import BoundedDict
from .codegen import Program
from .compiler import resolve_query
from .coverage import CoverageData, pretty_report, report
from .errors import EvalError, EvalRecursionError, RegoError
from .instrument_codegen import generate_instrumented, piece_table
from .instrument_runtime import Recorder, RecordingConfig
from .parser import parse_query
from .runtime.context import EvalContext
from .runtime.convert import to_json_value, to_python
from .runtime.values import UNDEF

if TYPE_CHECKING:
    from .engine import Engine

#: ``input`` not given to an evaluation call: the engine's own input is used.
_NO_INPUT: Any = object()


class InstrumentedRun:
    """One instrumented evaluation's outcome: its result and its recorder."""

    __slots__ = ("result", "recorder", "program")

    def __init__(self, result: Any, recorder: Recorder, program: Program) -> None:
        self.result = result
        self.recorder = recorder
        self.program = program


class _Instrumented:
    """An engine's instrumented program and the queries compiled for it."""

    __slots__ = ("version", "program", "queries")

    def __init__(self, version: int, program: Program) -> None:
        self.version = version
        self.program = program
        self.queries: BoundedDict[Any, Any] = BoundedDict(256)


def instrumented_program(engine: Engine) -> _Instrumented:
    """The engine's instrumented program (built, or found in the process cache)."""
    from .engine import _programs

    state: _Instrumented | None = engine.__dict__.get("_instrumented")
    if state is not None and state.version == engine._version:
        return state
    version = engine._version
    normal = engine._get_program()
    policies = engine._policies
    paths = sorted(policies)
    sources = tuple((p, policies[p][0], policies[p][1].rego_v1) for p in paths)
    key = ("instrumented", sources, tuple(sorted(normal.mockable)), tuple(sorted(engine._extension_ids.items())))
    texts = {p: policies[p][0] for p in paths}
    program = _programs.get_or_build(key, lambda: engine._with_source(lambda: generate_instrumented(normal.tree, normal.mockable, texts)))
    state = _Instrumented(version, program)
    engine.__dict__["_instrumented"] = state
    return state


def _context(engine: Engine, recorder: Recorder, input: Any) -> EvalContext:
    engine._context()  # makes the engine's configuration when it has none yet
    config = engine._config
    assert config is not None
    deadline = time.monotonic() + engine._timeout if engine._timeout is not None else None
    return EvalContext.fast(engine._input if input is _NO_INPUT else input, engine._data, RecordingConfig(config, recorder), deadline)


def _run(engine: Engine, fn: Any, ctx: EvalContext, where: Any = None) -> Any:
    try:
        return fn(ctx)
    except RegoError as err:
        engine._attach_source(err)
        raise
    except RecursionError:
        raise EvalRecursionError("evaluation exceeded the maximum depth", where) from None
    except Exception as exc:  # a bug must still surface as a pyrego error
        raise EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error") from exc


def eval_rule_instrumented(engine: Engine, path: str, input: Any = _NO_INPUT, *, trace: bool = False, profile: bool = False) -> InstrumentedRun:
    """``engine.eval_rule(path)`` through the instrumented program."""
    from .engine import rule_path

    parts = rule_path(path)
    state = instrumented_program(engine)
    program = state.program
    name = program.rule_functions.get(parts)  # type: ignore[arg-type]
    if name is None:
        query = "__rule_value__ = data" + "".join(f"[{json.dumps(p)}]" for p in parts)
        run = eval_query_instrumented(engine, query, input, trace=trace, profile=profile)
        rows = run.result["result"]
        run.result = to_python(rows[0]["bindings"]["__rule_value__"]) if rows else UNDEF
        return run
    fn = program.function(name)
    recorder = Recorder(piece_table(program), trace=trace, profile=profile)
    ctx = _context(engine, recorder, input)
    try:
        value = _run(engine, fn, ctx)
    finally:
        recorder.finish()
    return InstrumentedRun(to_python(value) if value is not UNDEF else UNDEF, recorder, program)


def eval_query_instrumented(engine: Engine, query: str, input: Any = _NO_INPUT, *, trace: bool = False, profile: bool = False) -> InstrumentedRun:
    """``engine.eval_query(query)`` through the instrumented program."""
    from .engine import _expr_texts

    engine._compile_query(query)  # checks the query (and adds any `with` targets it needs)
    state = instrumented_program(engine)
    program = state.program
    key = (query, engine._rego_v0)
    compiled = state.queries.get(key)
    if compiled is None:
        body = parse_query(query, "query", rego_v1=not engine._rego_v0)
        resolved, names = resolve_query(body, program.tree)
        gen = program.gen
        assert gen is not None
        from .engine import _cache_lock

        with _cache_lock:
            fn = gen.query(resolved, names)
        compiled = state.queries[key] = (fn, _expr_texts(query, body), [e.location for e in body])
    fn, texts, locations = compiled
    recorder = Recorder(piece_table(program), trace=trace, profile=profile)
    ctx = _context(engine, recorder, input)
    recorder.enter_query()
    results = []
    try:
        solutions = _run(engine, lambda c: list(fn(c)), ctx, locations[0] if locations else None)
        for bindings, values in solutions:
            exprs = [
                {"value": to_json_value(v), "text": text, "location": {"row": loc.row, "col": loc.col}}
                for v, text, loc in zip(values, texts, locations)
            ]
            results.append({"expressions": exprs, "bindings": {k: to_json_value(v) for k, v in bindings.items()}})
    finally:
        recorder.pop()
        recorder.finish()
    return InstrumentedRun({"result": results}, recorder, program)


def _spans_of(run: InstrumentedRun) -> Iterator[Any]:
    pieces = piece_table(run.program).pieces
    for pid in run.recorder.hits:
        span = pieces[pid].span
        if span is not None:
            yield span


class InstrumentationMixin:
    """Coverage (regorus's method names) and traced evaluation for :class:`pyrego.Engine`."""

    _coverage: CoverageData | None = None

    # -- coverage ----------------------------------------------------------------------

    def set_enable_coverage(self, enable: bool) -> None:
        """Collect coverage from every evaluation from now on (``True``), or stop (``False``).

        Coverage accumulates across evaluations (and threads) until
        :meth:`clear_coverage_data`. With coverage off the engine runs its
        normal code and pays nothing for this feature."""
        engine: Engine = self  # type: ignore[assignment]
        if enable:
            if self._coverage is None:
                self._coverage = CoverageData()
            engine.__dict__["eval_rule"] = self._covered_eval_rule
            engine.__dict__["eval_query"] = self._covered_eval_query
        else:
            engine.__dict__.pop("eval_rule", None)
            engine.__dict__.pop("eval_query", None)

    def get_coverage_report(self) -> dict[str, Any]:
        """The coverage collected so far, as OPA's JSON report (a dict): per
        file the ``covered`` and ``not_covered`` ranges, line counts and
        ``coverage`` percentage, and the totals."""
        engine: Engine = self  # type: ignore[assignment]
        covered = self._coverage.snapshot() if self._coverage is not None else set()
        return report(covered, engine._policies)

    def get_coverage_report_pretty(self, *, color: bool | None = None) -> str:
        """The policies' source with each line marked covered (``+``), not
        covered (``-``) or both (``~``); coloured with ``rich`` when writing to
        a terminal (``color`` forces it on or off)."""
        engine: Engine = self  # type: ignore[assignment]
        texts = {path: text for path, (text, _) in engine._policies.items()}
        return pretty_report(self.get_coverage_report(), texts, color=color)

    def clear_coverage_data(self) -> None:
        """Forget the coverage collected so far (coverage stays on or off as it was)."""
        if self._coverage is not None:
            self._coverage.clear()

    def _covered_eval_rule(self, path: str, *, input: Any = _NO_INPUT) -> Any:
        run = eval_rule_instrumented(self, path, input)  # type: ignore[arg-type]
        self._record(run)
        return run.result

    def _covered_eval_query(self, query: str, *, input: Any = _NO_INPUT) -> dict[str, Any]:
        run = eval_query_instrumented(self, query, input)  # type: ignore[arg-type]
        self._record(run)
        return run.result  # type: ignore[no-any-return]

    def _record(self, run: InstrumentedRun) -> None:
        if self._coverage is not None:
            self._coverage.add(_spans_of(run))

    def _instrumentation_after_clone(self, new: Any) -> None:
        """A clone collects its own coverage (on when this engine's is on)."""
        new.__dict__.pop("_instrumented", None)
        on = "eval_rule" in self.__dict__
        new.__dict__.pop("eval_rule", None)
        new.__dict__.pop("eval_query", None)
        new._coverage = None
        if on:
            new.set_enable_coverage(True)


__all__ = ["InstrumentationMixin", "InstrumentedRun", "eval_query_instrumented", "eval_rule_instrumented", "instrumented_program"]
