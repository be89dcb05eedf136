"""Evaluation traces as OPA gives them (``opa eval --explain``), and their rendering.

A traced evaluation runs the instrumented program (see
:mod:`pyrego.instrument.codegen`) with a recorder that keeps OPA's events:

``Enter``
    a query, rule body, comprehension or negation starts (the rule's
    document name, or the query's text);
``Eval``
    an expression starts, in the form OPA compiles it (a call nested in an
    operand, or a ref passed to a call, is an expression of its own, shown
    as its source text);
``Fail``
    a test fails, or an iterating expression has no value;
``Redo``
    an iterating expression moves on to its next value;
``Exit``
    a rule body (or the query) succeeds;
``Index``
    the rule index picked the definitions of a document (``(matched 2
    rules, early exit)``);
``Note``
    ``trace(msg)`` was called.

Each event has a query id and its parent's, from which the renderer finds
the depth of indentation, and a ``file:row`` location.

What differs from OPA's trace: events are made by pyrego's own evaluation,
which evaluates rules in OPA's order (the rule index) but backtracks
differently, so ``Redo`` appears only for expressions that iterate (OPA also
emits one for every expression it backtracks over, and for rules) and
``Exit`` carries no ``early`` message; ``Unify`` and ``Save`` events are not
made; an expression is shown as its source text rather than OPA's compiled
form (``count(input.xs) > 0`` rather than ``gt(__local1__, 0)``), and the
query as written (``data.p.allow`` rather than ``data.p.allow = _``); the
body of ``every`` runs at the depth of the ``every`` expression, without an
``Enter`` of its own. The layout (columns, ``| `` per level of depth, the
quoted message of a ``Note``) and the filters of ``--explain notes|fails``
are OPA's (``topdown.PrettyTraceWithOpts`` and ``lineage.Filter``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from pyrego.builtins.sprintf import format_value as rego_text  # a value as OPA prints a term
from pyrego.compile.opa_form import PieceTable
from pyrego.errors import Location
from pyrego.instrument.recorder import Recorder

#: ``explain`` modes: no trace, notes and their context, failures and their context, everything.
EXPLAIN_MODES = ("off", "notes", "fails", "full", "debug")

_LOCATION_PADDING = 4  # spaces after the widest cell of a column (OPA's columnPadding)
_MAX_VALUE_WIDTH = 32  # a variable's value is cut to this many characters (OPA's maxExprVarWidth)


@dataclass(frozen=True)
class TraceEvent:
    """One event of a trace.

    ``node``: what the event is about (an expression's text, a rule's document
    name, the query); ``node_type``: ``"expr"``, ``"rule"`` or ``"body"`` (a
    query); ``locals``: the values of the expression's variables bound when it
    started (``{name: value}``), for ``Eval`` and ``Fail`` of expressions."""

    op: str
    query_id: int
    parent_id: int
    node: str
    node_type: str
    location: Location | None
    message: str = ""
    locals: Mapping[str, Any] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object (``op``, ``query_id``, ``parent_id``, ``type``, ``node``, ``location``...)."""
        out: dict[str, Any] = {
            "op": self.op,
            "query_id": self.query_id,
            "parent_id": self.parent_id,
            "type": self.node_type,
            "node": self.node,
        }
        if self.location is not None:
            out["location"] = {"file": self.location.file, "row": self.location.row, "col": self.location.col}
        if self.message:
            out["message"] = self.message
        if self.locals:
            from pyrego.runtime.convert import to_json_value

            out["locals"] = [{"key": k, "value": to_json_value(v)} for k, v in self.locals.items()]
        return out


@dataclass
class Trace:
    """A traced evaluation: its result (``eval_query``'s dict, or ``eval_rule``'s value) and events."""

    result: Any
    events: list[TraceEvent]

    def pretty(self, *, locations: bool = True, var_values: bool = False) -> str:
        """The events in OPA's ``--explain`` layout (see :func:`render`)."""
        return render(self.events, locations=locations, var_values=var_values)


# ---------------------------------------------------------------- building


_KIND_TYPES = {"expr": "expr", "rule": "rule", "head": "rule"}


def events_from(recorder: Recorder, table: PieceTable, query: str, query_location: Location | None) -> list[TraceEvent]:
    """The recorder's raw events as :class:`TraceEvent` objects (``query``: the root query's text)."""
    raw = recorder.events or []
    parents = recorder.parents
    pieces = table.pieces
    out = []
    for op, qid, pid, message, node, values in raw:
        if pid < 0:
            text, node_type, location = query, "body", query_location
        else:
            piece = pieces[pid]
            text, node_type, location = piece.text, _KIND_TYPES.get(piece.kind, "expr"), piece.location
            if op == "Enter" and node_type == "expr":
                node_type = "body"  # a comprehension's or negation's query
        if node is not None:
            text = node
        out.append(TraceEvent(op, qid, parents.get(qid, 0), text, node_type, location, message, values))
    return out


def explain(events: list[TraceEvent], mode: str) -> list[TraceEvent]:
    """The events ``--explain mode`` shows: ``full`` (and ``debug``) all of them,
    ``notes``/``fails`` the Note/Fail events with the Enter and Redo events of
    the rules and queries that lead to each, ``off`` none."""
    if mode not in EXPLAIN_MODES:
        raise ValueError(f"explain mode must be one of {', '.join(EXPLAIN_MODES)}, not {mode!r}")
    if mode == "off":
        return []
    if mode == "notes":
        return lineage(events, lambda e: e.op == "Note")
    if mode == "fails":
        return lineage(events, lambda e: e.op == "Fail")
    return list(events)


def lineage(events: Iterable[TraceEvent], keep: Callable[[TraceEvent], bool]) -> list[TraceEvent]:
    """OPA's ``lineage.Filter``: each kept event, preceded by the path of the last
    Enter/Redo events of rules and queries from the root down to its query."""
    last: dict[int, TraceEvent] = {}
    out: list[TraceEvent] = []
    for event in events:
        if keep(event):
            path = [event]
            cur = last.get(event.query_id)
            prev = None
            while cur is not None and cur is not prev:
                path.append(cur)
                prev = cur
                cur = last.get(cur.parent_id)
            out.extend(reversed(path))
            last = {}
        if event.op in ("Enter", "Redo") and event.node_type in ("rule", "body"):
            last[event.query_id] = event
    return out


# ---------------------------------------------------------------- rendering


def render(events: list[TraceEvent], *, locations: bool = True, var_values: bool = False) -> str:
    """The trace as ``opa eval --explain`` prints it: a ``file:row`` column,
    then each event indented with ``| `` per level of query depth; with
    ``var_values`` a third column of the expression's variable values (as
    ``opa test --var-values`` prints them)."""
    depths: dict[int, int] = {}
    rows: list[list[str]] = []
    for event in events:
        depth = depths.get(event.query_id, 0)
        if depth == 0:
            depth = depths.get(event.parent_id, 0) + 1
            depths[event.query_id] = depth
        row = []
        if locations:
            row.append(_location(event))
        row.append(_event_text(event, depth))
        if var_values:
            row.append(_values_text(event.locals))
        rows.append(row)
    widths: list[int] = []
    for row in rows:
        for i, cell in enumerate(row):
            if i >= len(widths):
                widths.append(len(cell))
            elif len(cell) > widths[i]:
                widths[i] = len(cell)
    lines = []
    for row in rows:
        cells = [f"{cell:<{widths[i] + _LOCATION_PADDING}} " for i, cell in enumerate(row[:-1])]
        lines.append("".join(cells) + row[-1])
    return "".join(line + "\n" for line in lines)


def _location(event: TraceEvent) -> str:
    loc = event.location
    if loc is None:
        return ""
    return f"{loc.file or 'query'}:{loc.row}"


def _event_text(event: TraceEvent, depth: int) -> str:
    spaces = depth + 1
    if event.op == "Enter" or (event.op == "Redo" and event.node_type != "expr"):
        spaces = depth
    padding = "| " * (spaces - 1) if spaces > 1 else ""
    if event.op == "Note":
        return f"{padding}Note {json.dumps(event.message, ensure_ascii=False)}"
    text = f"{padding}{event.op} {event.node}"
    return f"{text} {event.message}" if event.message else text


def _values_text(values: Mapping[str, Any] | None) -> str:
    if not values:
        return "{}"
    parts = []
    for name in sorted(values):
        text = rego_text(values[name])
        if len(text) > _MAX_VALUE_WIDTH:
            text = text[:_MAX_VALUE_WIDTH] + "..."
        parts.append(f"{name}: {text}")
    return "{" + ", ".join(parts) + "}"


__all__ = ["EXPLAIN_MODES", "Trace", "TraceEvent", "events_from", "explain", "lineage", "rego_text", "render"]
