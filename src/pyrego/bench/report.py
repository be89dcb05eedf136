"""Outputs of a benchmark run: the JSON of raw figures, a Markdown report in the
manner of regorus's ``engine_evaluation_benchmark.md``, and PNG plots of
throughput against workers (matplotlib, imported only here and only if
installed).

Everything is rendered from the JSON document (:func:`write_outputs`), so a
report can be rebuilt from ``results.json`` alone (:func:`render_markdown`).

Ratios are always "times regorus" in speed: for throughput, the engine's rate
divided by regorus's; for a time, regorus's time divided by the engine's. A
ratio above 1 means faster than regorus.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

from pyrego.bench.runner import CONFIGS, STAGE_TITLES, STAGES

REFERENCE = "regorus"
MAIN = "pyrego"
#: The seed policies written by hand in Python (pyrego.bench.handwritten): pyrego's own target.
HANDWRITTEN = "python"


def environment() -> dict[str, Any]:
    """CPU, cores, OS and Python, for the report."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        load = []
    return {
        "load_average": load,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "machine": platform.machine(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
    }


# ---------------------------------------------------------------- formatting


def fmt_time(seconds: float | None, spread: float | None = None, per: str = "") -> str:
    """``12.3 us`` (with ``/iter`` and ``(+/- 0.4)`` when asked)."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            break
    value = seconds / scale
    digits = 1 if value < 100 else 0
    text = f"{value:.{digits}f} {unit}{per}"
    if spread is not None and not math.isnan(spread) and spread > 0:
        text += f" (+/- {spread / scale:.{digits}f})"
    return text


def fmt_rate(kelem: float | None) -> str:
    if kelem is None or kelem <= 0:
        return "n/a"
    return f"{kelem:.1f}" if kelem < 100 else f"{kelem:.0f}"


def fmt_ratio(r: float | None) -> str:
    if r is None or math.isnan(r) or r <= 0:
        return "-"
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x"


def _stat(d: dict[str, Any] | None) -> tuple[float | None, float | None]:
    if not d or not d.get("n"):
        return None, None
    return d.get("median_s"), d.get("spread_s")


def _ratio_rate(value: float | None, ref: float | None) -> float | None:
    if not value or not ref:
        return None
    return value / ref


def _ratio_time(value: float | None, ref: float | None) -> float | None:
    if not value or not ref:
        return None
    return ref / value


# ---------------------------------------------------------------- lookups


def _engines(results: dict[str, Any]) -> list[str]:
    return [e["name"] for e in results.get("engines", []) if e.get("available")]


def _point(results: dict[str, Any], config: str, engine: str, mode: str, workers: int) -> dict[str, Any] | None:
    for p in results.get("throughput", {}).get("points", []):
        if p["config"] == config and p["engine"] == engine and p["workers"] == workers:
            if workers == 1 or p["mode"] == mode:
                return p  # type: ignore[no-any-return]
    return None


def rate(results: dict[str, Any], config: str, engine: str, mode: str = "threads", workers: int = 1, cpu: bool = False) -> float | None:
    """Kelem/s of one point (``cpu``: per CPU second), or None when it was not measured (or failed)."""
    p = _point(results, config, engine, mode, workers)
    if p is None or p.get("error"):
        return None
    return p.get("cpu_kelem_s" if cpu else "kelem_s") or None


def _worker_rows(results: dict[str, Any]) -> list[tuple[str, int]]:
    s = results.get("settings", {})
    rows: list[tuple[str, int]] = [("threads", 1)]
    for mode in s.get("modes", []):
        for w in s.get("workers", []):
            if w > 1:
                rows.append((mode, w))
    return rows


def _aci_median_us(results: dict[str, Any], engine: str) -> dict[str, float]:
    out = {}
    for row in results.get("aci", {}).get("cases", {}).get(engine, []):
        if row.get("us_per_eval"):
            out[row["case"]] = row["us_per_eval"]
    return out


# ---------------------------------------------------------------- headline and analysis


def headline(results: dict[str, Any]) -> list[str]:
    """The headline ratios of pyrego against regorus, one line each."""
    engines = _engines(results)
    if MAIN not in engines:
        return []
    lines = []
    has_ref = REFERENCE in engines

    def vs(config: str, label: str) -> None:
        mine = rate(results, config, MAIN)
        if mine is None:
            return
        ref = rate(results, config, REFERENCE) if has_ref else None
        extra = f", {fmt_ratio(_ratio_rate(mine, ref))} regorus ({fmt_rate(ref)} Kelem/s)" if ref else ""
        cpu_ratio = _ratio_rate(rate(results, config, MAIN, cpu=True), rate(results, config, REFERENCE, cpu=True))
        if ref and cpu_ratio:
            extra += f"; per CPU second {fmt_ratio(cpu_ratio)}"
        hand = rate(results, config, HANDWRITTEN)
        if hand:
            extra += f"; {fmt_ratio(_ratio_rate(mine, hand))} hand-written Python ({fmt_rate(hand)} Kelem/s"
            hand_cpu = _ratio_rate(rate(results, config, MAIN, cpu=True), rate(results, config, HANDWRITTEN, cpu=True))
            extra += f", per CPU second {fmt_ratio(hand_cpu)})" if hand_cpu else ")"
        lines.append(f"{label}: pyrego {fmt_rate(mine)} Kelem/s{extra}")

    vs("seed/prepared/object", "Seed, prepared engines, 1 worker")
    vs("seed/prepared/json", "Seed, prepared engines, JSON input, 1 worker")
    vs("allow/prepared/object", "Allow path, prepared engines, 1 worker")
    vs("seed/fresh-warm/object", "Seed, fresh engines, warm")
    vs("seed/fresh-cold/object", "Seed, fresh engines, cold")
    aci_mine = _aci_median_us(results, MAIN)
    aci_ref = _aci_median_us(results, REFERENCE) if has_ref else {}
    common = sorted(set(aci_mine) & set(aci_ref))
    if aci_mine:
        med = statistics.median(aci_mine.values())
        text = f"ACI, per case (median of {len(aci_mine)} cases): pyrego {fmt_time(med * 1e-6)}"
        if common:
            ratios = [aci_ref[c] / aci_mine[c] for c in common]
            text += f", {fmt_ratio(statistics.median(ratios))} regorus (range {fmt_ratio(min(ratios))} to {fmt_ratio(max(ratios))})"
        lines.append(text)
    load = results.get("aci", {}).get("load", {})
    if MAIN in load:
        parts = []
        for kind in ("cold", "warm"):
            m, _ = _stat(load[MAIN].get(kind))
            r, _ = _stat(load.get(REFERENCE, {}).get(kind))
            if m:
                parts.append(f"{kind} {fmt_time(m)}" + (f" ({fmt_ratio(_ratio_time(m, r))} regorus)" if r else ""))
        if parts:
            lines.append("ACI load + first evaluation: pyrego " + ", ".join(parts))
    one = rate(results, "seed/prepared/object", MAIN)
    for w in sorted(results.get("settings", {}).get("workers", [])):
        if w <= 1 or not one:
            continue
        for mode in ("processes", "threads"):
            r = rate(results, "seed/prepared/object", MAIN, mode, w)
            if r:
                lines.append(f"Seed, prepared, {w} {mode}: pyrego {fmt_rate(r)} Kelem/s = {r / one:.2f}x its 1-worker rate")
    return lines


def analysis(results: dict[str, Any]) -> list[str]:
    """Paragraphs of analysis generated from the numbers."""
    engines = _engines(results)
    out: list[str] = []
    ranked = []
    for e in engines:
        r = rate(results, "seed/prepared/object", e)
        if r:
            ranked.append((r, e))
    ranked.sort(reverse=True)
    if ranked:
        best_r, best = ranked[0]
        order = ", ".join(f"{e} {fmt_rate(r)}" for r, e in ranked)
        text = f"With prepared engines on the seed workload and one worker, the order is {order} Kelem/s"
        if len(ranked) > 1:
            text += f"; {best} is {best_r / ranked[1][0]:.1f}x the next engine"
        out.append(text + ".")
    cuts = []
    for e in engines:
        o = rate(results, "seed/prepared/object", e)
        j = rate(results, "seed/prepared/json", e)
        if o and j:
            cuts.append(f"{e} {100 * (j / o - 1):+.0f}%")
    if cuts:
        out.append(
            "Parsing JSON text per evaluation instead of passing a pre-parsed object changes throughput by: "
            + ", ".join(cuts)
            + " (negative: JSON is slower; OPA takes JSON in any case, so an object costs it a json.dumps)."
        )
    fw = []
    for e in engines:
        p = rate(results, "seed/prepared/object", e)
        w = rate(results, "seed/fresh-warm/object", e)
        c = rate(results, "seed/fresh-cold/object", e)
        if p and w:
            item = f"{e}: warm {p / w:.0f}x slower than prepared"
            if c:
                item += f", cold {p / c:.0f}x"
            fw.append(item)
    if fw:
        out.append("Creating an engine per evaluation is the expensive configuration for every engine (" + "; ".join(fw) + ").")
    mine_w, mine_c = rate(results, "seed/fresh-warm/object", MAIN), rate(results, "seed/fresh-cold/object", MAIN)
    if mine_w and mine_c:
        out.append(
            f"pyrego's compile cache makes a fresh engine {mine_w / mine_c:.1f}x faster when the policy text was seen "
            "before (warm) than when it was not (cold): a cold engine parses and compiles the policy and plans its rules as "
            "closures (generating and compiling Python only for rules in other shapes); a warm "
            "one finds the parsed modules and the compiled code in its caches, keyed by the policy texts."
        )
    scaling = []
    for e in engines:
        one = rate(results, "seed/prepared/object", e)
        if not one:
            continue
        parts = []
        for mode in ("threads", "processes"):
            for w in sorted(results.get("settings", {}).get("workers", [])):
                r = rate(results, "seed/prepared/object", e, mode, w) if w > 1 else None
                if r:
                    parts.append(f"{w} {mode} {r / one:.2f}x")
        if parts:
            scaling.append(f"{e} ({', '.join(parts)})")
    if scaling:
        cores = results.get("environment", {}).get("usable_cores")
        out.append(
            f"Scaling from one worker (prepared, seed; {cores} usable cores): " + "; ".join(scaling) + ". "
            "Threads cannot run Python code in parallel under the GIL, so pure-Python work does not scale with threads; "
            "an engine whose native calls release the GIL can. Processes scale up to the number of cores."
        )
    env = results.get("environment", {})
    loads = [x[0] for x in (env.get("load_average"), results.get("load_average_end")) if x]
    cores = env.get("usable_cores") or 1
    if loads and max(loads) >= 0.5 * cores:
        out.append(
            f"Other processes were using the machine during the run (1-minute load average {min(loads):.1f} to "
            f"{max(loads):.1f} on {cores} cores): absolute figures vary from run to run, and multi-worker figures "
            "understate what idle cores would give. Ratios between engines at one worker, taken in turns, are the "
            "steadiest figures here; compare the per-CPU-second table too."
        )
    aci_mine = _aci_median_us(results, MAIN)
    for e in engines:
        if e == MAIN:
            continue
        other = _aci_median_us(results, e)
        common = sorted(set(aci_mine) & set(other))
        if common:
            faster = [c for c in common if aci_mine[c] < other[c]]
            out.append(
                f"ACI: pyrego is faster than {e} on {len(faster)} of {len(common)} cases "
                f"(median speed ratio {fmt_ratio(statistics.median(other[c] / aci_mine[c] for c in common))})."
            )
    stages = results.get("init", {}).get("pyrego_stages", {}).get("seed")
    if stages:
        meds = {s: _stat(stages.get(s))[0] or 0.0 for s in STAGES}
        total = sum(meds.values())
        if total > 0:
            top = max(meds, key=lambda s: meds[s])
            out.append(
                f"Of pyrego's cold initialization of a seed policy ({fmt_time(total)} in all), the largest part is "
                f"{STAGE_TITLES[top]} ({100 * meds[top] / total:.0f}%)."
            )
    return out


# ---------------------------------------------------------------- markdown


def render_markdown(results: dict[str, Any]) -> str:
    """The Markdown report of a run (from its JSON document)."""
    env = results.get("environment", {})
    s = results.get("settings", {})
    engines = _engines(results)
    lines: list[str] = ["# pyrego engine evaluation benchmark", ""]
    agreement = results.get("agreement", {})
    if agreement.get("disagreements"):
        lines += ["## DISAGREEMENT BETWEEN ENGINES", ""]
        lines.append(
            f"**{len(agreement['disagreements'])} case(s) gave different results on different engines "
            + ("(run with --allow-disagreement: timed anyway).**" if agreement.get("allowed") else "(the run stopped before timing).**")
        )
        lines += ["", "| Workload | Case | Expected | Values |", "|---|---|---|---|"]
        for d in agreement["disagreements"]:
            vals = "<br>".join(f"{k}: `{v}`" for k, v in d["values"].items())
            lines.append(f"| {d['workload']} | {d['case']} | `{d['expected'] or '-'}` | {vals} |")
        lines.append("")
    lines += ["## Test Environment", ""]
    lines.append(f"- **CPU**: {env.get('cpu', '?')}")
    lines.append(f"- **Cores**: {env.get('cores', '?')} ({env.get('usable_cores', '?')} usable)")
    lines.append(f"- **OS**: {env.get('os', '?')}")
    lines.append(f"- **Python**: {env.get('python', '?')}")
    load0, load1 = env.get("load_average"), results.get("load_average_end")
    if load0:
        lines.append(
            f"- **Load average** (1, 5, 15 min) at the start: {', '.join(map(str, load0))}"
            + (f"; at the end: {', '.join(map(str, load1))}" if load1 else "")
            + " (other work on the machine lowers the figures, multi-worker ones most)"
        )
    for e in results.get("engines", []):
        state = e.get("version") if e.get("available") else f"not run: {e.get('note')}"
        lines.append(f"- **{e.get('title', e['name'])}**: {state}")
    lines.append(
        f"- **Periods**: {s.get('warmup_s')} s warm-up, {s.get('measure_s')} s measured per figure"
        f" (ACI per case: {s.get('aci_warmup_s')} s + {s.get('aci_measure_s')} s)"
    )
    lines.append(f"- **Workers**: {', '.join(str(w) for w in s.get('workers', []))} ({', '.join(s.get('modes', []))})")
    lines.append(f"- **Date**: {results.get('started', '?')}; run took {results.get('duration_s', 0):.0f} s")
    if s.get("argv") is not None:
        lines.append(f"- **Command**: `{' '.join(['python benchmarks/run.py', *s['argv']])}`")
    lines.append("")
    head = headline(results)
    if head:
        lines += ["## Headline", ""] + [f"- {h}" for h in head] + [""]
    lines += ["## Benchmark Overview", ""]
    lines.append(
        "regorus's engine-evaluation benchmark, reproduced from Python: the 9 seed policies x 3 inputs, query "
        "`data.bench.allow`, evaluated round-robin over policies and inputs. Throughput is in thousands of "
        "evaluations per second (Kelem/s), counted over a measured period after a warm-up period. With several "
        "workers, each has its own engines (clones) and the figure is the sum of the workers' rates; thread "
        "workers share one process, process workers are separate (spawned) Python processes. 1-worker figures are "
        f"taken with the engines in turns ({s.get('rounds_one_worker', 1)} round(s) of the measured period, rotating "
        "order), so that changes in the machine's load fall on every engine alike. Every figure is also "
        "given as a ratio to regorus (above 1: faster than regorus). The `python` engine, where it was run, is "
        "not a Rego engine but the seed policies written by hand in Python (prepared rows of the seed and allow "
        "workloads only): the headline gives pyrego's rate as a ratio to it too. Results of all engines were compared before "
        f"timing ({agreement.get('compared', 0)} evaluations): "
        + ("they agree." if not agreement.get("disagreements") else "**they do not agree, see above.**")
    )
    lines.append("")
    for w in results.get("workloads", []):
        lines.append(f"- **{w['name']}**: {w['title']}")
        for n in w.get("notes", []):
            lines.append(f"  - {n}")
    lines += ["", "## Configurations", ""]
    for i, cfg in enumerate(CONFIGS, 1):
        if any(p["config"] == cfg.key for p in results.get("throughput", {}).get("points", [])):
            lines.append(f"{i}. **{cfg.title}** (`{cfg.key}`)")
    lines.append("")
    notes = [f"**{e['name']}**: {n}" for e in results.get("engines", []) if e.get("available") for n in e.get("notes", [])]
    if notes:
        lines += ["Engine notes:", ""] + [f"- {n}" for n in notes] + [""]
    lines += ["## Performance Results", ""]
    rows = _worker_rows(results)
    for cfg in CONFIGS:
        if not any(p["config"] == cfg.key for p in results.get("throughput", {}).get("points", [])):
            continue
        lines += [f"### {cfg.title}", ""]
        header = "| Workers |"
        rule = "|---:|"
        for e in engines:
            header += f" {e} (Kelem/s) |" + (" x regorus |" if e != REFERENCE else "")
            rule += "---:|" + ("---:|" if e != REFERENCE else "")
        lines += [header, rule]
        for mode, w in rows:
            label = "1" if w == 1 else f"{w} {mode}"
            row = f"| {label} |"
            ref = rate(results, cfg.key, REFERENCE, mode, w)
            for e in engines:
                p = _point(results, cfg.key, e, mode, w)
                if p is None:
                    cell = "-"
                elif p.get("error"):
                    cell = "error"
                else:
                    cell = fmt_rate(p.get("kelem_s"))
                row += f" {cell} |"
                if e != REFERENCE:
                    row += f" {fmt_ratio(_ratio_rate(rate(results, cfg.key, e, mode, w), ref))} |"
            lines.append(row)
        plot = results.get("plots", {}).get(cfg.key)
        lines += ["", f"![{cfg.key}]({plot})" if plot else "", ""]
    lines += _cpu_section(results, engines)
    lines += _aci_section(results, engines)
    lines += _init_section(results, engines)
    lines += ["## Analysis", ""]
    paras = analysis(results)
    lines += [f"{i}. {p}" for i, p in enumerate(paras, 1)] if paras else ["No figures to analyse."]
    lines.append("")
    errors = results.get("errors", [])
    skipped = results.get("notes", [])
    if errors or skipped:
        lines += ["## Notes and errors", ""] + [f"- {n}" for n in skipped] + [f"- **error**: {e}" for e in errors] + [""]
    return "\n".join(lines).replace("\n\n\n", "\n\n")


def _cpu_section(results: dict[str, Any], engines: list[str]) -> list[str]:
    keys = [c for c in CONFIGS if any(rate(results, c.key, e, cpu=True) for e in engines)]
    if not keys:
        return []
    lines = [
        "### One worker, per CPU second",
        "",
        "The 1-worker figures again, with evaluations divided by the CPU time of the worker's thread instead of "
        "the wall time: less sensitive to other work on the machine (see the load average above). Work an engine "
        "does on other threads (OPA's Go runtime) is not counted.",
        "",
    ]
    header, rule = "| Configuration |", "|---|"
    for e in engines:
        header += f" {e} (Kelem/CPU-s) |" + (" x regorus |" if e != REFERENCE else "")
        rule += "---:|" + ("---:|" if e != REFERENCE else "")
    lines += [header, rule]
    for cfg in keys:
        ref = rate(results, cfg.key, REFERENCE, cpu=True)
        row = f"| `{cfg.key}` |"
        for e in engines:
            v = rate(results, cfg.key, e, cpu=True)
            row += f" {fmt_rate(v)} |" + (f" {fmt_ratio(_ratio_rate(v, ref))} |" if e != REFERENCE else "")
        lines.append(row)
    lines.append("")
    return lines


def _aci_section(results: dict[str, Any], engines: list[str]) -> list[str]:
    aci = results.get("aci", {})
    cases = aci.get("cases", {})
    if not cases:
        return []
    lines = ["## Large policy: ACI", ""]
    lines.append(
        "The Azure Container Instances policy set (Rego v0, three modules). Per case: evaluation time on a "
        "prepared engine (set input, evaluate), one worker; ratio = regorus's time / the engine's time."
    )
    lines.append("")
    names = [e for e in engines if e in cases]
    header, rule = "| Case |", "|---|"
    for e in names:
        header += f" {e} |" + (" x regorus |" if e != REFERENCE else "")
        rule += "---:|" + ("---:|" if e != REFERENCE else "")
    lines += [header, rule]
    per = {e: _aci_median_us(results, e) for e in names}
    labels = [r["case"] for r in cases[names[0]]] if names else []
    for label in labels:
        row = f"| {label} |"
        ref = per.get(REFERENCE, {}).get(label)
        for e in names:
            v = per[e].get(label)
            row += f" {fmt_time(v * 1e-6) if v else 'n/a'} |"
            if e != REFERENCE:
                row += f" {fmt_ratio(_ratio_time(v, ref))} |"
        lines.append(row)
    lines.append("")
    load = aci.get("load", {})
    if load:
        lines += [
            "Load time of the policy set: a new engine, the three modules and the case's data added, and the first "
            "case evaluated once (median, +/- half the interquartile range). Cold: policy text never seen by the "
            "process (pyrego also clears its compile cache); warm: the same text again.",
            "",
            "| Engine | cold | x regorus | warm | x regorus |",
            "|---|---:|---:|---:|---:|",
        ]
        for e in [n for n in engines if n in load]:
            c, cs = _stat(load[e].get("cold"))
            w, ws = _stat(load[e].get("warm"))
            rc, _ = _stat(load.get(REFERENCE, {}).get("cold"))
            rw, _ = _stat(load.get(REFERENCE, {}).get("warm"))
            lines.append(
                f"| {e} | {fmt_time(c, cs)} | {fmt_ratio(_ratio_time(c, rc))} | {fmt_time(w, ws)} | {fmt_ratio(_ratio_time(w, rw))} |"
            )
        lines.append("")
    for n in aci.get("skipped", []):
        lines.append(f"- {n}")
    lines.append("")
    return lines


def _init_section(results: dict[str, Any], engines: list[str]) -> list[str]:
    init = results.get("init", {})
    if not init:
        return []
    lines = ["## Initialization cost", ""]
    stages = init.get("pyrego_stages", {})
    if stages:
        lines.append(
            "pyrego's cold initialization in its parts (pyrego.parse.parser, pyrego.compile.compiler, pyrego.codegen.generator with the rules' "
            "closures (pyrego.codegen.closures), Python compile()+exec of generated code for rules in other shapes, first call "
            "of the rule function on a new evaluation context), "
            "per policy set: median with +/- half the interquartile range; share = part of the sum of the stages."
        )
        lines.append("")
        cols = [k for k in ("seed", "aci") if k in stages]
        header = "| Stage |" + "".join(f" {k} | share |" for k in cols)
        lines += [header, "|---|" + "---:|---:|" * len(cols)]
        for st in STAGES + ("total",):
            row = f"| {STAGE_TITLES.get(st, 'sum of the stages')} |"
            for k in cols:
                m, sp = _stat(stages[k].get(st))
                tot, _ = _stat(stages[k].get("total"))
                share = f"{100 * m / sum(_stat(stages[k].get(x))[0] or 0 for x in STAGES):.0f}%" if m and tot else "-"
                row += f" {fmt_time(m, sp, '/iter')} | {share if st != 'total' else ''} |"
            lines.append(row)
        lines.append("")
        for k in cols:
            if stages[k].get("error"):
                lines.append(f"- {k}: {stages[k]['error']}")
    fresh = init.get("fresh", {})
    if fresh:
        lines += [
            "A fresh engine per evaluation on the seed workload (new engine, add the policy, set the input, evaluate), "
            "timed one by one: median (+/- half the interquartile range); ratio = regorus's time / the engine's time.",
            "",
            "| Engine | fresh, warm | x regorus | fresh, cold | x regorus |",
            "|---|---:|---:|---:|---:|",
        ]
        rw, _ = _stat(fresh.get(REFERENCE, {}).get("warm"))
        rc, _ = _stat(fresh.get(REFERENCE, {}).get("cold"))
        for e in [n for n in engines if n in fresh]:
            w, ws = _stat(fresh[e].get("warm"))
            c, cs = _stat(fresh[e].get("cold"))
            lines.append(
                f"| {e} | {fmt_time(w, ws, '/iter')} | {fmt_ratio(_ratio_time(w, rw))} | {fmt_time(c, cs, '/iter')} | {fmt_ratio(_ratio_time(c, rc))} |"
            )
        lines.append("")
    return lines


# ---------------------------------------------------------------- plots


def write_plots(results: dict[str, Any], out: Path) -> tuple[dict[str, str], str | None]:
    """One PNG per configuration: Kelem/s against workers, a line per engine and mode.

    Returns ({config key: file name}, None) or ({}, why no plots were made).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}, "matplotlib is not installed: no plots (pip install matplotlib)"
    engines = _engines(results)
    points = results.get("throughput", {}).get("points", [])
    made: dict[str, str] = {}
    colors = {"pyrego": "tab:blue", "regorus": "tab:orange", "opa": "tab:green", "regopy": "tab:red", "python": "tab:gray"}
    for cfg in CONFIGS:
        mine = [p for p in points if p["config"] == cfg.key and not p.get("error") and p.get("kelem_s")]
        if not mine:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=80)
        for e in engines:
            one = [p for p in mine if p["engine"] == e and p["workers"] == 1]
            for mode, style in (("threads", "-"), ("processes", "--")):
                series = sorted(
                    [(p["workers"], p["kelem_s"]) for p in mine if p["engine"] == e and p["mode"] == mode and p["workers"] > 1]
                    + [(1, p["kelem_s"]) for p in one[:1]]
                )
                if len(series) < 2 and mode == "processes":
                    continue
                xs, ys = zip(*series) if series else ((), ())
                ax.plot(xs, ys, style, marker="o", color=colors.get(e), label=f"{e} {mode}")
        ax.set_yscale("log")
        ax.set_xlabel("workers")
        ax.set_ylabel("Kelem/s (log scale)")
        ax.set_xticks(sorted({p["workers"] for p in mine}))
        ax.set_title(cfg.title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
        fig.tight_layout()
        name = "throughput_" + cfg.key.replace("/", "_") + ".png"
        fig.savefig(out / name)
        plt.close(fig)
        made[cfg.key] = name
    return made, None


def write_outputs(results: dict[str, Any], out: Path, plots: bool = True) -> dict[str, Path]:
    """Write ``results.json``, the PNG plots and ``report.md`` into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    if plots:
        made, why = write_plots(results, out)
        results["plots"] = made
        if why:
            results.setdefault("notes", []).append(why)
        for key, name in made.items():
            written[f"plot:{key}"] = out / name
    json_path = out / "results.json"
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False, default=str) + "\n", encoding="utf-8")
    written["json"] = json_path
    md_path = out / "report.md"
    md_path.write_text(render_markdown(results), encoding="utf-8")
    written["markdown"] = md_path
    return written


__all__ = [
    "environment",
    "fmt_time",
    "fmt_rate",
    "fmt_ratio",
    "rate",
    "headline",
    "analysis",
    "render_markdown",
    "write_plots",
    "write_outputs",
]
