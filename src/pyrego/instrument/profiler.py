"""Expression profiles as OPA's profiler reports them (``opa eval --profile``).

A profiled evaluation runs the instrumented program with a recorder that
charges the time from each expression's start (``Eval``) or resumption
(``Redo``) to the next such event to that expression (OPA's profiler does
the same with its trace events). The statistics are then summed per source
line: total time, evaluations, redos, and how many of OPA's compiled
expressions the line holds (``num_gen_expr``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from pyrego.compile.opa_form import PieceTable
from pyrego.instrument.recorder import Recorder

#: OPA's default order of profile rows (``presentation.DefaultProfileSortOrder``).
DEFAULT_SORT = ("total_time_ns", "num_eval", "num_redo", "file", "line")
SORT_CRITERIA = ("total_time_ns", "num_eval", "num_redo", "num_gen_expr", "file", "line")


@dataclass
class ExprStats:
    """The profile of one source line."""

    file: str
    row: int
    col: int
    text: str  # how a query's line is named (it has no file)
    total_time_ns: int = 0
    num_eval: int = 0
    num_redo: int = 0
    num_gen_expr: int = 0

    @property
    def location(self) -> str:
        """``file:row``, or the query's text for a query's expression (as OPA's ``Location.String``)."""
        return f"{self.file}:{self.row}" if self.file else self.text

    def to_json(self) -> dict[str, Any]:
        return {
            "total_time_ns": self.total_time_ns,
            "num_eval": self.num_eval,
            "num_redo": self.num_redo,
            "num_gen_expr": self.num_gen_expr,
            "location": {"file": self.file, "row": self.row, "col": self.col},
        }


def profile_stats(recorders: Sequence[Recorder], table: PieceTable, modules: frozenset[str]) -> list[ExprStats]:
    """Per-line statistics of one or more profiled evaluations of the same program."""
    lines: dict[tuple[str, int], ExprStats] = {}
    pieces_per_line: dict[tuple[str, int], set[int]] = {}
    for recorder in recorders:
        for pid, (ns, evals, redos) in (recorder.profile or {}).items():
            piece = table.pieces[pid]
            loc = piece.location
            file = loc.file if loc.file in modules else ""  # a query's expressions have no file
            key = (file, loc.row)
            stats = lines.get(key)
            if stats is None:
                stats = lines[key] = ExprStats(file, loc.row, loc.col, "" if file else piece.text)
            stats.total_time_ns += ns
            stats.num_eval += evals
            stats.num_redo += redos
            pieces_per_line.setdefault(key, set()).add(pid)
    for key, stats in lines.items():
        stats.num_gen_expr = len(pieces_per_line[key])
    return list(lines.values())


_LESS: dict[str, Callable[[ExprStats, ExprStats], bool]] = {
    "total_time_ns": lambda a, b: a.total_time_ns > b.total_time_ns,
    "num_eval": lambda a, b: a.num_eval > b.num_eval,
    "num_redo": lambda a, b: a.num_redo > b.num_redo,
    "num_gen_expr": lambda a, b: a.num_gen_expr > b.num_gen_expr,
    "file": lambda a, b: a.file > b.file,
    "line": lambda a, b: a.row > b.row,
}


def top(stats: list[ExprStats], limit: int = 10, criteria: Sequence[str] = DEFAULT_SORT) -> list[ExprStats]:
    """OPA's ``ReportTopNResults``: sorted by ``criteria`` in turn (each one largest
    first), the first ``limit`` rows (all when ``limit`` <= 0)."""
    less = [_LESS[c] for c in criteria if c in _LESS]
    if not less:
        return list(stats)

    def compare(a: ExprStats, b: ExprStats) -> int:
        for fn in less:
            if fn(a, b):
                return -1
            if fn(b, a):
                return 1
        return 0

    ordered = sorted(stats, key=functools.cmp_to_key(compare))
    return ordered if limit <= 0 else ordered[:limit]


def go_duration(ns: int) -> str:
    """A duration as Go's ``time.Duration.String`` writes it (``1.234ms``, ``56.7µs``, ``2m3.5s``)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        return f"{sign}{_fraction(u, 3)}µs"
    if u < 1_000_000_000:
        return f"{sign}{_fraction(u, 6)}ms"
    seconds = _fraction(u % 60_000_000_000, 9) + "s"
    minutes = u // 60_000_000_000
    if not minutes:
        return sign + seconds
    hours, minutes = divmod(minutes, 60)
    return f"{sign}{hours}h{minutes}m{seconds}" if hours else f"{sign}{minutes}m{seconds}"


def _fraction(u: int, digits: int) -> str:
    whole, frac = divmod(u, 10**digits)
    text = f"{frac:0{digits}d}".rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


__all__ = ["DEFAULT_SORT", "SORT_CRITERIA", "ExprStats", "go_duration", "profile_stats", "top"]
