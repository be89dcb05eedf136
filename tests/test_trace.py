"""Traces (``--explain``): OPA's layout, its notes/fails filters, and OPA's event
kinds and locations.

The differential tests take OPA's trace of the same evaluation (the oracle's
``trace=True``) and compare the sequence of (event kind, ``file:row``) for the
kinds pyrego makes as OPA does: Enter, Eval, Fail, Exit, Note and Index.
Where pyrego backtracks differently the traces may differ (see
:mod:`pyrego.instrument.tracing`); on the seed policies and the simple policies here they
must not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import pyrego
from pyrego.conformance import iter_cases
from pyrego.errors import Location
from pyrego.instrument.tracing import TraceEvent, lineage, render
from shared_material import SHARED_DIR

SEED_DIR = SHARED_DIR / "bench" / "seed" if SHARED_DIR is not None else None
CONFORMANCE_ROOT = SHARED_DIR / "opa-conformance" / "v1" if SHARED_DIR is not None else None
COMPARED = ("Enter", "Eval", "Fail", "Exit", "Note", "Index")

POLICY = """package p

default allow := false

allow if {
    input.x == 1
    count(input.y) > 0
    trace(sprintf("y has %d", [count(input.y)]))
}

deny contains msg if {
    some v in input.y
    v > 10
    trace("big one")
    msg := sprintf("big %v", [v])
}

names := [n | some u in input.users; n := u.name]

f(x) := x * 2 if x > 0

else := 0

g := f(input.n)
"""


def _opa_trace(modules: dict[str, str], query: str, input: Any) -> list[dict[str, Any]]:
    from opa_bindings.engine import OpaEngine  # on sys.path once the oracle fixture has loaded it

    engine = OpaEngine()
    try:
        for path, text in modules.items():
            engine.add_policy(path, text)
        engine.eval_query(query, input, trace=True)
        events: list[dict[str, Any]] = engine.last_trace
        return events
    finally:
        engine.close()


def _opa_steps(modules: dict[str, str], events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out = []
    for ev in events:
        if ev["op"] in COMPARED:
            loc = ev["location"]
            out.append((ev["op"], loc if loc.split(":")[0] in modules else "query"))
    return out


def _steps(modules: dict[str, str], events: list[TraceEvent]) -> list[tuple[str, str]]:
    out = []
    for ev in events:
        if ev.op in COMPARED:
            loc = ev.location
            out.append((ev.op, f"{loc.file}:{loc.row}" if loc is not None and loc.file in modules else "query"))
    return out


def _opa_as_events(events: list[dict[str, Any]], modules: dict[str, str]) -> list[TraceEvent]:
    """OPA's events in pyrego's type (node types from the node's text), for the filters."""
    out = []
    for ev in events:
        loc = ev["location"]
        file, _, row = loc.rpartition(":")
        location = Location(file, int(row), 1) if file in modules else Location("query", 1, 1)
        node = ev.get("node", "")
        if ev["op"] in ("Enter", "Exit", "Redo") and (" if " in node or node.startswith("default ")):
            node_type = "rule"
        elif ev["op"] == "Enter":
            node_type = "body"
        else:
            node_type = "expr"
        out.append(TraceEvent(ev["op"], ev["query_id"], ev["parent_id"], node, node_type, location, ev.get("message", "")))
    return out


# ---------------------------------------------------------------- layout


def test_render_follows_opa_layout() -> None:
    loc = Location("p.rego", 12, 5)
    events = [
        TraceEvent("Enter", 0, 0, "data.p.allow", "body", Location("query", 1, 1)),
        TraceEvent("Eval", 0, 0, "data.p.allow", "expr", Location("query", 1, 1)),
        TraceEvent("Index", 0, 0, "data.p.allow", "expr", Location("query", 1, 1), "(matched 1 rule, early exit)"),
        TraceEvent("Enter", 1, 0, "data.p.allow", "rule", Location("p.rego", 5, 1)),
        TraceEvent("Eval", 1, 0, "v > 10", "expr", loc, locals={"v": 1}),
        TraceEvent("Note", 1, 0, "", "expr", loc, 'say "hi"'),
        TraceEvent("Redo", 1, 0, "data.p.allow", "rule", Location("p.rego", 5, 1)),
        TraceEvent("Exit", 0, 0, "data.p.allow", "body", Location("query", 1, 1)),
    ]
    # The location column is as wide as its widest cell ("p.rego:12") and 4 more, then a space.
    assert render(events) == (
        "query:1       Enter data.p.allow\n"
        "query:1       | Eval data.p.allow\n"
        "query:1       | Index data.p.allow (matched 1 rule, early exit)\n"
        "p.rego:5      | Enter data.p.allow\n"
        "p.rego:12     | | Eval v > 10\n"
        'p.rego:12     | | Note "say \\"hi\\""\n'
        "p.rego:5      | Redo data.p.allow\n"
        "query:1       | Exit data.p.allow\n"
    )
    with_values = render(events[3:5], var_values=True).splitlines()
    # Depth counts from the first query seen: here the rule's is the outermost.
    assert with_values == ["p.rego:5      Enter data.p.allow     {}", "p.rego:12     | Eval v > 10          {v: 1}"]
    assert render(events[:1], locations=False) == "Enter data.p.allow\n"


def test_long_values_are_cut_as_opa_cuts_them() -> None:
    event = TraceEvent("Eval", 1, 0, "x", "expr", Location("p.rego", 1, 1), locals={"x": "a" * 50, "s": frozenset({1, 2})})
    row = render([event], var_values=True)
    assert '{s: {1, 2}, x: "' + "a" * 31 + '...}' in row  # the first 32 characters, then "..."


# ---------------------------------------------------------------- the API


def test_trace_api_returns_result_and_events() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    trace = engine.eval_query_with_trace("data.p.allow", input={"x": 1, "y": [1, 20]})
    assert trace.result == engine.eval_query("data.p.allow", input={"x": 1, "y": [1, 20]})
    ops = [e.op for e in trace.events]
    assert ops[0] == "Enter" and ops[-1] == "Exit" and "Note" in ops
    note = next(e for e in trace.events if e.op == "Note")
    assert note.message == "y has 2" and note.location is not None and note.location.row == 8
    text = trace.pretty()
    assert 'p.rego:8     | | Note "y has 2"' in text
    rule = engine.eval_rule_with_trace("data.p.deny", input={"y": [20]})
    assert rule.result == {"big 20"}
    assert any(e.op == "Exit" and e.node == "data.p.deny" for e in rule.events)
    assert engine.eval_query_with_trace("data.p.allow", input={}, explain="off").events == []
    with pytest.raises(pyrego.ArgumentError):
        engine.eval_query_with_trace("data.p.allow", explain="everything")


def test_var_values_show_bound_variables() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    trace = engine.eval_query_with_trace("data.p.deny", input={"y": [1, 20]})
    evals = [e for e in trace.events if e.op in ("Eval", "Fail") and e.node == "v > 10"]
    assert [(e.op, dict(e.locals or {})) for e in evals] == [("Eval", {"v": 1}), ("Fail", {"v": 1}), ("Eval", {"v": 20})]
    assert "{v: 20}" in trace.pretty(var_values=True)


def test_traced_evaluation_counts_in_coverage() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    engine.set_enable_coverage(True)
    engine.eval_query_with_trace("data.p.allow", input={"x": 1, "y": [1]})
    assert engine.get_coverage_report()["files"]["p.rego"]["covered_lines"] >= 4


def test_notes_and_fails_keep_the_path_to_each_event() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    notes = engine.eval_query_with_trace("data.p.deny", input={"y": [1, 20, 30]}, explain="notes").events
    # After each kept event the path starts again: the second note, in the same
    # rule body, comes alone (as OPA's lineage.Filter has it).
    assert [e.op for e in notes] == ["Enter", "Enter", "Note", "Note"]
    assert [e.node for e in notes if e.op == "Enter"] == ["data.p.deny", "data.p.deny"]
    fails = engine.eval_query_with_trace("data.p.deny", input={"y": [1, 20]}, explain="fails").events
    assert [(e.op, e.node) for e in fails] == [("Enter", "data.p.deny"), ("Enter", "data.p.deny"), ("Fail", "v > 10")]


# ---------------------------------------------------------------- OPA


SIMPLE_CASES = [
    ("data.p.allow", {"x": 1, "y": [1, 20]}),
    ("data.p.allow", {"x": 2, "y": [1]}),
    ("data.p.allow", {"x": 1}),
    ("data.p.deny", {"y": [1, 20, 30]}),
    ("data.p.names", {"users": [{"name": "a"}, {"name": "b"}]}),
    ("data.p.g", {"n": 3}),
    ("data.p.g", {"n": -3}),
    ("data.p", {"x": 1, "y": [5, 50], "users": [], "n": 1}),
]


@pytest.mark.parametrize("query,input", SIMPLE_CASES)
def test_simple_policy_events_match_opa(query: str, input: Any, oracle: Any) -> None:
    modules = {"p.rego": POLICY}
    opa = _opa_trace(modules, query, input)
    engine = pyrego.Engine()
    engine.add_policies(modules)
    ours = engine.eval_query_with_trace(query, input=input).events
    assert _steps(modules, ours) == _opa_steps(modules, opa)


@pytest.mark.parametrize("mode,op", [("notes", "Note"), ("fails", "Fail")])
def test_filtered_traces_match_opa(mode: str, op: str, oracle: Any) -> None:
    modules = {"p.rego": POLICY}
    for query, input in SIMPLE_CASES:
        opa = lineage(_opa_as_events(_opa_trace(modules, query, input), modules), lambda e: e.op == op)
        engine = pyrego.Engine()
        engine.add_policies(modules)
        ours = engine.eval_query_with_trace(query, input=input, explain=mode).events
        assert _steps(modules, ours) == _steps(modules, opa), (query, input)


def test_seed_policy_events_match_opa(oracle: Any) -> None:
    if SEED_DIR is None or not (SEED_DIR / "policies").is_dir():
        pytest.skip("no ../shared/bench/seed beside the repository and no $PYREGO_SHARED")
    compared = 0
    for policy in sorted((SEED_DIR / "policies").glob("*_policy.rego")):
        name = policy.name.removesuffix("_policy.rego")
        modules = {policy.name: policy.read_text()}
        for suffix in ("", "2", "3"):
            input = json.loads((SEED_DIR / "inputs" / f"{name}_input{suffix}.json").read_text())
            opa = _opa_trace(modules, "data.bench.allow", input)
            engine = pyrego.Engine()
            engine.add_policies(modules)
            ours = engine.eval_query_with_trace("data.bench.allow", input=input).events
            assert _steps(modules, ours) == _opa_steps(modules, opa), f"{name}/input{suffix or 1}"
            compared += 1
    assert compared == 27


def test_conformance_event_agreement(oracle: Any) -> None:
    """How many conformance programs trace exactly as OPA does (kinds and
    locations); where evaluation strategies differ they may not, but most must."""
    if CONFORMANCE_ROOT is None or not CONFORMANCE_ROOT.is_dir():
        pytest.skip("no ../shared/opa-conformance/v1 beside the repository and no $PYREGO_SHARED")
    same = differ = 0
    for case in iter_cases(CONFORMANCE_ROOT):
        if case.skip or not case.modules or case.input_term is not None or case.want_error or case.want_error_code:
            continue
        modules = {f"test-{i}.rego": text for i, text in enumerate(case.modules)}
        input = case.input if case.input_given else None
        try:
            from opa_bindings.engine import OpaEngine

            opa_engine = OpaEngine()
            try:
                for path, text in modules.items():
                    opa_engine.add_policy(path, text)
                if case.data is not None:
                    opa_engine.add_data(case.data)
                opa_engine.eval_query(case.query, input, trace=True)
                opa = _opa_steps(modules, opa_engine.last_trace)
            finally:
                opa_engine.close()
        except Exception:  # noqa: BLE001 - an error in OPA: nothing to compare
            continue
        try:
            engine = pyrego.Engine()
            engine.set_strict_builtin_errors(case.strict_error)
            if case.data is not None:
                engine.add_data(case.data)
            engine.add_policies(modules)
            ours = _steps(modules, engine.eval_query_with_trace(case.query, **({} if input is None else {"input": input})).events)
        except pyrego.RegoError:
            continue
        if ours == opa:
            same += 1
        else:
            differ += 1
    print(f"\ntrace agreement with OPA on conformance programs: {same} same, {differ} different")
    assert same >= 900 and same > 5 * differ
