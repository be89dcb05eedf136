"""``pyrego test --coverage`` / ``--threshold``: OPA's JSON coverage reporter.

As ``opa test --coverage`` does: the first erring test ends the run with its
error (exit 1); failed tests are reported in the pretty layout and the first
one's line is the error (exit 1); a coverage below ``--threshold`` is
``Code coverage threshold not met: got X instead of Y`` (with ``-v``, the
lines not covered), exit 2; otherwise the coverage report (the engine's
:meth:`~pyrego.Engine.get_coverage_report`) is printed as JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, TextIO

from pyrego.testing.reporters import PrettyReporter, go_json
from pyrego.testing.results import TestResult, iter_sub_results


class CoverageReporter:
    """Reports the coverage the tests reached, or why there is none to report."""

    def __init__(self, out: TextIO, err: TextIO, engine: Any, *, threshold: float = 0.0, verbose: bool = False) -> None:
        self.out = out
        self.err = err
        self.engine = engine
        self.threshold = threshold
        self.verbose = verbose

    def report(self, results: Iterable[TestResult]) -> int:
        """Print the report; the exit status it calls for (0 when the report was printed)."""
        failures: list[TestResult] = []
        for r in results:
            if r.error is not None:
                print(r.error_text(), file=self.err)
                return 1
            if r.fail:
                failures.append(r)
        if failures:
            PrettyReporter(self.out, verbose=self.verbose).report(failures)
            first = failures[0]
            subs = "".join("  " * (len(full) - 1) + f"{sub.name}: {sub.outcome}\n" for full, sub in iter_sub_results(first.sub_results))
            print(first.line() + "\n" + subs, file=self.err)
            return 1
        report = self.engine.get_coverage_report()
        coverage = float(report.get("coverage") or 0)
        if coverage < self.threshold:
            message = f"Code coverage threshold not met: got {coverage:.2f} instead of {self.threshold:.2f}"
            if self.verbose and report.get("files"):
                message += "\nLines not covered:" + "".join(
                    f"\n\t{file}:{a}" if a == b else f"\n\t{file}:{a}-{b}"
                    for file in sorted(report["files"])
                    for a, b in _row_spans(report["files"][file].get("not_covered") or [])
                )
            print(message, file=self.err)
            return 2
        self.out.write(go_json(_go_numbers(report)) + "\n")
        return 0


def _row_spans(ranges: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The rows of ``ranges`` as sorted, merged ``(first, last)`` spans."""
    spans = sorted((r["start"]["row"], r["end"]["row"]) for r in ranges)
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _go_numbers(value: Any) -> Any:
    """Floats as Go's JSON writes them: a whole number without a fraction (``100``, not ``100.0``)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _go_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_numbers(v) for v in value]
    return value
