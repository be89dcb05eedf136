"""Timing: agreement check, time-based throughput loops over threads and processes,
per-case ACI times, load times and pyrego's initialization stages.

Every throughput figure comes from the same loop (:func:`timed_loop`): run the
evaluations round-robin for a warm-up period, then count evaluations over a
measured period. With several workers, each runs that loop on its own engines
(clones of prepared engines) after a barrier, and the figure is the sum of the
workers' rates. One worker runs in the calling thread; thread workers run in
this process (so pure-Python engines share the GIL); process workers are
spawned once per worker count and reused for every configuration.
"""

from __future__ import annotations

import multiprocessing
import statistics
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from pyrego.bench.engines import (
    UNDEFINED_MARK,
    Adapter,
    EngineUnavailable,
    Evaluator,
    Prepared,
    get_adapter,
    normalize,
    short,
)
from pyrego.bench.workloads import NO_EXPECTATION, Paths, PolicySet, Workload, load_workload

BARRIER_TIMEOUT = 600.0


@dataclass(frozen=True)
class Config:
    """A throughput configuration: workload, engine use and input kind."""

    workload: str
    engine_use: str  # "prepared", "fresh-warm" or "fresh-cold"
    input_kind: str  # "object" or "json"

    @property
    def key(self) -> str:
        return f"{self.workload}/{self.engine_use}/{self.input_kind}"

    @property
    def title(self) -> str:
        use = {
            "prepared": "prepared engines",
            "fresh-warm": "fresh engines, warm (compile cache hit)",
            "fresh-cold": "fresh engines, cold (policy text never seen)",
        }[self.engine_use]
        inp = "pre-parsed input objects" if self.input_kind == "object" else "JSON text parsed per evaluation"
        return f"{self.workload}: {use}, {inp}"


CONFIGS: tuple[Config, ...] = (
    Config("seed", "prepared", "object"),
    Config("seed", "prepared", "json"),
    Config("seed", "fresh-warm", "object"),
    Config("seed", "fresh-cold", "object"),
    Config("allow", "prepared", "object"),
)


@dataclass
class Point:
    """One measured throughput: a configuration, an engine, a worker mode and count."""

    config: str
    engine: str
    mode: str  # "threads" or "processes" (1 worker: measured once, in the calling thread)
    workers: int
    evals: int = 0
    seconds: float = 0.0
    kelem_s: float = 0.0
    cpu_kelem_s: float = 0.0  # summed per-worker rates per CPU second of the worker's thread
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Stat:
    """A sample of times (seconds): median and half the interquartile range."""

    median: float
    spread: float
    n: int
    values_kept: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stat:
        if not samples:
            return cls(float("nan"), float("nan"), 0)
        med = statistics.median(samples)
        if len(samples) >= 4:
            q = statistics.quantiles(samples, n=4)
            spread = (q[2] - q[0]) / 2
        else:
            spread = (max(samples) - min(samples)) / 2
        return cls(med, spread, len(samples))

    def to_json(self) -> dict[str, Any]:
        return {"median_s": self.median, "spread_s": self.spread, "n": self.n}


# ---------------------------------------------------------------- the loop


@dataclass(frozen=True)
class Measured:
    """What one worker's measured period gave: evaluations, wall seconds, CPU seconds of its thread."""

    evals: int
    seconds: float
    cpu_seconds: float


@dataclass(frozen=True)
class Combined:
    """A figure over all workers: evaluations, mean seconds, summed rates (per wall and per CPU second)."""

    evals: int
    seconds: float
    rate: float
    cpu_rate: float


def timed_loop(steps: Sequence[tuple[Evaluator, Any]], warmup: float, measure: float, per_step: bool) -> Measured:
    """Run ``steps`` round-robin: warm up for ``warmup`` s, then count evaluations for ``measure`` s.

    The clock is read after every full round of steps, or after every step
    when ``per_step`` (slow evaluations, so that the periods are kept). The
    CPU time of the calling thread over the measured period is also returned:
    unlike wall time, it does not count time the machine gave to other work.
    """
    clock = time.perf_counter
    cpu = time.thread_time
    n = len(steps)
    end = clock() + warmup
    if per_step:
        i = 0
        while clock() < end:
            fn, arg = steps[i]
            fn(arg)
            i = (i + 1) % n
        count = 0
        cpu0 = cpu()
        start = now = clock()
        end = start + measure
        while now < end:
            fn, arg = steps[i]
            fn(arg)
            i = (i + 1) % n
            count += 1
            now = clock()
        return Measured(count, now - start, cpu() - cpu0)
    while clock() < end:
        for fn, arg in steps:
            fn(arg)
    count = 0
    cpu0 = cpu()
    start = now = clock()
    end = start + measure
    while now < end:
        for fn, arg in steps:
            fn(arg)
        count += n
        now = clock()
    return Measured(count, now - start, cpu() - cpu0)


def build_steps(adapter: Adapter, workload: Workload, cfg: Config, prepared: list[Prepared] | None) -> list[tuple[Evaluator, Any]]:
    """The (evaluator, input) pairs of one worker, in the workload's round-robin order."""
    json_in = cfg.input_kind == "json"
    cache: dict[tuple[int, str], Evaluator] = {}
    steps = []
    for c in workload.cases:
        key = (c.group, c.query)
        ev = cache.get(key)
        if ev is None:
            if cfg.engine_use == "prepared":
                assert prepared is not None
                ev = prepared[c.group].evaluator(c.query, json_in)
            else:
                ev = adapter.fresh_evaluator(workload.policy_sets[c.group], c.query, json_in, cfg.engine_use == "fresh-cold")
            cache[key] = ev
        steps.append((ev, c.input_json if json_in else c.input))
    return steps


def _prepare_all(adapter: Adapter, workload: Workload) -> list[Prepared]:
    """One prepared engine per policy set; sets that share their modules (ACI) are
    prepared once and cloned, each clone getting its own data."""
    bases: dict[Any, Prepared] = {}
    out = []
    try:
        for ps in workload.policy_sets:
            if ps.data is None:
                out.append(adapter.prepare(ps))
                continue
            key = (tuple(ps.modules), ps.v0)
            base = bases.get(key)
            if base is None:
                base = bases[key] = adapter.prepare(PolicySet(ps.name, ps.modules, ps.v0, None))
            p = base.clone()
            p.add_data(ps.data)
            out.append(p)
    finally:
        _close_all(list(bases.values()))
    return out


def _close_all(prepared: list[Prepared] | None) -> None:
    for p in prepared or []:
        try:
            p.close()
        except Exception:  # noqa: BLE001, S110 - closing is best effort
            pass


def run_interleaved(
    adapters: Sequence[Adapter], workload: Workload, cfg: Config, warmup: float, measure: float, rounds: int
) -> dict[str, Combined | BaseException]:
    """1-worker figures of several engines, measured in turns.

    Every engine is prepared and warmed up, then the measured period is cut
    into ``rounds`` slices, taken engine after engine (the order rotating each
    round, with a short re-warm-up before each slice). Slow changes in the load
    of the machine then fall on every engine alike, which keeps the ratios
    between engines steadier than back-to-back periods would.
    """
    per_step = cfg.engine_use != "prepared"
    cold = cfg.engine_use == "fresh-cold"
    out: dict[str, Combined | BaseException] = {}
    steps: dict[str, list[tuple[Evaluator, Any]]] = {}
    prepared: dict[str, list[Prepared] | None] = {}
    acc: dict[str, list[float]] = {}
    rounds = max(1, rounds)
    part = measure / rounds
    rewarm = min(warmup, part / 10) if rounds > 1 else 0.0
    adapters = [a for a in adapters if a.runs(cfg.workload, cfg.engine_use)]
    try:
        for a in adapters:
            try:
                if cold:
                    a.begin_cold()
                prepared[a.name] = _prepare_all(a, workload) if cfg.engine_use == "prepared" else None
                steps[a.name] = build_steps(a, workload, cfg, prepared[a.name])
                timed_loop(steps[a.name], warmup, 0.0, per_step)
                acc[a.name] = [0, 0.0, 0.0]
            except Exception as exc:  # noqa: BLE001 - reported per engine
                out[a.name] = exc
        live = [a for a in adapters if a.name in acc]
        for r in range(rounds):
            k = r % len(live) if live else 0
            for a in live[k:] + live[:k]:
                if a.name in out:
                    continue
                try:
                    m = timed_loop(steps[a.name], rewarm if r else 0.0, part, per_step)
                except Exception as exc:  # noqa: BLE001
                    out[a.name] = exc
                    continue
                acc[a.name][0] += m.evals
                acc[a.name][1] += m.seconds
                acc[a.name][2] += m.cpu_seconds
        for name, (n, secs, cpu_s) in acc.items():
            if name not in out:
                out[name] = Combined(int(n), secs, n / secs if secs > 0 else 0.0, n / cpu_s if cpu_s > 0 else 0.0)
        return out
    finally:
        for p in prepared.values():
            _close_all(p)
        if cold:
            for a in adapters:
                a.begin_cold()


def run_threads(adapter: Adapter, workload: Workload, cfg: Config, workers: int, warmup: float, measure: float) -> Combined:
    """Measure ``cfg`` with ``workers`` threads (1: in the calling thread).

    Prepared engines are made once and cloned per worker, or, for engines
    bound to their thread, prepared by each worker thread itself (before the
    start barrier, so outside the timed periods).
    """
    per_step = cfg.engine_use != "prepared"
    prepared_use = cfg.engine_use == "prepared"
    shared = prepared_use and (workers == 1 or adapter.shareable_across_threads)
    if cfg.engine_use == "fresh-cold":
        adapter.begin_cold()
    base = _prepare_all(adapter, workload) if shared else None
    clones: list[list[Prepared]] = []

    def engines_for(i: int) -> tuple[list[Prepared] | None, bool]:
        """The engines of worker ``i`` and whether that worker owns (must release) them."""
        if not prepared_use:
            return None, False
        if base is None:
            return _prepare_all(adapter, workload), True
        if i == 0:
            return base, False
        mine = [p.clone() for p in base]
        clones.append(mine)
        return mine, False

    try:
        if workers == 1:
            engines, _ = engines_for(0)
            steps = build_steps(adapter, workload, cfg, engines)
            return _combine([timed_loop(steps, warmup, measure, per_step)])
        barrier = threading.Barrier(workers)
        results: list[Measured | BaseException | None] = [None] * workers
        for i in range(1, workers):  # clones are made here, in the thread that owns the base
            if base is not None:
                engines_for(i)

        def work(i: int) -> None:
            engines: list[Prepared] | None = None
            owns = False
            try:
                if base is not None:
                    engines = base if i == 0 else clones[i - 1]
                else:
                    engines, owns = engines_for(i)
                steps = build_steps(adapter, workload, cfg, engines)
                barrier.wait(BARRIER_TIMEOUT)
                results[i] = timed_loop(steps, warmup, measure, per_step)
            except BaseException as exc:  # noqa: BLE001 - reported by the caller
                barrier.abort()
                results[i] = exc
            finally:
                # Engines bound to this thread must also be released in it.
                steps = []
                if owns:
                    _close_all(engines)
                engines = None

        threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return _combine(results)
    finally:
        _close_all(base)
        for e in clones:
            _close_all(e)
        if cfg.engine_use == "fresh-cold":
            adapter.begin_cold()


def _combine(results: Sequence[Measured | BaseException | None]) -> Combined:
    for r in results:
        if isinstance(r, BaseException):
            raise r
    ms = [r for r in results if isinstance(r, Measured)]
    return Combined(
        evals=sum(m.evals for m in ms),
        seconds=statistics.mean(m.seconds for m in ms) if ms else 0.0,
        rate=sum(m.evals / m.seconds for m in ms if m.seconds > 0),
        cpu_rate=sum(m.evals / m.cpu_seconds for m in ms if m.cpu_seconds > 0),
    )


# ---------------------------------------------------------------- processes

_BARRIER: Any = None


def _init_process(barrier: Any) -> None:
    global _BARRIER
    _BARRIER = barrier


def _process_task(task: dict[str, Any]) -> Measured | str:
    """Run in a worker process: prepare, wait for the others, measure."""
    barrier = _BARRIER
    try:
        adapter = get_adapter(task["engine"])
        workload = load_workload(task["workload"], task["paths"])
        cfg = Config(**task["config"])
        if cfg.engine_use == "fresh-cold":
            adapter.begin_cold()
        prepared = _prepare_all(adapter, workload) if cfg.engine_use == "prepared" else None
        steps = build_steps(adapter, workload, cfg, prepared)
    except BaseException:  # noqa: BLE001 - sent back as text
        barrier.abort()
        return traceback.format_exc(limit=6)
    try:
        barrier.wait(BARRIER_TIMEOUT)
    except BaseException:  # noqa: BLE001
        return "another worker process failed before the start"
    try:
        return timed_loop(steps, task["warmup"], task["measure"], cfg.engine_use != "prepared")
    except BaseException:  # noqa: BLE001
        return traceback.format_exc(limit=6)
    finally:
        _close_all(prepared)


class ProcessPools:
    """One pool of spawned worker processes (and a barrier) per worker count, reused."""

    def __init__(self) -> None:
        self._pools: dict[int, tuple[ProcessPoolExecutor, Any]] = {}
        self._ctx = multiprocessing.get_context("spawn")

    def run(self, engine: str, paths: Paths, cfg: Config, workers: int, warmup: float, measure: float) -> Combined:
        """Measure ``cfg`` on ``workers`` processes."""
        entry = self._pools.get(workers)
        if entry is None:
            barrier = self._ctx.Barrier(workers)
            pool = ProcessPoolExecutor(workers, mp_context=self._ctx, initializer=_init_process, initargs=(barrier,))
            entry = self._pools[workers] = (pool, barrier)
        pool, barrier = entry
        task = {
            "engine": engine,
            "workload": cfg.workload,
            "paths": paths,
            "config": asdict(cfg),
            "warmup": warmup,
            "measure": measure,
        }
        futures: list[Future[Measured | str]] = [pool.submit(_process_task, task) for _ in range(workers)]
        outcomes = [f.result() for f in futures]
        errors = [o for o in outcomes if isinstance(o, str)]
        if errors:
            barrier.reset()
            first = next((e for e in errors if "another worker" not in e), errors[0])
            raise RuntimeError(first.strip().splitlines()[-1] if first else "worker failed")
        return _combine([o for o in outcomes if not isinstance(o, str)])

    def close(self) -> None:
        """Shut every pool down."""
        for pool, _ in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()


# ---------------------------------------------------------------- agreement


@dataclass
class Disagreement:
    """A case on which the engines (or an engine and the expected value) differ."""

    workload: str
    case: str
    query: str
    values: dict[str, str]
    expected: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_agreement(
    adapters: Sequence[Adapter],
    workloads: Sequence[Workload],
    on_step: Callable[[str], None] | None = None,
) -> tuple[list[Disagreement], int, list[str]]:
    """Evaluate every case on every engine (prepared with objects and JSON; fresh for the seed).

    Returns (disagreements, evaluations compared, notes on what was skipped).
    """
    disagreements: list[Disagreement] = []
    skipped: list[str] = []
    compared = 0
    for w in workloads:
        got: dict[int, dict[str, Any]] = {i: {} for i in range(len(w.cases))}
        for a in adapters:
            if not a.runs(w.name):
                skipped.append(f"{a.name} skipped on {w.name}: {a.title} does not run it")
                continue
            if any(ps.v0 for ps in w.policy_sets) and not a.supports_v0:
                skipped.append(f"{a.name} skipped on {w.name}: no Rego v0 mode")
                continue
            if on_step:
                on_step(f"agreement: {w.name} on {a.name}")
            try:
                prepared = _prepare_all(a, w)
            except Exception as exc:  # noqa: BLE001 - every case then disagrees
                for i in range(len(w.cases)):
                    got[i][a.name] = f"error: {type(exc).__name__}: {exc}"
                continue
            try:
                for i, c in enumerate(w.cases):
                    values = _case_values(a, w, prepared, c.group, c.query, c.input, c.input_json, fresh=w.name == "seed" and a.runs(w.name, "fresh-warm"))
                    got[i].update(values)
                    compared += len(values)
            finally:
                _close_all(prepared)
        for i, c in enumerate(w.cases):
            values = got[i]
            if not values:
                continue
            forms = {_norm(v) for v in values.values()}
            if c.expected is not NO_EXPECTATION:
                forms.add(_norm(c.expected))
            if len(forms) > 1:
                disagreements.append(
                    Disagreement(
                        w.name,
                        c.label,
                        c.query,
                        {k: short(v) for k, v in values.items()},
                        None if c.expected is NO_EXPECTATION else short(c.expected),
                    )
                )
    return disagreements, compared, skipped


def _case_values(
    a: Adapter, w: Workload, prepared: list[Prepared], group: int, query: str, inp: Any, inp_json: str, fresh: bool
) -> dict[str, Any]:
    """One case's values on one engine: prepared with an object, with JSON, and (``fresh``) on a fresh engine."""
    modes: list[tuple[str, Callable[[], Any]]] = [
        (a.name, lambda: prepared[group].evaluator(query, False)(inp)),
        (f"{a.name} (json)", lambda: prepared[group].evaluator(query, True)(inp_json)),
    ]
    if fresh:
        modes.append((f"{a.name} (fresh)", lambda: a.fresh_evaluator(w.policy_sets[group], query, False, False)(inp)))
    out: dict[str, Any] = {}
    for label, fn in modes:
        try:
            out[label] = fn()
        except Exception as exc:  # noqa: BLE001 - an error is a value that disagrees
            out[label] = f"error: {type(exc).__name__}: {str(exc)[:200]}"
    return out


def _norm(v: Any) -> Any:
    if isinstance(v, str) and v.startswith("error: "):
        return ("error", v)
    return normalize(v)


# ---------------------------------------------------------------- ACI and init


def aci_case_times(adapter: Adapter, workload: Workload, warmup: float, measure: float) -> list[dict[str, Any]]:
    """Per-case evaluation time on prepared engines (set input, evaluate), one worker."""
    out = []
    prepared = _prepare_all(adapter, workload)
    try:
        for c in workload.cases:
            ev = prepared[c.group].evaluator(c.query, False)
            m = timed_loop([(ev, c.input)], warmup, measure, True)
            out.append(
                {
                    "case": c.label,
                    "evals": m.evals,
                    "seconds": m.seconds,
                    "us_per_eval": m.seconds / m.evals * 1e6 if m.evals else None,
                    "cpu_us_per_eval": m.cpu_seconds / m.evals * 1e6 if m.evals else None,
                }
            )
    finally:
        _close_all(prepared)
    return out


def load_times(adapter: Adapter, workload: Workload, cold: bool, budget: float, min_reps: int) -> Stat:
    """Time to load the policy set (new engine, policies, data) and evaluate the first case once."""
    c = workload.cases[0]
    ps = workload.policy_sets[c.group]
    samples: list[float] = []
    clock = time.perf_counter
    deadline = clock() + budget
    if cold:
        adapter.begin_cold()
    else:  # warm the compile cache first
        adapter.fresh_evaluator(ps, c.query, False, False)(c.input)
    while len(samples) < min_reps or clock() < deadline:
        ev = adapter.fresh_evaluator(ps, c.query, False, cold)
        t0 = clock()
        value = ev(c.input)
        samples.append(clock() - t0)
        if value is UNDEFINED_MARK and c.expected is not NO_EXPECTATION:
            raise RuntimeError(f"{adapter.name}: {c.label} is undefined after loading")
    if cold:
        adapter.begin_cold()
    return Stat.of(samples)


def fresh_times(adapter: Adapter, workload: Workload, cold: bool, budget: float, min_reps: int) -> Stat:
    """Per-evaluation time of a fresh engine (new engine, policy, input, evaluate), round-robin over the cases."""
    clock = time.perf_counter
    if cold:
        adapter.begin_cold()
    evs = [
        (adapter.fresh_evaluator(workload.policy_sets[c.group], c.query, False, cold), c.input) for c in workload.cases
    ]
    if not cold:
        for ev, inp in evs:
            ev(inp)
    samples: list[float] = []
    deadline = clock() + budget
    i = 0
    while len(samples) < min_reps or clock() < deadline:
        ev, inp = evs[i % len(evs)]
        t0 = clock()
        ev(inp)
        samples.append(clock() - t0)
        i += 1
    if cold:
        adapter.begin_cold()
    return Stat.of(samples)


STAGES = ("parse", "compile", "codegen", "py_compile", "first_eval")
STAGE_TITLES = {
    "parse": "parse (lexer + parser)",
    "compile": "compile (rule tree, safety, checks)",
    "codegen": "code generation (closures; Python source for other rules)",
    "py_compile": "Python compile() + exec",
    "first_eval": "first evaluation",
}


def pyrego_stages_once(modules: list[tuple[str, str]], v0: bool, data: Any, query: str, inp: Any) -> tuple[dict[str, float], Any]:
    """One cold pass through pyrego's pipeline, timing each stage (seconds); returns (times, value)."""
    from pyrego.codegen import generator as cg
    from pyrego.compile.pipeline import compile_modules
    from pyrego.compile.with_targets import with_function_targets
    from pyrego.parse.parser import parse_module
    from pyrego.runtime.context import EvalContext
    from pyrego.runtime.convert import from_python, to_python

    times: dict[str, float] = {}

    class TimedGen(cg.ModuleGen):  # type: ignore[misc]
        def generate(self) -> None:
            t = time.perf_counter()
            super().generate()
            times.setdefault("_generate", time.perf_counter() - t)

        def exec_lines(self, lines: list[str], filename: str = "<pyrego policy>") -> None:
            # Rules' code is compiled on first use: during build and during the first evaluation.
            t = time.perf_counter()
            super().exec_lines(lines, filename)
            times["py_compile"] = times.get("py_compile", 0.0) + time.perf_counter() - t

    clock = time.perf_counter
    t0 = clock()
    mods = [parse_module(text, path, rego_v1=not v0) for path, text in modules]
    t1 = clock()
    tree = compile_modules(mods)
    mockable = with_function_targets(tree)
    t2 = clock()
    program = TimedGen(tree, mockable).build()
    t3 = clock()
    build_py_compile = times.get("py_compile", 0.0)
    base = from_python(data) if data is not None else {}
    parts = tuple(query.split(".")[1:])
    fn = program.namespace[program.rule_functions[parts]]
    value = fn(EvalContext(inp, base))
    value = to_python(value) if value is not cg.UNDEF else UNDEFINED_MARK
    t4 = clock()
    times["parse"] = t1 - t0
    times["compile"] = t2 - t1
    times.setdefault("py_compile", 0.0)
    times["codegen"] = (t3 - t2) - build_py_compile
    times["first_eval"] = (t4 - t3) - (times["py_compile"] - build_py_compile)
    times.pop("_generate", None)
    return times, value


def pyrego_stages(workload: Workload, budget: float, min_reps: int, warmup: bool = True) -> dict[str, Stat]:
    """pyrego's initialization stages, round-robin over the workload's policy sets (one case each).

    With ``warmup``, each policy set first goes through the pipeline once, untimed.
    """
    firsts: dict[int, Any] = {}
    for c in workload.cases:
        firsts.setdefault(c.group, c)
    order = [firsts[g] for g in sorted(firsts)]
    for c in order if warmup else ():  # first use of builtins, imports, regex compilation
        ps = workload.policy_sets[c.group]
        pyrego_stages_once(ps.modules, ps.v0, ps.data, c.query, c.input)
    samples: dict[str, list[float]] = {s: [] for s in STAGES}
    totals: list[float] = []
    clock = time.perf_counter
    deadline = clock() + budget
    i = 0
    while i < min_reps or clock() < deadline:
        c = order[i % len(order)]
        ps = workload.policy_sets[c.group]
        times, value = pyrego_stages_once(ps.modules, ps.v0, ps.data, c.query, c.input)
        if c.expected is not NO_EXPECTATION and normalize(value) != normalize(c.expected):
            raise RuntimeError(f"pyrego stages: {c.label} gave {short(value)}, expected {short(c.expected)}")
        for s in STAGES:
            samples[s].append(times[s])
        totals.append(sum(times[s] for s in STAGES))
        i += 1
    out = {s: Stat.of(v) for s, v in samples.items()}
    out["total"] = Stat.of(totals)
    return out


def engine_ready(adapter: Adapter) -> str | None:
    """None when the adapter can run here, else why not."""
    try:
        return adapter.available()
    except EngineUnavailable as exc:
        return str(exc)


__all__ = [
    "Config",
    "CONFIGS",
    "Point",
    "Measured",
    "Combined",
    "Stat",
    "Disagreement",
    "ProcessPools",
    "timed_loop",
    "build_steps",
    "run_threads",
    "run_interleaved",
    "check_agreement",
    "aci_case_times",
    "load_times",
    "fresh_times",
    "pyrego_stages",
    "pyrego_stages_once",
    "STAGES",
    "STAGE_TITLES",
    "engine_ready",
]
