"""Coverage reports in OPA's shape (``opa eval --coverage``, ``opa test --coverage``).

OPA marks as *covered* the range of every expression it evaluates (in its
compiled form, see :mod:`pyrego.compile.opa_form`) and the head of every rule that
succeeds; *not covered* are the rule heads and source expressions (``some``
declarations aside) whose range lies within no covered range. Lines are
counted once per file however many ranges touch them, so a line can be both
covered and not covered (an expression reached whose later part was not).

:class:`CoverageData` accumulates covered ranges across evaluations (merged
under a lock once per evaluation); :func:`report` builds OPA's JSON document
against the engine's modules and :func:`pretty_report` a listing of the
source with each line marked.
"""

from __future__ import annotations

import threading
from typing import Any, Iterable, Iterator, Mapping

from pyrego.ast import nodes as ast
from pyrego.compile.base import iter_rule_chain
from pyrego.parse.spans import SourceSpans, Span

#: A module as the report needs it: its text and parsed AST.
ModuleSource = tuple[str, ast.Module]


class CoverageData:
    """Covered ranges, accumulated across evaluations until cleared (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._covered: set[Span] = set()

    def add(self, spans: Iterable[Span]) -> None:
        new = set(spans)
        with self._lock:
            self._covered |= new

    def clear(self) -> None:
        with self._lock:
            self._covered = set()

    def snapshot(self) -> set[Span]:
        with self._lock:
            return set(self._covered)


# ---------------------------------------------------------------- the candidates


def source_ranges(file: str, text: str, module: ast.Module) -> Iterator[Span]:
    """Every range OPA's report weighs for ``module``: each rule head (``else``
    branches and defaults included) and each expression but ``some``
    declarations, nested ones too; a rule written without a body has OPA's
    ``true`` body at its value."""
    spans = SourceSpans(file, text)
    for rule in module.rules:
        chain = list(iter_rule_chain(rule))
        for n, branch in enumerate(chain):
            head = spans.head(branch)
            if head is not None:
                yield head
            quirk = spans.else_body(branch, chain) if n else None
            if quirk is not None:
                yield quirk
                yield from _statement_ranges(spans, branch.body[0].statement)
            elif branch.body:
                yield from _body_ranges(spans, branch.body)
            else:
                true = head if n else _implied_body(spans, branch)
                if true is not None:
                    yield true
            for term in (branch.head.key, branch.head.value):
                if term is not None:
                    yield from _term_ranges(spans, term)


def _implied_body(spans: SourceSpans, rule: ast.Rule) -> Span | None:
    if rule.default:
        return spans.token(rule.location)
    head = rule.head
    if head.value is None:
        return spans.term(head.ref)  # a `contains` rule's: at its name
    target = head.value
    if target is None or (type(target) is ast.Scalar and target.location == head.location):
        return spans.head(rule)
    return spans.term(target)


def _body_ranges(spans: SourceSpans, body: ast.Body) -> Iterator[Span]:
    for e in body:
        s = e.statement
        if type(s) is not ast.SomeVars and type(s) is not ast.SomeIn:
            span = spans.expr(e)
            if span is not None:
                yield span
        yield from _statement_ranges(spans, s)
        for w in e.with_mods:
            yield from _term_ranges(spans, w.value)


def _statement_ranges(spans: SourceSpans, s: ast.Statement) -> Iterator[Span]:
    if isinstance(s, (ast.Assign, ast.Unify)):
        yield from _term_ranges(spans, s.lhs)
        yield from _term_ranges(spans, s.rhs)
    elif isinstance(s, ast.SomeIn):
        yield from _term_ranges(spans, s.collection)
    elif isinstance(s, ast.Every):
        yield from _term_ranges(spans, s.domain)
        yield from _body_ranges(spans, s.body)
    elif not isinstance(s, ast.SomeVars):
        yield from _term_ranges(spans, s)


def _term_ranges(spans: SourceSpans, t: Any) -> Iterator[Span]:
    """The expressions inside the comprehensions of a term."""
    if isinstance(t, (ast.ArrayCompr, ast.SetCompr)):
        yield from _body_ranges(spans, t.body)
        yield from _term_ranges(spans, t.term)
    elif isinstance(t, ast.ObjectCompr):
        yield from _body_ranges(spans, t.body)
        yield from _term_ranges(spans, t.key)
        yield from _term_ranges(spans, t.value)
    elif isinstance(t, ast.Call):
        for a in t.args:
            yield from _term_ranges(spans, a)
    elif isinstance(t, ast.Ref):
        yield from _term_ranges(spans, t.head)
        for p in t.path:
            yield from _term_ranges(spans, p)
    elif isinstance(t, (ast.Array, ast.SetTerm)):
        for x in t.items:
            yield from _term_ranges(spans, x)
    elif isinstance(t, ast.Object):
        for k, v in t.items:
            yield from _term_ranges(spans, k)
            yield from _term_ranges(spans, v)
    elif isinstance(t, ast.TemplateString):
        for part in t.parts:
            if not isinstance(part, str):
                yield from _term_ranges(spans, part)


# ---------------------------------------------------------------- the report


def _range(span: Span) -> dict[str, Any]:
    return {"start": {"row": span.row, "col": span.col}, "end": {"row": span.end_row, "col": span.end_col}}


def _rows(spans: Iterable[Span]) -> set[int]:
    rows: set[int] = set()
    for s in spans:
        rows.update(s.rows())
    return rows


def _percent(covered: int, not_covered: int) -> float:
    total = covered + not_covered
    return 100.0 * covered / total if total else 0.0


def report(covered: set[Span], modules: Mapping[str, ModuleSource]) -> dict[str, Any]:
    """OPA's coverage report for ``modules`` ({file: (text, module)}) given the covered ranges."""
    by_file: dict[str, set[Span]] = {}
    for span in covered:
        by_file.setdefault(span.file, set()).add(span)
    not_covered: dict[str, set[Span]] = {}
    for file, (text, module) in modules.items():
        hits = by_file.get(file, set())
        missed = not_covered.setdefault(file, set())
        for span in source_ranges(file, text, module):
            if span not in hits and not any(h.contains(span) for h in hits):
                missed.add(span)
    files: dict[str, Any] = {}
    total_covered = total_not = 0
    for file in sorted(set(by_file) | set(not_covered)):
        hit = sorted(by_file.get(file, ()))
        miss = sorted(not_covered.get(file, ()))
        n_hit, n_miss = len(_rows(hit)), len(_rows(miss))
        total_covered += n_hit
        total_not += n_miss
        entry: dict[str, Any] = {}
        # OPA leaves out empty lists and zero counts (``omitempty``).
        if hit:
            entry["covered"] = [_range(s) for s in hit]
        if miss:
            entry["not_covered"] = [_range(s) for s in miss]
        if n_hit:
            entry["covered_lines"] = n_hit
        if n_miss:
            entry["not_covered_lines"] = n_miss
        pct = _percent(n_hit, n_miss)
        if pct:
            entry["coverage"] = pct
        files[file] = entry
    return {
        "files": files,
        "covered_lines": total_covered,
        "not_covered_lines": total_not,
        "coverage": _percent(total_covered, total_not),
    }


def line_sets(file_report: Mapping[str, Any]) -> tuple[set[int], set[int]]:
    """The covered and not-covered line numbers of one file's report."""

    def rows(ranges: Iterable[Mapping[str, Any]]) -> set[int]:
        out: set[int] = set()
        for r in ranges:
            out.update(range(r["start"]["row"], r["end"]["row"] + 1))
        return out

    return rows(file_report.get("covered", ())), rows(file_report.get("not_covered", ()))


# ---------------------------------------------------------------- the listing


#: Line states of the listing: marker and rich style.
_STATES = {
    "covered": ("+", "green"),
    "not covered": ("-", "red"),
    "partly covered": ("~", "yellow"),
    "": (" ", ""),
}


def _line_state(row: int, hit: set[int], miss: set[int]) -> str:
    if row in hit:
        return "partly covered" if row in miss else "covered"
    return "not covered" if row in miss else ""


def pretty_lines(rep: Mapping[str, Any], texts: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(text, state) for each line of the listing: a header per file, then its source lines."""
    files = rep.get("files", {})
    for file in sorted(files):
        entry = files[file]
        hit, miss = line_sets(entry)
        pct = entry.get("coverage", 0.0)
        yield f"{file}: {pct:.2f}% ({entry.get('covered_lines', 0)} lines covered, {entry.get('not_covered_lines', 0)} not)", "header"
        text = texts.get(file)
        if text is None:
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        width = len(str(len(lines)))
        for row, line in enumerate(lines, 1):
            state = _line_state(row, hit, miss)
            yield f"{_STATES[state][0]} {row:>{width}} | {line}", state
    yield (
        f"Total: {rep.get('coverage', 0.0):.2f}% ({rep.get('covered_lines', 0)} lines covered, "
        f"{rep.get('not_covered_lines', 0)} not)"
    ), "header"


def pretty_report(rep: Mapping[str, Any], texts: Mapping[str, str], *, color: bool | None = None) -> str:
    """The source of every file with each line marked: ``+`` covered, ``-`` not
    covered, ``~`` both (part of the line ran), blank when coverage does not
    weigh it. ``color``: style lines with ``rich`` (default: when stdout is a terminal)."""
    rows = list(pretty_lines(rep, texts))
    if color is None:
        import sys

        color = sys.stdout.isatty()
    if not color:
        return "\n".join(text for text, _ in rows) + "\n"
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    buf = StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=10_000, highlight=False)
    for text, state in rows:
        style = "bold" if state == "header" else _STATES[state][1]
        console.print(Text(text, style=style), soft_wrap=True)
    return buf.getvalue()


__all__ = ["CoverageData", "line_sets", "pretty_report", "report", "source_ranges"]
