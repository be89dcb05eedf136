"""What running one test gives: :class:`TestResult` and its parts.

The fields follow OPA's ``tester.Result`` (``opa test --format json`` prints
them under the same names): the test's package and name, its location, whether
it failed, erred or was skipped, how long it took and what it printed.
Parameterized tests (a ``test_`` rule that defines an object, one key per
case) carry a :class:`SubResult` per case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyrego.errors import Location, RegoError


@dataclass
class SubResult:
    """One case of a parameterized test (or a level of nested cases)."""

    name: str
    fail: bool = False
    sub_results: dict[str, SubResult] = field(default_factory=dict)
    failure: FailureLine | None = None

    @property
    def outcome(self) -> str:
        return "FAIL" if self.fail else "PASS"

    def iter(self, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], SubResult]]:
        """This case's nested cases, depth first, sorted by name, each with its full name."""
        return iter_sub_results(self.sub_results, prefix)


def iter_sub_results(
    results: dict[str, SubResult], prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], SubResult]]:
    """Every sub-result under ``results``, depth first and sorted by name (OPA's order)."""
    out: list[tuple[tuple[str, ...], SubResult]] = []
    for name in sorted(results):
        sub = results[name]
        full = prefix + (name,)
        out.append((full, sub))
        out.extend(iter_sub_results(sub.sub_results, full))
    return out


@dataclass(frozen=True)
class VarValue:
    """A variable of a failed expression and its value (Rego text, or ``undefined``)."""

    name: str
    value: str
    row: int
    col: int
    tabs: tuple[int, ...] = ()  # columns of the tab characters before it on its line


@dataclass(frozen=True)
class FailureLine:
    """The expression a failed test stopped at, with the values of its variables.

    ``text`` is the expression's source (its first line padded to its column,
    as ``opa test --var-values`` prints it)."""

    file: str
    row: int
    col: int
    text: str
    variables: tuple[VarValue, ...] = ()


@dataclass(frozen=True)
class BenchmarkResult:
    """``--bench`` figures for one test: ``n`` evaluations in ``total_ns``."""

    n: int
    total_ns: int

    @property
    def ns_per_op(self) -> float:
        return self.total_ns / self.n if self.n else 0.0


@dataclass
class TestResult:
    """The outcome of one ``test_`` rule."""

    __test__ = False  # not a pytest class

    package: str  # "data.authz"
    name: str  # "test_allow", "a.test_b", or "test_allow#01" for a second rule of that name
    location: Location
    fail: bool = False
    skip: bool = False
    error: RegoError | None = None
    duration_ns: int = 0
    output: str = ""  # print() output, one line each
    sub_results: dict[str, SubResult] = field(default_factory=dict)
    failure: FailureLine | None = None
    benchmark: BenchmarkResult | None = None
    trace: list[Any] | None = None  # pyrego.instrument.tracing.TraceEvent: a failed test's trace (-v, --explain)

    @property
    def full_name(self) -> str:
        """``data.authz.test_allow``."""
        return f"{self.package}.{self.name}"

    @property
    def passed(self) -> bool:
        return not self.fail and not self.skip and self.error is None

    @property
    def outcome(self) -> str:
        """``PASS``, ``FAIL``, ``SKIPPED`` or ``ERROR`` (as OPA prints it)."""
        if self.passed:
            return "PASS"
        if self.fail:
            return "FAIL"
        if self.skip:
            return "SKIPPED"
        return "ERROR"

    def line(self) -> str:
        """``data.authz.test_allow: PASS (1.2ms)``: the line OPA prints for the test."""
        if self.skip:
            return f"{self.full_name}: {self.outcome}"
        return f"{self.full_name}: {self.outcome} ({go_duration(self.duration_ns)})"

    def error_text(self) -> str:
        """The error as OPA prints it under the test: ``file:row: code: message``."""
        return error_text(self.error) if self.error is not None else ""


def error_text(err: RegoError) -> str:
    """``file:row: code: message``: an evaluation error as OPA words it (no column, no caret)."""
    if err.location is None or not err.location.file:
        return f"{err.code}: {err.message}"
    return f"{err.location.file}:{err.location.row}: {err.code}: {err.message}"


def go_duration(ns: int) -> str:
    """A duration as Go's ``time.Duration.String`` writes it: ``0s``, ``850ns``, ``1.5µs``, ``2.25ms``, ``1m3.5s``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        return sign + _fraction(u, 3) + "µs"
    if u < 1_000_000_000:
        return sign + _fraction(u, 6) + "ms"
    out = _fraction(u % 60_000_000_000, 9) + "s"
    minutes = u // 60_000_000_000
    if minutes:
        hours, minutes = divmod(minutes, 60)
        out = f"{minutes}m" + out
        if hours:
            out = f"{hours}h" + out
    return sign + out


def _fraction(value: int, digits: int) -> str:
    """``value / 10**digits`` with the trailing zeros of the fraction (and a bare point) dropped."""
    whole, frac = divmod(value, 10**digits)
    text = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{text}" if text else str(whole)
