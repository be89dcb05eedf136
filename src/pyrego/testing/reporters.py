"""Printing test results as ``opa test`` prints them.

:class:`PrettyReporter` is OPA's text layout: failed, erred and skipped tests
(every test with ``-v``) grouped under their file name, a ``FAILURES`` section
with ``-v`` or ``--var-values``, and the ``PASS: n/m`` summary.
:class:`JSONReporter` writes OPA's JSON array of results (``location``,
``package``, ``name``, ``error``, ``sub_results``, ``output`` as base64 as Go
encodes bytes, ``duration`` in nanoseconds, ``fail``, ``skip``).

Under a failure, ``-v`` prints the test's trace (:mod:`pyrego.instrument.tracing`), as
OPA does; where the engine has no trace, the failed expression stands in.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any, TextIO

from pyrego.testing.explain import truncate
from pyrego.testing.results import FailureLine, SubResult, TestResult, VarValue, iter_sub_results

_RULE = "-" * 80


class PrettyReporter:
    """OPA's human-readable report."""

    def __init__(
        self,
        out: TextIO,
        *,
        verbose: bool = False,
        var_values: bool = False,
        benchmark: bool = False,
        gobench: bool = False,
    ) -> None:
        self.out = out
        self.verbose = verbose
        self.var_values = var_values
        self.benchmark = benchmark
        self.gobench = gobench

    def _write(self, text: str, indent: int = 0) -> None:
        """One write as Go's indenting writer does it: every line started in it is indented."""
        if indent:
            pad = " " * indent
            text = pad + text.replace("\n", "\n" + pad)
            if text.endswith("\n" + pad):
                text = text[: -len(pad)]
        self.out.write(text)

    def _println(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def report(self, results: Iterable[TestResult]) -> None:
        passed = failed = skipped = errors = 0
        done: list[TestResult] = []
        failures: list[TestResult] = []
        for r in results:
            if r.skip:
                skipped += 1
            elif r.error is not None:
                errors += 1
            else:
                if r.fail:
                    failures.append(r)
                if r.sub_results:
                    for _, sub in iter_sub_results(r.sub_results):
                        if not sub.sub_results:
                            if sub.fail:
                                failed += 1
                            else:
                                passed += 1
                elif r.passed:
                    passed += 1
                elif r.fail:
                    failed += 1
            done.append(r)

        failure_line = self.var_values or self.verbose
        if failed and failure_line:
            self._println("FAILURES")
            self._println(_RULE)
            for r in failures:
                self._write(r.line())
                self._println()
                if r.sub_results:
                    if self.verbose:
                        self._write("\n")
                        self._print_trace(r.trace, 0)  # the trace of all the cases
                    self._println()
                    for full, sub in iter_sub_results(r.sub_results):
                        if sub.fail and not sub.sub_results:
                            indent = 2
                            for part in full:
                                self._write(f"{part}: {sub.outcome}\n", indent)
                                indent += 2
                            if self.var_values or r.trace is None:
                                self._print_failure(sub.failure, indent, local_vars=self.var_values)
                elif r.trace is not None:
                    # OPA's printFailure: the trace (-v), then the failure line (--var-values).
                    if self.verbose:
                        self._write("\n")
                        self._print_trace(r.trace, 0)
                    if self.var_values:
                        self._print_failure(r.failure, 0, local_vars=True)
                else:
                    # Without a trace, the failure line stands in for it under -v.
                    self._print_failure(r.failure, 0, local_vars=self.var_values)
                self._println()
            self._println("SUMMARY")
            self._println(_RULE)

        dirty = False
        last_file = ""
        for r in done:
            if r.passed and self.benchmark:
                dirty = True
                self._println(self.benchmark_line(r))
            elif self.verbose or not r.passed:
                if r.location.file != last_file:
                    if last_file:
                        self._println("")
                    self._write(f"{r.location.file}:\n")
                    last_file = r.location.file
                dirty = True
                self._println(r.line())
                for full, sub in iter_sub_results(r.sub_results):
                    if sub.fail or self.verbose:
                        self._write("  " * (len(full) - 1) + f"{sub.name}: {sub.outcome}\n", 2)
                if r.output:
                    self._println()
                    self._write(r.output.strip() + "\n", 2)
                    self._println()
            if r.error is not None:
                self._write(f"  {r.error_text()}\n")

        if dirty:
            self._println(_RULE)
        total = passed + failed + skipped + errors
        if passed:
            self._println(f"PASS: {passed}/{total}")
        if failed:
            self._println(f"FAIL: {failed}/{total}")
        if skipped:
            self._println(f"SKIPPED: {skipped}/{total}")
        if errors:
            self._println(f"ERROR: {errors}/{total}")

    def _print_failure(self, failure: FailureLine | None, indent: int, *, local_vars: bool) -> None:
        """OPA's printFailure with its failure line: a blank line, ``file:row:``, the expression."""
        self._write("\n", indent)
        if failure is None:
            return
        self._write(f"{failure.file}:{failure.row}:\n", indent + 2)
        if local_vars:
            self._write(failure.text + _var_arrows(failure.variables), indent + 4)
        else:
            self._write(failure.text + "\n", indent + 4)
        self._write("\n", indent)

    def _print_trace(self, events: list[Any] | None, indent: int) -> None:
        """OPA's PrettyTraceWithOpts through an indenting writer: each cell is
        one write, so each starts indented, and so does each row's newline."""
        if not events:
            return
        for row in trace_rows(events, var_values=self.var_values):
            for cell in row:
                self._write(cell, indent + 2)
            self._write("\n", indent + 2)

    def benchmark_line(self, r: TestResult) -> str:
        """``name<TAB>N<TAB>ns/op`` as Go's benchmark result prints."""
        if r.benchmark is None:
            return ""
        name = r.full_name
        if self.gobench:
            parts = name.replace("_", ".").split(".")
            name = "Benchmark" + "".join(p[:1].upper() + p[1:] for p in parts)
        return f"{name}\t{r.benchmark.n:8d}\t{_bench_figure(r.benchmark.ns_per_op, 'ns/op')}"


def trace_rows(events: list[Any], *, var_values: bool = False) -> list[list[str]]:
    """The cells of each row of a trace table, padded as :func:`pyrego.instrument.tracing.render` pads them."""
    from pyrego.instrument.tracing import render

    plain = render(events, locations=True).splitlines()
    first = max(len(_trace_location(e)) for e in events) + 5  # OPA's column padding (4) and a space
    if not var_values:
        return [[line[:first], line[first:]] for line in plain]
    second = max(len(line) - first for line in plain) + 5
    return [[line[:first], line[first : first + second], line[first + second :]] for line in render(events, locations=True, var_values=True).splitlines()]


def _trace_location(event: Any) -> str:
    loc = event.location
    return "" if loc is None else f"{loc.file or 'query'}:{loc.row}"


def _bench_figure(x: float, unit: str) -> str:
    """Go's prettyPrint: ten places before the point, four significant digits for small numbers."""
    y = abs(x)
    if y == 0 or y >= 999.95:
        text = f"{x:10.0f}"
    elif y >= 99.995:
        text = f"{x:12.1f}"
    elif y >= 9.9995:
        text = f"{x:13.2f}"
    elif y >= 0.99995:
        text = f"{x:14.3f}"
    elif y >= 0.099995:
        text = f"{x:15.4f}"
    elif y >= 0.0099995:
        text = f"{x:16.5f}"
    elif y >= 0.00099995:
        text = f"{x:17.6f}"
    else:
        text = f"{x:18.7f}"
    return f"{text} {unit}"


def _var_arrows(variables: tuple[VarValue, ...]) -> str:
    """The lines under an expression pointing at each variable with its value (OPA's printPrettyVars)."""
    if not variables:
        return ""
    rows = {v.row for v in variables}
    if len(rows) > 1 and any(v.tabs for v in variables):
        # Variables on several lines cannot be pointed at: list them by name.
        out = "\n\nWhere:\n"
        for v in sorted(variables, key=lambda v: v.name):
            out += f"\n{v.name}: {truncate(v.value)}"
        return out
    by_col = sorted(variables, key=lambda v: (v.col, -v.row, v.name))
    out = "\n" + _arrows(by_col, -1)
    for i in range(len(by_col) - 1, -1, -1):
        out += "\n" + _arrows(by_col, i)
    return out


def _arrows(items: list[VarValue], value_at: int) -> str:
    out: list[str] = []
    prev_col = 0
    chosen = items[: value_at + 1] if value_at >= 0 else items
    first = True
    for i, info in enumerate(chosen):
        last = i >= len(chosen) - 1
        col = info.col
        if not last and col == items[i + 1].col:
            continue  # shares its column with the next one
        spaces = col - 1 if first else col - prev_col - 1
        out.extend("\t" if j + prev_col + 1 in info.tabs else " " for j in range(spaces))
        if last and value_at >= 0:
            value = truncate(info.value)
            shared = (i > 0 and col == items[i - 1].col) or (i < len(items) - 1 and col == items[i + 1].col)
            out.append(f"{info.name}: {value}" if shared else value)
        else:
            out.append("|")
        prev_col = col
        first = False
    return "".join(out)


class JSONReporter:
    """OPA's ``--format json`` report: a JSON array with one object per test."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def report(self, results: Iterable[TestResult]) -> None:
        doc = [result_json(r) for r in results]
        self.out.write(go_json(doc) + "\n")


def result_json(r: TestResult) -> dict[str, Any]:
    """One result as OPA's JSON reporter writes it (Go's field order; empty fields left out)."""
    out: dict[str, Any] = {}
    if r.error is not None:
        err: dict[str, Any] = {"code": r.error.code, "message": r.error.message}
        loc = r.error.location
        if loc is not None:
            err["location"] = {"file": loc.file, "row": loc.row, "col": loc.col}
        out["error"] = err
    out["location"] = {"file": r.location.file, "row": r.location.row, "col": r.location.col}
    if r.benchmark is not None:
        out["benchmark_result"] = {
            "N": r.benchmark.n,
            "T": r.benchmark.total_ns,
            "Bytes": 0,
            "MemAllocs": 0,
            "MemBytes": 0,
            "Extra": {},
        }
    if r.sub_results:
        out["sub_results"] = _subs_json(r.sub_results)
    out["package"] = r.package
    out["name"] = r.name
    if r.output:
        out["output"] = base64.b64encode(r.output.encode("utf-8")).decode("ascii")
    out["duration"] = r.duration_ns
    if r.fail:
        out["fail"] = True
    if r.skip:
        out["skip"] = True
    return out


def _subs_json(subs: dict[str, SubResult]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(subs):
        sub = subs[name]
        entry: dict[str, Any] = {}
        if sub.sub_results:
            entry["sub_results"] = _subs_json(sub.sub_results)
        if sub.name:
            entry["name"] = sub.name
        if sub.fail:
            entry["fail"] = True
        out[name] = entry
    return out


def go_json(value: Any) -> str:
    """JSON indented by two spaces as Go's MarshalIndent writes it (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
