"""``pyrego eval --coverage / --explain / --profile / --metrics / --instrument``,
run in process through the command line's entry point, and the profile's
building blocks. The coverage report is compared with OPA's."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from pyrego.cli import main
from pyrego.instrument.profiler import ExprStats, go_duration, top

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
    msg := sprintf("big %v", [v])
}
"""

TIMERS = {
    "timer_rego_load_files_ns",
    "timer_rego_module_parse_ns",
    "timer_rego_module_compile_ns",
    "timer_rego_query_parse_ns",
    "timer_rego_query_compile_ns",
    "timer_rego_query_eval_ns",
}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are named as given on the command line: run where they are."""
    monkeypatch.chdir(tmp_path)


def _eval(tmp_path: Path, *args: str, input: Any = None) -> tuple[int, str]:
    (tmp_path / "p.rego").write_text(POLICY)
    argv = ["eval", "-d", "p.rego"]
    if input is not None:
        (tmp_path / "input.json").write_text(json.dumps(input))
        argv += ["-i", "input.json"]
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        status = main([*argv, *args])
    return status, out.getvalue()


def test_coverage_json_is_opas_report(tmp_path: Path, oracle: Any) -> None:
    status, text = _eval(tmp_path, "--coverage", "data.p.allow", input={"x": 1, "y": [1]})
    assert status == 0
    doc = json.loads(text)
    assert doc["result"][0]["expressions"][0]["value"] is True
    from opa_bindings.engine import OpaEngine

    opa = OpaEngine()
    try:
        opa.add_policy("p.rego", POLICY)
        opa.eval_query("data.p.allow", {"x": 1, "y": [1]}, coverage=True)
        assert doc["coverage"] == opa.last_coverage
    finally:
        opa.close()
    assert '"coverage": 50' in text  # numbers as Go writes them


def test_coverage_pretty_prints_the_overall_figure(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "--coverage", "-f", "pretty", "data.p.allow", input={"x": 1, "y": [1]})
    assert status == 0
    assert text.splitlines() == [
        "true",
        "+------------------+-------+",
        "| Overall Coverage | 50.00 |",
        "+------------------+-------+",
    ]


def test_explain_pretty_prints_the_trace_before_the_result(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "--explain", "full", "-f", "pretty", "data.p.allow", input={"x": 1, "y": [1]})
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split() == ["query:1", "Enter", "data.p.allow"]
    assert lines[-1] == "true"
    assert any(line.endswith('| | Note "y has 1"') and line.startswith("p.rego:8") for line in lines)
    status, notes = _eval(tmp_path, "--explain", "notes", "-f", "pretty", "data.p.allow", input={"x": 1, "y": [1]})
    lines = notes.splitlines()
    assert [line.split(maxsplit=1)[1] for line in lines[:-1]] == [
        "Enter data.p.allow",
        "| Enter data.p.allow",
        '| | Note "y has 1"',
    ]
    assert lines[-1] == "true"


def test_explain_json_lists_the_events(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "--explain", "fails", "data.p.deny", input={"y": [1, 20]})
    assert status == 0
    events = json.loads(text)["explanation"]
    assert [(e["op"], e["node"]) for e in events] == [("Enter", "data.p.deny"), ("Enter", "data.p.deny"), ("Fail", "v > 10")]
    assert events[-1]["location"] == {"file": "p.rego", "row": 13, "col": 5}
    status, text = _eval(tmp_path, "--explain", "off", "data.p.deny", input={"y": [1, 20]})
    assert "explanation" not in json.loads(text)


def test_metrics_in_json_and_pretty(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "--metrics", "data.p.allow", input={"x": 1, "y": [1]})
    assert status == 0
    metrics = json.loads(text)["metrics"]
    assert set(metrics) == TIMERS
    assert all(type(v) is int and v >= 0 for v in metrics.values())
    assert metrics["timer_rego_module_compile_ns"] > 0 and metrics["timer_rego_query_eval_ns"] > 0
    status, text = _eval(tmp_path, "--metrics", "--instrument", "-f", "pretty", "data.p.deny", input={"y": [1, 20]})
    lines = text.splitlines()
    assert any(line.startswith("|") and "METRIC" in line and "VALUE" in line for line in lines), text
    names = [line.split("|")[1].strip() for line in lines if line.startswith("| ") and ("_ns" in line or "counter_" in line)]
    assert set(names) == TIMERS | {
        "counter_eval_op_rule_index",
        "counter_eval_op_virtual_cache_hits",
        "counter_eval_op_virtual_cache_misses",
        "timer_eval_op_rule_index_ns",
    }
    assert names == sorted(names)


def test_profile_table_and_json(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "--profile", "-f", "pretty", "data.p.deny", input={"y": [1, 20, 30]})
    assert status == 0
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "NUM EVAL" in line)
    assert [c.strip() for c in lines[head].strip("|").split("|")] == ["TIME", "NUM EVAL", "NUM REDO", "NUM GEN EXPR", "LOCATION"]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[head + 2 : -1]]
    by_location = {r[4]: r for r in rows}
    some_in = by_location["p.rego:12"]
    assert some_in[1:4] == ["1", "3", "1"]  # one evaluation, a redo per further element and at the end
    assert by_location["p.rego:13"][1:4] == ["3", "0", "1"]
    status, text = _eval(tmp_path, "--profile", "--profile-limit", "2", "--profile-sort", "num_eval", "data.p.deny", input={"y": [1, 20, 30]})
    profile = json.loads(text)["profile"]
    assert len(profile) == 2
    # Line 14 is evaluated most: its call and its assignment, for each of the two values over 10.
    assert (profile[0]["location"]["row"], profile[0]["num_eval"]) == (14, 4)
    assert set(profile[0]) == {"total_time_ns", "num_eval", "num_redo", "num_gen_expr", "location"}


def test_without_flags_the_output_is_unchanged(tmp_path: Path) -> None:
    status, text = _eval(tmp_path, "data.p.allow", input={"x": 1, "y": [1]})
    assert status == 0
    assert json.loads(text) == {"result": [{"expressions": [{"value": True, "text": "data.p.allow", "location": {"row": 1, "col": 1}}]}]}


@pytest.mark.parametrize(
    "ns,text",
    [(0, "0s"), (999, "999ns"), (1_500, "1.5µs"), (56_789, "56.789µs"), (1_234_567, "1.234567ms"), (2_000_000_000, "2s"),
     (61_500_000_000, "1m1.5s"), (3_600_000_000_000, "1h0m0s")],
)  # fmt: skip
def test_durations_print_as_go_prints_them(ns: int, text: str) -> None:
    assert go_duration(ns) == text


def test_profile_rows_sort_as_opa_sorts_them() -> None:
    rows = [ExprStats("a.rego", 3, 1, "", 10, 1), ExprStats("a.rego", 9, 1, "", 10, 5), ExprStats("b.rego", 1, 1, "", 99, 1)]
    assert [(r.file, r.row) for r in top(rows)] == [("b.rego", 1), ("a.rego", 9), ("a.rego", 3)]
    assert [(r.file, r.row) for r in top(rows, 1, ["line"])] == [("a.rego", 9)]
    assert len(top(rows, 0)) == 3
