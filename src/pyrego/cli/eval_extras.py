"""``pyrego eval``'s observability flags, as ``opa eval`` has them.

- ``--explain notes|fails|full|debug``: the evaluation's trace (OPA's event
  kinds and layout, see :mod:`pyrego.instrument.tracing`); printed before the result in
  the pretty format, as ``"explanation"`` (a list of events) in JSON.
- ``--metrics``: OPA's timers (``timer_rego_load_files_ns``,
  ``timer_rego_module_parse_ns``, ``timer_rego_module_compile_ns``,
  ``timer_rego_query_parse_ns``, ``timer_rego_query_compile_ns``,
  ``timer_rego_query_eval_ns``), as a ``Metric | Value`` table or under
  ``"metrics"``; ``--instrument`` adds the evaluation's instrumentation
  (``timer_eval_op_rule_index_ns``, ``counter_eval_op_virtual_cache_hits``
  and ``_misses``, ``counter_eval_op_rule_index``).
- ``--profile`` (with ``--profile-sort`` and ``--profile-limit``): time and
  counts per source line, OPA's columns (``Time``, ``Num Eval``, ``Num
  Redo``, ``Num Gen Expr``, ``Location``) or ``"profile"``.
- ``--coverage``: OPA's coverage report under ``"coverage"`` (JSON), or the
  ``Overall Coverage`` figure (pretty).

With none of them the command evaluates exactly as before; with any of them
it evaluates through the instrumented program (:mod:`pyrego.instrument.evaluate`).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pyrego.cli.output import ascii_table, format_result

if TYPE_CHECKING:  # (the instrumentation is loaded when a flag asks for it)
    from pyrego.instrument.tracing import TraceEvent

EXPLAIN_CHOICES = ("off", "notes", "fails", "full", "debug")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of this module (on the ``eval`` parser)."""
    from pyrego.instrument.profiler import DEFAULT_SORT, SORT_CRITERIA

    parser.add_argument("--explain", choices=EXPLAIN_CHOICES, default="off", help="print the evaluation's trace (default off)")
    parser.add_argument("--metrics", action="store_true", help="report timers of loading, compiling and evaluating")
    parser.add_argument("--instrument", action="store_true", help="add the evaluation's instrumentation to the metrics")
    parser.add_argument("--profile", action="store_true", help="report time and counts per expression line")
    parser.add_argument(
        "--profile-sort",
        action="append",
        metavar="CRITERIA",
        help=f"order of profile rows, comma-separated, from {', '.join(SORT_CRITERIA)} (default {','.join(DEFAULT_SORT)})",
    )
    parser.add_argument("--profile-limit", type=int, default=10, metavar="N", help="profile rows shown (default 10; 0: all)")
    parser.add_argument("--coverage", action="store_true", help="report which lines the evaluation covered")


class EvalExtras:
    """What the flags ask of one ``pyrego eval`` run: timers, the instrumented evaluation, the output."""

    def __init__(self, ns: argparse.Namespace, engine: Any) -> None:
        self.engine = engine
        self.rego_v0 = bool(getattr(ns, "v0_compatible", False))
        self.explain: str = getattr(ns, "explain", "off") or "off"
        self.metrics_on = bool(getattr(ns, "metrics", False) or getattr(ns, "instrument", False))
        self.instrument = bool(getattr(ns, "instrument", False))
        self.profile_on = bool(getattr(ns, "profile", False))
        self.coverage_on = bool(getattr(ns, "coverage", False))
        self.sort = _sort_criteria(getattr(ns, "profile_sort", None))
        self.limit = int(getattr(ns, "profile_limit", 10))
        self.metrics: dict[str, int] = {}
        self.events: list[TraceEvent] | None = None
        self.profile: list[Any] | None = None
        self.coverage: dict[str, Any] | None = None

    @property
    def instrumented(self) -> bool:
        """Whether the evaluation runs through the instrumented program."""
        return self.explain != "off" or self.profile_on or self.coverage_on or self.instrument

    @contextmanager
    def loading(self) -> Iterator[dict[str, int] | None]:
        """Around the loading of ``-d`` files: parse and compile timers (with
        ``--metrics``). Gives the dict the loading adds the nanoseconds it
        spent parsing (``"parse"``) and compiling (``"compile"``) to, or None
        when no metrics are asked for."""
        if not self.metrics_on:
            yield None
            return
        spent = {"parse": 0, "compile": 0}
        start = time.perf_counter_ns()
        try:
            yield spent
        finally:
            total = time.perf_counter_ns() - start
            self.metrics["timer_rego_load_files_ns"] = total - spent["parse"] - spent["compile"]
            self.metrics["timer_rego_module_parse_ns"] = spent["parse"]
            self.metrics["timer_rego_module_compile_ns"] = spent["compile"]

    def eval_query(self, query: str, *, package: str | None = None, imports: Sequence[str] = ()) -> dict[str, Any]:
        """Evaluate ``query`` as the flags ask; returns ``eval_query``'s result."""
        engine = self.engine
        imports = tuple(imports)
        if self.metrics_on or self.instrumented:
            from pyrego.instrument.evaluate import eval_query_instrumented, instrumented_program
            from pyrego.parse.parser import parse_query
        if self.metrics_on:
            start = time.perf_counter_ns()
            parse_query(query, "", rego_v1=not self.rego_v0)
            self.metrics["timer_rego_query_parse_ns"] = time.perf_counter_ns() - start
            if self.instrumented:  # its program is part of compiling the modules here
                start = time.perf_counter_ns()
                instrumented_program(engine.program(), traced=self.explain != "off")
                self.metrics["timer_rego_module_compile_ns"] = self.metrics.get("timer_rego_module_compile_ns", 0) + time.perf_counter_ns() - start
            start = time.perf_counter_ns()
            engine.program().compile_query(query, package, imports)
            self.metrics["timer_rego_query_compile_ns"] = time.perf_counter_ns() - start
        start = time.perf_counter_ns()
        if not self.instrumented:
            result: dict[str, Any] = engine.eval_query(query, package=package, imports=imports)
        else:
            run = eval_query_instrumented(
                engine, query, package=package, imports=imports, trace=self.explain != "off", profile=self.profile_on
            )
            result = run.result
            self._collect(run, query)
        if self.metrics_on:
            self.metrics["timer_rego_query_eval_ns"] = time.perf_counter_ns() - start
        return result

    def _collect(self, run: Any, query: str) -> None:
        from pyrego.instrument.codegen import InstrumentedGen, piece_table
        from pyrego.instrument.coverage import report as coverage_report
        from pyrego.instrument.engine_mixin import trace_events
        from pyrego.instrument.profiler import profile_stats, top
        from pyrego.instrument.tracing import explain

        if self.explain != "off":
            self.events = explain(trace_events(run, query), self.explain)
        gen = run.program.gen
        assert isinstance(gen, InstrumentedGen)
        if self.profile_on:
            stats = profile_stats([run.recorder], piece_table(run.program), gen.module_files())
            self.profile = top(stats, self.limit, self.sort)
        if self.coverage_on:
            self.coverage = coverage_report(set(run.covered()), self.engine.program().policies)
        if self.instrument:
            counters = run.recorder.counters
            for name in ("counter_eval_op_rule_index", "counter_eval_op_virtual_cache_hits", "counter_eval_op_virtual_cache_misses", "timer_eval_op_rule_index_ns"):
                self.metrics[name] = counters.get(name, 0)

    # -- output ---------------------------------------------------------------------------

    def format(self, result: dict[str, Any], fmt: str) -> str:
        """The command's output in ``fmt``: the result as before, with what the flags added."""
        text = format_result(result, fmt)
        if fmt == "json":
            return self._json(text)
        if fmt == "pretty":
            return self._pretty(text)
        return text

    def _json(self, text: str) -> str:
        extras: list[tuple[str, Any]] = []
        if self.metrics_on:
            extras.append(("metrics", dict(sorted(self.metrics.items()))))
        if self.events:  # (OPA leaves out an empty explanation or profile)
            extras.append(("explanation", [e.to_json() for e in self.events]))
        if self.profile:
            extras.append(("profile", [s.to_json() for s in self.profile]))
        if self.coverage is not None:
            extras.append(("coverage", self.coverage))
        if not extras:
            return text
        members = [m for m in (_members(text),) if m]
        members += [f"  {json.dumps(k)}: {_go_json(v, 1)}" for k, v in extras]
        return "{\n" + ",\n".join(members) + "\n}"

    def _pretty(self, text: str) -> str:
        from pyrego.instrument.profiler import go_duration
        from pyrego.instrument.tracing import render

        parts = []
        if self.events:
            parts.append(render(self.events).rstrip("\n"))
        parts.append(text)
        if self.metrics_on:
            parts.append(ascii_table(["METRIC", "VALUE"], [[k, str(v)] for k, v in sorted(self.metrics.items())]))
        if self.profile:
            rows = [[go_duration(s.total_time_ns), str(s.num_eval), str(s.num_redo), str(s.num_gen_expr), s.location] for s in self.profile]
            parts.append(ascii_table(["TIME", "NUM EVAL", "NUM REDO", "NUM GEN EXPR", "LOCATION"], rows))
        if self.coverage is not None:
            parts.append(_box([["Overall Coverage", f"{self.coverage['coverage']:.2f}"]]))
        return "\n".join(p for p in parts if p)


def _sort_criteria(values: Sequence[str] | None) -> tuple[str, ...]:
    from pyrego.instrument.profiler import DEFAULT_SORT

    if not values:
        return DEFAULT_SORT
    out: list[str] = []
    for value in values:
        for c in value.split(","):
            c = c.strip()
            if c and c not in out:
                out.append(c)
    return tuple(out)


def _members(text: str) -> str:
    """The members of a JSON object printed with two-space indentation (without its braces)."""
    inner = text.strip()
    if inner in ("{}", ""):
        return ""
    return inner[1:-1].strip("\n")


def _go_json(value: Any, level: int) -> str:
    """JSON as Go's encoder indents it (two spaces), numbers as Go writes them (65, not 65.0)."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{\n" + ",\n".join(f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_go_json(v, level + 1)}" for k, v in value.items()) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(f"{inner}{_go_json(v, level + 1)}" for v in value) + f"\n{pad}]"
    if isinstance(value, float) and not isinstance(value, bool):
        return _go_float(value)
    return json.dumps(value, ensure_ascii=False)


def _go_float(f: float) -> str:
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    text = repr(f)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mantissa}e{sign}{int(exp.lstrip('+-')):02d}"
    return text


def _box(rows: list[list[str]]) -> str:
    """A table without a header, as OPA's tablewriter prints one."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join([sep, *lines, sep])


__all__ = ["EvalExtras", "add_arguments"]
