"""``pyrego bench`` / ``python benchmarks/run.py``: run the benchmark suite.

::

    python benchmarks/run.py                      # full run, about 8 minutes on 2 cores
    python benchmarks/run.py --quick              # short periods, a smoke test
    python benchmarks/run.py --engines pyrego,regorus --workloads seed --workers 1,2,4

Writes ``results.json``, ``report.md`` and ``throughput_*.png`` into ``--out``.
Exit status: 0, or 1 when engines disagree (unless ``--allow-disagreement``)
or when nothing could be run, or 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from pyrego.bench import report
from pyrego.bench.engines import DEFAULT_ENGINES, Adapter, get_adapter
from pyrego.bench.runner import (
    CONFIGS,
    Combined,
    Config,
    Disagreement,
    Point,
    ProcessPools,
    aci_case_times,
    check_agreement,
    engine_ready,
    fresh_times,
    load_times,
    pyrego_stages,
    run_interleaved,
    run_threads,
)
from pyrego.bench.workloads import Paths, Workload, WorkloadUnavailable, default_paths, find_repo_root, load_workload

ALL_WORKLOADS = ("seed", "allow", "aci", "init")
MODES = ("threads", "processes")


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _workers(text: str) -> list[int]:
    try:
        ws = sorted({int(t) for t in _csv(text)})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--workers wants a list of numbers, like 1,2,4: {text!r}") from None
    if not ws or ws[0] < 1:
        raise argparse.ArgumentTypeError("--workers: counts start at 1")
    return ws


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    root = find_repo_root()
    default_out = str(root / "benchmarks" / "results") if root else "benchmarks/results"
    p = argparse.ArgumentParser(prog="pyrego bench", description="pyrego's benchmark suite against regorus, OPA and rego-cpp.")
    p.add_argument("--warmup", type=float, default=None, help="warm-up period per figure, seconds (default 3; --quick 0.2)")
    p.add_argument("--measure", type=float, default=None, help="measured period per figure, seconds (default 3; --quick 0.2)")
    p.add_argument("--workers", type=_workers, default=None, help="worker counts, e.g. 1,2,4 (default 1,2)")
    p.add_argument("--modes", default="threads,processes", help="worker kinds for counts above 1 (default threads,processes)")
    p.add_argument("--engines", default=",".join(DEFAULT_ENGINES), help="engines to run (default pyrego,regorus,opa,regopy,python)")
    p.add_argument("--workloads", default=",".join(ALL_WORKLOADS), help="workloads: seed,allow,aci,init (default all)")
    p.add_argument(
        "--out", default=default_out, help="output folder (default benchmarks/results in a checkout, else ./benchmarks/results)"
    )
    p.add_argument("--quick", action="store_true", help="short periods and fewer repetitions (a smoke test)")
    p.add_argument("--allow-disagreement", action="store_true", help="time engines even when their results differ")
    p.add_argument("--shared", default=None, help="the shared folder holding bench/seed and bench/aci")
    p.add_argument("--allow-inputs", default=None, help="folder of the allow-path inputs (default: the copy shipped in the package)")
    p.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no live progress bar (results are still printed)")
    return p


class Run:
    """One benchmark run: settings, engines, workloads and the JSON document being filled."""

    def __init__(self, args: argparse.Namespace, console: Console, argv: Sequence[str] = ()) -> None:
        self.args = args
        self.console = console
        self.quick: bool = args.quick
        default_period = 0.2 if self.quick else 3.0
        self.warmup: float = args.warmup if args.warmup is not None else default_period
        self.measure: float = args.measure if args.measure is not None else default_period
        self.workers: list[int] = args.workers or [1, 2]
        self.modes = [m for m in _csv(args.modes) if m in MODES]
        self.rounds = 1 if self.quick else 3
        self.aci_warmup = self.warmup / 4
        self.aci_measure = self.measure / 4
        self.paths: Paths = default_paths(args.shared, args.allow_inputs)
        self.results: dict[str, Any] = {
            "schema": "pyrego-bench/1",
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "environment": report.environment(),
            "settings": {
                "warmup_s": self.warmup,
                "measure_s": self.measure,
                "aci_warmup_s": self.aci_warmup,
                "aci_measure_s": self.aci_measure,
                "rounds_one_worker": self.rounds,
                "workers": self.workers,
                "modes": self.modes,
                "quick": self.quick,
                "spread": "half the interquartile range",
                "argv": list(argv),
            },
            "engines": [],
            "workloads": [],
            "agreement": {},
            "throughput": {"configs": [], "points": []},
            "aci": {},
            "init": {},
            "notes": [],
            "errors": [],
        }
        self.adapters: list[Adapter] = []
        self.workloads: dict[str, Workload] = {}
        self.wanted = [w for w in _csv(args.workloads) if w in ALL_WORKLOADS]

    # -- setup ------------------------------------------------------------------------

    def note(self, text: str) -> None:
        self.results["notes"].append(text)
        self.console.print(f"[yellow]note:[/] {text}")

    def error(self, text: str) -> None:
        self.results["errors"].append(text)
        self.console.print(f"[bold red]error:[/] {text}")

    def setup(self) -> None:
        for name in _csv(self.args.engines):
            try:
                a = get_adapter(name)
            except Exception as exc:  # noqa: BLE001
                self.note(f"{name}: {exc}")
                continue
            why = engine_ready(a)
            entry: dict[str, Any] = {"name": a.name, "title": a.title, "available": why is None, "note": why, "notes": list(a.notes)}
            if why is None:
                entry["version"] = a.version()
                self.adapters.append(a)
            else:
                self.note(f"{a.name} skipped: {why}")
            self.results["engines"].append(entry)
        needed = {w for w in self.wanted if w != "init"} | ({"seed"} if "init" in self.wanted else set())
        if "init" in self.wanted and "aci" not in needed:
            needed.add("aci")
        for name in ("seed", "allow", "aci"):
            if name not in needed:
                continue
            try:
                w = load_workload(name, self.paths)
            except WorkloadUnavailable as exc:
                self.note(f"workload {name} skipped: {exc}")
                continue
            self.workloads[name] = w
            if name in self.wanted or name == "seed":
                self.results["workloads"].append({"name": w.name, "title": w.title, "cases": len(w.cases), "notes": w.notes})

    def planned_units(self) -> int:
        n = len(self.workloads)  # agreement
        per_cfg = 1 + sum(1 for w in self.workers if w > 1) * len(self.modes)
        n += sum(per_cfg for c in self.configs() for a in self.adapters if a.runs(c.workload, c.engine_use))
        if "aci" in self.wanted and "aci" in self.workloads:
            n += 2 * len(self.adapters)
        if "init" in self.wanted:
            n += 2 + len(self.adapters)
        return n

    def configs(self) -> list[Config]:
        return [c for c in CONFIGS if c.workload in self.wanted and c.workload in self.workloads]

    # -- phases ------------------------------------------------------------------------

    def agreement(self, progress: Progress, task: Any) -> list[Disagreement]:
        ws = [self.workloads[n] for n in ("seed", "allow", "aci") if n in self.workloads and (n in self.wanted or n == "seed")]
        found, compared, skipped = check_agreement(
            self.adapters, ws, on_step=lambda d: progress.update(task, description=d)
        )
        progress.advance(task, len(ws))
        self.results["agreement"] = {
            "ok": not found,
            "compared": compared,
            "disagreements": [d.to_json() for d in found],
            "skipped": skipped,
            "allowed": bool(self.args.allow_disagreement),
        }
        if found:
            table = Table(title=f"ENGINES DISAGREE on {len(found)} case(s)", style="bold red", title_style="bold red")
            table.add_column("workload")
            table.add_column("case")
            table.add_column("expected")
            table.add_column("values")
            for d in found:
                table.add_row(d.workload, d.case, d.expected or "-", "\n".join(f"{k}: {v}" for k, v in d.values.items()))
            self.console.print(table)
        else:
            self.console.print(f"[green]agreement:[/] {compared} evaluations, all engines agree")
        return found

    def throughput(self, progress: Progress, task: Any, pools: ProcessPools) -> None:
        for cfg in self.configs():
            self.results["throughput"]["configs"].append({"key": cfg.key, "title": cfg.title})
            w = self.workloads[cfg.workload]
            progress.update(task, description=f"{cfg.key}: 1 worker, engines in turns")
            adapters = [a for a in self.adapters if a.runs(cfg.workload, cfg.engine_use)]
            one = run_interleaved(adapters, w, cfg, self.warmup, self.measure, self.rounds)
            for a in adapters:
                self._record(cfg, a.name, "threads", 1, one.get(a.name))
                progress.advance(task)
            plan = [(m, n) for n in self.workers if n > 1 for m in self.modes]
            for mode, n in plan:
                for a in adapters:
                    progress.update(task, description=f"{cfg.key} {a.name} x{n} {mode}")
                    got: Combined | BaseException
                    try:
                        if mode == "processes":
                            got = pools.run(a.name, self.paths, cfg, n, self.warmup, self.measure)
                        else:
                            got = run_threads(a, w, cfg, n, self.warmup, self.measure)
                    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                        got = exc
                    self._record(cfg, a.name, mode, n, got)
                    progress.advance(task)

    def _record(self, cfg: Config, engine: str, mode: str, workers: int, got: Combined | BaseException | None) -> None:
        label = f"{cfg.key} {engine} x{workers}" + (f" {mode}" if workers > 1 else "")
        pt = Point(cfg.key, engine, mode, workers)
        if isinstance(got, Combined):
            pt.evals, pt.seconds = got.evals, got.seconds
            pt.kelem_s, pt.cpu_kelem_s = got.rate / 1000, got.cpu_rate / 1000
            self.console.print(f"  {label}: [bold]{report.fmt_rate(pt.kelem_s)}[/] Kelem/s")
        else:
            pt.error = f"{type(got).__name__}: {got}" if got is not None else "not measured"
            self.error(f"{label}: {pt.error}")
        self.results["throughput"]["points"].append(pt.to_json())

    def aci(self, progress: Progress, task: Any) -> None:
        w = self.workloads.get("aci")
        if w is None:
            return
        out: dict[str, Any] = {"cases": {}, "load": {}, "skipped": []}
        self.results["aci"] = out
        min_reps = 1 if self.quick else 3
        for a in self.adapters:
            if not a.runs("aci"):
                progress.advance(task, 2)
                continue
            if not a.supports_v0:
                out["skipped"].append(f"{a.name}: no Rego v0 mode, ACI not run")
                progress.advance(task, 2)
                continue
            progress.update(task, description=f"aci: per-case times on {a.name}")
            try:
                out["cases"][a.name] = aci_case_times(a, w, self.aci_warmup, self.aci_measure)
                med = sorted(r["us_per_eval"] for r in out["cases"][a.name] if r["us_per_eval"])
                self.console.print(f"  aci {a.name}: median {report.fmt_time(med[len(med) // 2] * 1e-6)} per evaluation")
            except Exception as exc:  # noqa: BLE001
                self.error(f"aci cases on {a.name}: {type(exc).__name__}: {exc}")
            progress.advance(task)
            progress.update(task, description=f"aci: load times on {a.name}")
            try:
                cold = load_times(a, w, True, self.measure / 2, min_reps)
                warm = load_times(a, w, False, self.measure / 2, min_reps)
                out["load"][a.name] = {"cold": cold.to_json(), "warm": warm.to_json()}
                self.console.print(f"  aci {a.name} load: cold {report.fmt_time(cold.median)}, warm {report.fmt_time(warm.median)}")
            except Exception as exc:  # noqa: BLE001
                self.error(f"aci load on {a.name}: {type(exc).__name__}: {exc}")
            progress.advance(task)

    def init(self, progress: Progress, task: Any) -> None:
        out: dict[str, Any] = {"pyrego_stages": {}, "fresh": {}}
        self.results["init"] = out
        names = [a.name for a in self.adapters]
        for wname, min_reps in (("seed", 9), ("aci", 1 if self.quick else 3)):
            w = self.workloads.get(wname)
            if w is not None and "pyrego" in names:
                progress.update(task, description=f"init: pyrego stages on {wname}")
                try:
                    stages = pyrego_stages(w, self.measure, min_reps, warmup=not self.quick)
                    out["pyrego_stages"][wname] = {k: v.to_json() for k, v in stages.items()}
                    self.console.print(f"  init pyrego stages {wname}: total {report.fmt_time(stages['total'].median)}")
                except Exception as exc:  # noqa: BLE001
                    out["pyrego_stages"][wname] = {"error": f"{type(exc).__name__}: {exc}"}
                    self.error(f"pyrego stages on {wname}: {type(exc).__name__}: {exc}")
            progress.advance(task)
        seed = self.workloads.get("seed")
        for a in self.adapters:
            if seed is not None and a.runs("seed", "fresh-warm"):
                progress.update(task, description=f"init: fresh engines on {a.name}")
                try:
                    warm = fresh_times(a, seed, False, self.measure / 2, 9 if self.quick else 27)
                    cold = fresh_times(a, seed, True, self.measure / 2, 9 if self.quick else 27)
                    out["fresh"][a.name] = {"warm": warm.to_json(), "cold": cold.to_json()}
                    self.console.print(
                        f"  init {a.name}: fresh warm {report.fmt_time(warm.median)}, cold {report.fmt_time(cold.median)}"
                    )
                except Exception as exc:  # noqa: BLE001
                    self.error(f"fresh engines on {a.name}: {type(exc).__name__}: {exc}")
            progress.advance(task)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark suite; returns the exit status."""
    parser = build_parser()
    argv = list(argv) if argv is not None else sys.argv[1:]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    console = Console(stderr=False, highlight=False)
    run = Run(args, console, argv)
    t0 = time.perf_counter()
    run.setup()
    if not run.adapters:
        run.error("no engine available")
        return 1
    if not run.workloads:
        run.error("no workload available")
        return 1
    out = Path(args.out)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    status = 0
    pools = ProcessPools()
    try:
        with Progress(*columns, console=console, disable=args.no_progress, transient=True) as progress:
            task = progress.add_task("agreement", total=run.planned_units())
            disagreements = run.agreement(progress, task)
            if disagreements and not args.allow_disagreement:
                run.error("engines disagree: not timing them (use --allow-disagreement to time anyway)")
                status = 1
            else:
                run.throughput(progress, task, pools)
                if "aci" in run.wanted:
                    run.aci(progress, task)
                if "init" in run.wanted:
                    run.init(progress, task)
    finally:
        pools.close()
        run.results["duration_s"] = time.perf_counter() - t0
        run.results["load_average_end"] = report.environment().get("load_average")
    written = report.write_outputs(run.results, out, plots=not args.no_plots)
    for what, path in written.items():
        console.print(f"wrote {what}: {path}")
    if run.results["agreement"].get("disagreements"):
        console.print("[bold red]ENGINES DISAGREE: see the top of the report[/]")
    return status


__all__ = ["main", "build_parser", "Run"]
