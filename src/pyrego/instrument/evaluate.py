"""Evaluating through the instrumented program (coverage, traces, profiles).

The instrumented program (:mod:`pyrego.instrument.codegen`) is built from the
normal program's checked rule tree, once per policy set and variant, and
cached in the process-wide program cache under a key of its own
(``("instrumented", ...)``, or ``("traced", ...)`` for the variant whose
events carry variables' values). Each evaluation gets its own
:class:`~pyrego.instrument.recorder.Recorder`; the caller decides what to do
with it (merge its coverage, turn its events into a trace, sum its profile).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Callable, Iterator

from pyrego.codegen.bounded import BoundedDict
from pyrego.codegen.build_cache import cache_lock, program_cache
from pyrego.codegen.program import Program
from pyrego.compile.pipeline import resolve_query
from pyrego.engine_support import NO_INPUT, CompiledProgram, ProgramSource, expr_texts, query_context, rule_path
from pyrego.errors import EvalError, EvalRecursionError, Location, RegoError
from pyrego.instrument.codegen import InstrumentedGen, generate_instrumented, piece_table
from pyrego.instrument.recorder import Recorder, RecordingConfig
from pyrego.parse.parser import parse_query
from pyrego.parse.spans import Span
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import result_json_value, to_python
from pyrego.runtime.input_faults import input_fault
from pyrego.runtime.values import UNDEF

#: Where a query's own events are (its text is not a policy file).
QUERY_LOCATION = Location("query", 1, 1)


class InstrumentedRun:
    """One instrumented evaluation: its result (as ``eval_query``/``eval_rule``
    give it), its recorder, and the program it ran."""

    __slots__ = ("result", "recorder", "program")

    def __init__(self, result: Any, recorder: Recorder, program: Program) -> None:
        self.result = result
        self.recorder = recorder
        self.program = program

    def covered(self) -> Iterator[Span]:
        """The ranges this evaluation covered in the policies (not the query's own)."""
        pieces = piece_table(self.program).pieces
        gen = self.program.gen
        assert isinstance(gen, InstrumentedGen)
        files = gen.module_files()
        for pid in self.recorder.hits:
            span = pieces[pid].span
            if span is not None and span.file in files:
                yield span


class _Instrumented:
    """An engine's instrumented program and the queries compiled for it."""

    __slots__ = ("version", "program", "queries", "rules")

    def __init__(self, version: int, program: Program) -> None:
        self.version = version
        self.program = program
        self.queries: BoundedDict[Any, Any] = BoundedDict(256)
        # Rule paths as given to eval_rule -> their keys under data (parsed once).
        self.rules: BoundedDict[str, tuple[str | int, ...]] = BoundedDict(256)


def instrumented_program(compiled: CompiledProgram, *, traced: bool = False) -> _Instrumented:
    """The instrumented program of an engine's ``compiled`` program (built, or
    found in the process cache); ``traced``: the variant whose events carry
    variables' values."""
    states: dict[bool, _Instrumented] = compiled.state.setdefault("instrumented", {})
    state = states.get(traced)
    if state is not None and state.version == compiled.version:
        return state
    normal = compiled.code
    policies = compiled.policies
    paths = sorted(policies)
    sources = tuple((p, policies[p][0], policies[p][1].rego_v1) for p in paths)
    variant = "traced" if traced else "instrumented"
    extensions, allowed = compiled.builtins_key
    key = (variant, sources, tuple(sorted(normal.mockable)), extensions, allowed)
    texts = {p: policies[p][0] for p in paths}

    def build() -> Program:
        return generate_instrumented(normal.tree, normal.mockable, texts, trace_locals=traced)

    program = program_cache.get_or_build(key, lambda: compiled.with_source(build))
    state = states[traced] = _Instrumented(compiled.version, program)
    return state


def _context(compiled: CompiledProgram, recorder: Recorder, input: Any) -> EvalContext:
    ctx = compiled.context(input)
    ctx.cfg = RecordingConfig(ctx.cfg, recorder)
    return ctx


def _run(compiled: CompiledProgram, fn: Callable[[EvalContext], Any], ctx: EvalContext, where: Location | None = None) -> Any:
    """``fn(ctx)`` with the engine's error handling (source lines attached, clean errors)."""
    try:
        return fn(ctx)
    except RegoError as err:
        compiled.attach_source(err)
        raise
    except RecursionError as exc:
        raise input_fault(exc, ctx.input) or EvalRecursionError("evaluation exceeded the maximum depth", where) from None
    except Exception as exc:  # a bug must still surface as a pyrego error
        fault = input_fault(exc, ctx.input)
        if fault is not None:
            raise fault from None
        raise EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error") from exc


def eval_rule_instrumented(
    engine: ProgramSource, path: str, input: Any = NO_INPUT, *, trace: bool = False, profile: bool = False, convert: bool = True
) -> InstrumentedRun:
    """``engine.eval_rule(path)`` through the instrumented program; ``convert``
    False: the result is the value before ``eval_rule`` converts it for Python
    (for the engine's own evaluation path, which converts it itself)."""
    compiled = engine.program()
    state = instrumented_program(compiled, traced=trace)
    parts = state.rules.get(path) if type(path) is str else None
    if parts is None:
        parts = state.rules[path] = rule_path(path)
    program = state.program
    name = program.rule_functions.get(parts)  # type: ignore[arg-type]
    if name is None:
        query = "__rule_value__ = data" + "".join(f"[{json.dumps(p)}]" for p in parts)
        run = eval_query_instrumented(engine, query, input, trace=trace, profile=profile)
        rows = run.result["result"]
        value = rows[0]["bindings"]["__rule_value__"] if rows else UNDEF
        run.result = to_python(value) if convert and value is not UNDEF else value
        return run
    fn = program.function(name)
    recorder = Recorder(piece_table(program), trace=trace, profile=profile)
    ctx = _context(compiled, recorder, input)
    recorder.query_event("Enter")
    try:
        value = _run(compiled, fn, ctx)
    finally:
        recorder.finish()
    if value is not UNDEF:
        recorder.query_event("Exit")
    return InstrumentedRun(to_python(value) if convert and value is not UNDEF else value, recorder, program)


def eval_query_instrumented(
    engine: ProgramSource,
    query: str,
    input: Any = NO_INPUT,
    *,
    package: str | None = None,
    imports: Sequence[str] = (),
    trace: bool = False,
    profile: bool = False,
) -> InstrumentedRun:
    """``engine.eval_query(query)`` through the instrumented program."""
    run, texts, locations = query_solutions_instrumented(engine, query, input, package=package, imports=imports, trace=trace, profile=profile)
    results = []
    for bindings, values in run.result:
        exprs = [
            {"value": result_json_value(v), "text": text, "location": {"row": loc.row, "col": loc.col}}
            for v, text, loc in zip(values, texts, locations)
        ]
        results.append({"expressions": exprs, "bindings": {k: result_json_value(v) for k, v in bindings.items()}})
    run.result = {"result": results}
    return run


def query_solutions_instrumented(
    engine: ProgramSource,
    query: str,
    input: Any = NO_INPUT,
    *,
    package: str | None = None,
    imports: Sequence[str] = (),
    trace: bool = False,
    profile: bool = False,
) -> tuple[InstrumentedRun, list[str], list[Location]]:
    """The solutions of ``query`` through the instrumented program as its
    function yields them (``run.result``: a list of ``(bindings, values)``),
    with the text and location of each of the query's expressions."""
    imports = tuple(imports)
    # Checks the query (and adds any `with` targets it needs, which may make a new program).
    engine.program().compile_query(query, package, imports)
    compiled = engine.program()
    state = instrumented_program(compiled, traced=trace)
    program = state.program
    rego_v0 = compiled.rego_v0
    key = (query, rego_v0, package, imports)
    entry = state.queries.get(key)
    if entry is None:
        body = parse_query(query, "query", rego_v1=not rego_v0)
        resolved, names = resolve_query(body, program.tree, query_context(package, imports, rego_v0))
        gen = program.gen
        assert isinstance(gen, InstrumentedGen)
        with cache_lock:
            fn = gen.query_for(query, resolved, names)
        entry = state.queries[key] = (fn, expr_texts(query, body), [e.location for e in body])
    fn, texts, locations = entry
    recorder = Recorder(piece_table(program), trace=trace, profile=profile)
    ctx = _context(compiled, recorder, input)

    def solutions(c: EvalContext) -> list[Any]:
        out = []
        for solution in fn(c):
            recorder.query_event("Exit")
            out.append(solution)
        return out

    recorder.query_event("Enter")
    try:
        found = _run(compiled, solutions, ctx, locations[0] if locations else None)
    finally:
        recorder.finish()
    return InstrumentedRun(found, recorder, program), texts, locations


__all__ = [
    "NO_INPUT",
    "QUERY_LOCATION",
    "InstrumentedRun",
    "eval_query_instrumented",
    "eval_rule_instrumented",
    "instrumented_program",
    "query_solutions_instrumented",
]
