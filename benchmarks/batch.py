"""Batch evaluation and compiled artifacts, measured.

1. Start-up per seed policy: load a compiled artifact and take a first
   decision (its Python code read back from pyrego's on-disk code cache, and
   compiled afresh with ``cache=False``), against a cold engine (policy text never seen by the process:
   parse, check, generate, compile, evaluate) and against regorus (engine
   creation, add_policy, set_input_json, eval_rule). Each is measured in this
   process after the imports, the minimum of ``--repeat`` runs.
2. ``eval_many`` against a loop of ``engine.eval_rule(path, input=x)`` at
   batch sizes 1, 10, 1,000 and 100,000 (inputs cycled from the seed inputs),
   on a warm engine; per-input time, minimum of repeats, the two interleaved.
3. Worker processes: a CPU-heavy policy over ``--heavy`` inputs, in process,
   then through a started pool (``batch_pool``; its start-up timed apart) of
   1 and 2 workers: Python values (pickled to the workers) and JSON Lines
   (``eval_lines``: the workers parse the text and send back output lines).

Usage: ``PYTHONPATH=src python benchmarks/batch.py [--quick] [--json OUT]``.
The machine's load average is printed beside the figures: on a shared
machine, compare figures taken at the same load only.
"""

# ruff: noqa: B023  (each timed closure runs within its own loop iteration)
from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pyrego
from pyrego.artifact import load_artifact, write_artifact
from pyrego.batch import batch_pool, eval_lines, eval_many

SEED = Path(os.environ.get("PYREGO_SEED", Path(__file__).resolve().parents[2] / "shared" / "bench" / "seed"))
if not SEED.is_dir():
    SEED = Path("/work/shared/bench/seed")
RULE = "data.bench.allow"

HEAVY = """package heavy
import rego.v1

violations contains msg if {
    some i, item in input.items
    some j, other in input.items
    i < j
    item.name == other.name
    msg := sprintf("duplicate %s at %d and %d", [item.name, i, j])
}

violations contains msg if {
    some item in input.items
    not regex.match(`^[a-z]+[0-9]*$`, item.name)
    msg := sprintf("bad name %q", [item.name])
}

score := sum([x | some item in input.items; x := item.weight * 2])

decision := {"allow": count(violations) == 0, "violations": violations, "score": score}
"""


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def seed() -> list[tuple[str, str, list[Any]]]:
    out = []
    for policy in sorted(SEED.glob("policies/*_policy.rego")):
        name = policy.name.removesuffix("_policy.rego")
        inputs = [json.loads(p.read_text()) for p in sorted(SEED.glob(f"inputs/{name}_input*.json"))]
        out.append((name, policy.read_text(), inputs))
    return out


def startup(repeat: int, report: dict[str, Any]) -> None:
    try:
        import regorus
    except ImportError:
        regorus = None
    print(f"\n## Start-up: load + first decision (ms, min of {repeat}; load average {load_average()})\n")
    print("| policy | artifact (code cached) | artifact (compile()) | cold engine | regorus | artifact file |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = report.setdefault("startup", {})
    counter = itertools.count()
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, inputs in seed():
            engine = pyrego.Engine()
            engine.add_policy(f"{name}.rego", text)
            target = Path(tmp) / f"{name}.py"
            write_artifact(engine, target)
            doc = inputs[0]
            doc_json = json.dumps(doc)

            def artifact() -> None:
                load_artifact(target).eval_rule(RULE, input=doc)

            def artifact_compiled() -> None:
                load_artifact(target, cache=False).eval_rule(RULE, input=doc)

            def cold() -> None:
                e = pyrego.Engine()
                e.add_policy(f"{name}.rego", f"{text}\n# {next(counter)}\n")  # never seen: no cache can answer
                e.eval_rule(RULE, input=doc)

            def rego_rs() -> None:
                e = regorus.Engine()
                e.add_policy(f"{name}.rego", text)
                e.set_input_json(doc_json)
                e.eval_rule(RULE)

            a0 = best(artifact_compiled, repeat) * 1e3
            artifact()  # (its code now in the code cache)
            a = best(artifact, repeat) * 1e3
            c = best(cold, repeat) * 1e3
            r = best(rego_rs, repeat) * 1e3 if regorus is not None else float("nan")
            size = target.stat().st_size
            rows[name] = {"artifact_ms": a, "artifact_uncached_ms": a0, "cold_engine_ms": c, "regorus_ms": r, "artifact_bytes": size}
            print(f"| {name} | {a:.2f} | {a0:.2f} | {c:.2f} | {r:.2f} | {size:,} B |")


def sizes(sizes_: list[int], repeat: int, report: dict[str, Any]) -> None:
    print(f"\n## eval_many vs a loop of eval_rule (us per input, min of {repeat}; load average {load_average()})\n")
    print("| policy | size | loop | eval_many | ratio (loop / batch) |")
    print("|---|---:|---:|---:|---:|")
    rows = report.setdefault("sizes", {})
    for name, text, inputs in seed():
        engine = pyrego.Engine()
        engine.add_policy(f"{name}.rego", text)
        for x in inputs * 20:
            engine.eval_rule(RULE, input=x)  # warm: the code in its fast form
        for size in sizes_:
            xs = [inputs[i % len(inputs)] for i in range(size)]
            rounds = max(1, 20_000 // size)  # each timing covers at least ~20,000 inputs

            def loop() -> None:
                ev = engine.eval_rule
                for _ in range(rounds):
                    for x in xs:
                        ev(RULE, input=x)

            def batch() -> None:
                for _ in range(rounds):
                    for _r in engine.eval_many(RULE, xs):
                        pass

            tl, tb = [], []
            for _ in range(repeat):  # interleaved: the load changes both alike
                tl.append(best(loop, 1))
                tb.append(best(batch, 1))
            per = rounds * size
            lo, ba = min(tl) / per * 1e6, min(tb) / per * 1e6
            rows[f"{name}/{size}"] = {"loop_us": lo, "batch_us": ba}
            print(f"| {name} | {size:,} | {lo:.2f} | {ba:.2f} | {lo / ba:.2f}x |")


def heavy_inputs(n: int, items: int) -> list[Any]:
    out = []
    for i in range(n):
        doc = [{"name": f"item{(i * 7 + k) % (2 * items)}", "weight": k % 5} for k in range(items)]
        if i % 10 == 0:
            doc.append({"name": "Bad Name", "weight": 1})
        out.append({"items": doc})
    return out


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def control(report: dict[str, Any]) -> float:
    """What two processes give this machine now: the same pure-Python loop in
    one worker, then split in two (1.9x or so on two idle cores)."""
    import multiprocessing

    work = 4_000_000
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [10, 10])
        start = time.perf_counter()
        pool.map(_spin, [work])
        one = time.perf_counter() - start
        start = time.perf_counter()
        pool.map(_spin, [work // 2, work // 2])
        two = time.perf_counter() - start
    report.setdefault("processes", {})["control_2_over_1"] = one / two
    return one / two


def processes(n: int, items: int, repeat: int, report: dict[str, Any]) -> None:
    engine = pyrego.Engine()
    engine.add_policy("heavy.rego", HEAVY)
    path = "data.heavy.decision"
    inputs = heavy_inputs(n, items)
    lines = [json.dumps(x).encode() + b"\n" for x in inputs]
    want = [r.value for r in eval_many(engine, path, inputs)]
    rows = report.setdefault("processes", {})
    print(
        f"\n## Worker processes: {n:,} inputs of a CPU-heavy policy ({items} items each; s, min of {repeat}; "
        f"{os.cpu_count()} cores; load average {load_average()})\n"
    )
    print("| how | pool start | values | JSON Lines | parent CPU: values | parent CPU: lines |")
    print("|---|---:|---:|---:|---:|---:|")

    parent_cpu: dict[str, tuple[float, float]] = {}

    def timed(values: Callable[[], Any], text: Callable[[], Any]) -> tuple[float, float]:
        def go_values() -> None:
            got = [r.value for r in values()]
            assert got == want

        def go_lines() -> None:
            assert sum(1 for _ in text()) == n

        v, j = best(go_values, repeat), best(go_lines, repeat)
        c0 = time.process_time()
        go_values()
        c1 = time.process_time()
        go_lines()
        parent_cpu[str(len(parent_cpu))] = (c1 - c0, time.process_time() - c1)
        return v, j

    results: dict[str, tuple[float, float]] = {}
    v, j = timed(lambda: eval_many(engine, path, inputs), lambda: eval_lines(engine, path, lines))
    results["in process"] = (v, j)
    rows["in process"] = {"values_s": v, "lines_s": j}
    pv, pj = parent_cpu["0"]
    print(f"| in process | - | {v:.3f} | {j:.3f} | {pv:.3f} | {pj:.3f} |")
    for procs in (1, 2):
        start = time.perf_counter()
        with batch_pool(engine, path, processes=procs, chunk_size=max(1, n // (procs * 8))) as pool:
            pool.start()
            started = time.perf_counter() - start
            v, j = timed(lambda: pool.eval_many(inputs), lambda: pool.eval_lines(lines))
        label = f"processes={procs}"
        results[label] = (v, j)
        pv, pj = parent_cpu[str(procs)]
        rows[label] = {"start_s": started, "values_s": v, "lines_s": j, "parent_cpu_values_s": pv, "parent_cpu_lines_s": pj}
        print(f"| {label} | {started:.3f} | {v:.3f} | {j:.3f} | {pv:.3f} | {pj:.3f} |")
    v1, j1 = results["processes=1"]
    v2, j2 = results["processes=2"]
    v0, j0 = results["in process"]
    print(f"\nprocesses=2 against processes=1: values {v1 / v2:.2f}x, JSON Lines {j1 / j2:.2f}x; against one process: {v0 / v2:.2f}x, {j0 / j2:.2f}x")
    rows["speedup_2_over_1"] = {"values": v1 / v2, "lines": j1 / j2}
    print(f"control: a pure-Python loop split over 2 processes ran {control(report):.2f}x one process (what this machine allows now)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, sizes up to 1,000, fewer heavy inputs")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--heavy", type=int, default=None, help="inputs for the worker-process measurement")
    ap.add_argument("--items", type=int, default=40, help="items per heavy input (the policy is quadratic in them)")
    ap.add_argument("--only", choices=("startup", "sizes", "processes"), action="append")
    ap.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    ns = ap.parse_args()
    repeat = ns.repeat or (3 if ns.quick else 7)
    report: dict[str, Any] = {"python": sys.version.split()[0], "pyrego": pyrego.__version__}
    only = set(ns.only or ("startup", "sizes", "processes"))
    if "startup" in only:
        startup(repeat, report)
    if "sizes" in only:
        sizes([1, 10, 1000] if ns.quick else [1, 10, 1000, 100_000], repeat, report)
    if "processes" in only:
        processes(ns.heavy or (500 if ns.quick else 3000), ns.items, min(repeat, 3), report)
    if ns.json:
        Path(ns.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
