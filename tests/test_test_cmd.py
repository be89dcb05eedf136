"""``pyrego test`` and :mod:`pyrego.testing`: OPA's test runner.

Outcomes are checked against OPA (tests/opa_oracle.py): every test rule of
every repository under tests/repos/ and of the fixtures in
tests/test_cmd_cases/ must pass, fail or err as evaluating the same rule in
OPA says (``opa test`` runs without strict builtin errors, so a builtin error
there is a failure). Failure lines (``--var-values``) are checked against the
last failed expression of OPA's trace, parameterized tests against the test
cases OPA's trace records. The report layouts, JSON shape and exit statuses
follow OPA's tester/reporter.go and cmd/test.go.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.conformance import canonical
from pyrego.testing import LoadFailure, SubResult, TestResult, go_duration, run_tests
from test_repos import is_v0, opa_inputs, opa_outcomes, rego_tests, repositories

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "test_cmd_cases"
_DURATION = re.compile(r"\((?:\d+(?:\.\d+)?(?:ns|µs|ms|s|m|h))+\)")


def pyrego_test(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyrego", "test", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def status(r: TestResult) -> str:
    return r.outcome


def opa_status(oracle: Any, modules: dict[str, str], data: Any, ref: str) -> str:
    """What ``opa test`` reports for the test rule ``ref``, from evaluating it in OPA."""
    r = oracle.evaluate(modules, f"x := {ref}", data=data)
    if r.is_error:
        # The oracle runs with strict builtin errors; opa test does not: undefined, so FAIL.
        return "FAIL" if r.error_code == "eval_builtin_error" else "ERROR"
    return "PASS" if r.bindings and r.bindings[0]["x"] is True else "FAIL"


# ---------------------------------------------------------------- repositories


def _status_of(outcome: tuple[str, Any]) -> str:
    kind, value = outcome
    if kind == "error":
        return "FAIL" if value == "eval_builtin_error" else "ERROR"
    return "PASS" if outcome == ("value", canonical(True)) else "FAIL"


@pytest.mark.parametrize("repo", repositories(), ids=[r.name for r in repositories()])
def test_repository_outcomes_agree_with_opa(repo: Path, oracle: Any) -> None:
    results = run_tests([repo], v0_compatible=is_v0(repo))
    # Every test rule is found, each once (the repositories have no todo_ or repeated tests).
    found = sorted((r.package, r.name) for r in results)
    want = sorted((f"data.{t.package}", t.name) for t in rego_tests(repo))
    assert found == want
    if is_v0(repo):
        # The oracle parses Rego v1 only: compare with pyrego's own evaluation of each rule.
        engine = pyrego.Engine()
        engine.set_rego_v0(True)
        engine.add_policies_from_dir(repo)
        expected = {r.full_name: "PASS" if engine.eval_rule(r.full_name) is True else "FAIL" for r in results}
    else:
        # OPA's value of every test rule (evaluated together, as tests/test_repos.py does).
        outcomes = opa_outcomes(oracle, repo)
        expected = {r.full_name: _status_of(outcomes[r.full_name][0]) for r in results}
    got = {r.full_name: status(r) for r in results}
    assert got == expected
    assert all(v == "PASS" for v in got.values())  # the corpus itself is right


@pytest.mark.parametrize("repo", repositories(), ids=[r.name for r in repositories()])
def test_cli_runs_repository(repo: Path) -> None:
    flags = ["--v0-compatible"] if is_v0(repo) else []
    p = pyrego_test(*flags, "--format", "json", rel(repo))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert len(doc) == len(rego_tests(repo))
    assert not any(r.get("fail") or r.get("error") or r.get("skip") for r in doc)
    p = pyrego_test(*flags, rel(repo))
    assert p.returncode == 0
    assert p.stdout == f"PASS: {len(doc)}/{len(doc)}\n"


def test_v0_repository_needs_v0_flag() -> None:
    v0 = [r for r in repositories() if is_v0(r)]
    assert v0
    p = pyrego_test(rel(v0[0]))
    assert p.returncode == 1
    assert "rego_parse_error" in p.stderr


# ---------------------------------------------------------------- fixtures against OPA


def test_fixture_outcomes_agree_with_opa(oracle: Any) -> None:
    root = CASES / "outcomes"
    results = run_tests([root])
    modules, data = opa_inputs(root)
    got = {r.full_name: status(r) for r in results}
    want = {}
    for r in results:
        if r.skip:
            want[r.full_name] = "SKIPPED"  # todo_test_ rules are never evaluated
        else:
            want[r.full_name] = opa_status(oracle, modules, data, r.full_name)
    assert got == want
    # Each outcome is represented.
    assert {"PASS", "FAIL", "ERROR", "SKIPPED"} <= set(got.values())
    conflict = next(r for r in results if r.name == "test_conflict")
    assert conflict.error is not None and conflict.error.code == "eval_conflict_error"
    assert conflict.error_text().startswith(f"{root / 'outcomes_test.rego'}:44: eval_conflict_error: ")
    printed = next(r for r in results if r.name == "test_prints_then_fails")
    assert printed.output == "quota of bob: 5\n"
    assert next(r for r in results if r.name == "nested.test_ref_head").passed


def _last_opa_failure(oracle: Any, modules: dict[str, str], ref: str) -> Any:
    """The last failed expression in OPA's trace of ``ref`` (outside the top query): what opa test shows."""
    engine = oracle._exact()
    engine.print_handler = lambda message, location: None
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        engine.eval_query(f"x := {ref}", None, trace=True)
        fails = [e for e in engine.last_trace if e["op"] == "Fail" and e["query_id"] != 0]
        return fails[-1] if fails else None
    finally:
        engine.close()


def test_failure_lines_agree_with_opa_trace(oracle: Any) -> None:
    root = CASES / "outcomes"
    modules, _ = opa_inputs(root)
    results = run_tests([root], explain_failures=True)
    checked = 0
    for r in results:
        if not r.fail or r.name in ("test_divide_by_zero",):  # a builtin error: the strict oracle stops there
            continue
        event = _last_opa_failure(oracle, modules, r.full_name)
        if event is None:
            assert r.failure is None, r.full_name  # no body (test_not_boolean := 42)
            continue
        assert r.failure is not None, r.full_name
        assert f"{Path(r.failure.file).name}:{r.failure.row}" == event["location"], r.full_name
        want = {k: json.dumps(v) for k, v in (event.get("locals") or {}).items()}
        got = {v.name: v.value for v in r.failure.variables if v.value != "undefined"}
        assert got == {k: want[k] for k in got}, r.full_name
        assert set(want) <= set(got), r.full_name
        checked += 1
    assert checked >= 5


def _opa_sub_results(oracle: Any, modules: dict[str, str], ref: str) -> dict[str, Any]:
    """OPA's sub-results of a parameterized test whose rule calls internal.test_case: the cases its
    trace records (a failure unless the value makes them true) merged with the value's keys."""
    engine = oracle._exact()
    engine.print_handler = lambda message, location: None
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        value = engine.eval_query(f"x := {ref}", None, trace=True)[0]["x"]
        trace = engine.last_trace
    finally:
        engine.close()

    def from_value(v: Any) -> dict[str, Any]:
        return {str(k): (from_value(x) if isinstance(x, dict) else x is True) for k, x in v.items()}

    tree = from_value(value)
    prefix = "internal.test_case("
    for event in trace:
        if event["op"] != "TestCase":
            continue
        names = [n if isinstance(n, str) else json.dumps(n) for n in json.loads(event["node"][len(prefix) : -1])]
        level = tree
        for n in names[:-1]:
            level = level.setdefault(n, {})
        level.setdefault(names[-1], False)
    return tree


def _sub_tree(subs: dict[str, SubResult]) -> dict[str, Any]:
    return {name: (_sub_tree(s.sub_results) if s.sub_results else not s.fail) for name, s in subs.items()}


def test_parameterized_tests_agree_with_opa(oracle: Any) -> None:
    root = CASES / "params"
    modules, _ = opa_inputs(root)
    results = {r.name: r for r in run_tests([root], explain_failures=True)}
    for marked, twin in (("test_double_marked", "test_double"), ("test_grid_marked", "test_grid")):
        want = _opa_sub_results(oracle, modules, f"data.params_test.{marked}")
        # With the case marked by hand, and with OPA's marking emulated: the same cases.
        assert _sub_tree(results[marked].sub_results) == want
        assert _sub_tree(results[twin].sub_results) == want
        assert results[marked].fail and results[twin].fail
    assert _sub_tree(results["test_double"].sub_results) == {"one": True, "two": True, "three": False}
    assert results["test_square"].passed
    assert _sub_tree(results["test_numbers"].sub_results) == {"1": True, "2": False, "3": True}
    # The failed case's failure line: the comparison, with tc's value.
    three = results["test_double"].sub_results["three"]
    assert three.failure is not None and three.failure.row == 15
    assert [(v.name, v.value) for v in three.failure.variables] == [("tc", '{"in": 3, "note": "three", "want": 7}')]


def test_repeated_test_names_are_separate_tests() -> None:
    # OPA's rewriteDuplicateTestNames: the second rule named test_same is test_same#01, the
    # third test_same#02; todo_test_ rules are not renamed.
    results = run_tests([CASES / "dups"])
    assert [(r.name, r.outcome) for r in results] == [
        ("test_same", "FAIL"),
        ("test_same#01", "PASS"),
        ("todo_test_twice", "SKIPPED"),
        ("test_same#02", "PASS"),
        ("todo_test_twice", "SKIPPED"),
    ]


def test_v0_fixture() -> None:
    results = run_tests([CASES / "v0"], v0_compatible=True)
    engine = pyrego.Engine()
    engine.set_rego_v0(True)
    engine.add_policies_from_dir(CASES / "v0")
    assert [r.name for r in results] == ["test_pod_without_team_denied", "test_pod_with_team_allowed", "test_service_ignored"]
    for r in results:
        assert r.passed == (engine.eval_rule(r.full_name) is True) == True  # noqa: E712
    with pytest.raises(LoadFailure) as info:
        run_tests([CASES / "v0"])
    assert all(e.code == "rego_parse_error" for e in info.value.errors)


def test_function_named_like_a_test_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f_test.rego").write_text("package f\n\ntest_f(x) if x > 1\n\ntest_ok if test_f(2)\n")
    results = run_tests([tmp_path])
    assert [(r.name, r.outcome) for r in results] == [("test_f", "ERROR"), ("test_ok", "PASS")]
    assert "function data.f.test_f used as reference, not called" in results[0].error_text()


# ---------------------------------------------------------------- reports


def _normalized(text: str) -> str:
    return _DURATION.sub("(T)", text)


def test_pretty_report() -> None:
    p = pyrego_test(rel(CASES / "outcomes"))
    assert p.returncode == 2
    f = rel(CASES / "outcomes" / "outcomes_test.rego")
    assert _normalized(p.stdout) == (
        f"{f}:\n"
        "data.outcomes_test.test_bob_writes: FAIL (T)\n"
        "data.outcomes_test.test_bob_quota: FAIL (T)\n"
        "data.outcomes_test.test_unknown_quota: FAIL (T)\n"
        "data.outcomes_test.test_prints_then_fails: FAIL (T)\n"
        "\n"
        "  quota of bob: 5\n"
        "\n"
        "data.outcomes_test.test_conflict: ERROR (T)\n"
        f"  {f}:44: eval_conflict_error: complete rules must not produce multiple outputs"
        " (rule data.outcomes_test.test_conflict produced conflicting values)\n"
        "data.outcomes_test.test_divide_by_zero: FAIL (T)\n"
        "data.outcomes_test.test_not_boolean: FAIL (T)\n"
        "data.outcomes_test.test_false: FAIL (T)\n"
        "data.outcomes_test.todo_test_later: SKIPPED\n"
        "data.outcomes_test.test_negated_failure: FAIL (T)\n"
        + "-" * 80
        + "\nPASS: 5/15\nFAIL: 8/15\nSKIPPED: 1/15\nERROR: 1/15\n"
    )


def test_verbose_report_groups_by_file_and_shows_failures(tmp_path: Path) -> None:
    (tmp_path / "a_test.rego").write_text(
        'package a\n\ntest_one if true\n\ntest_two if {\n\tprint("two")\n\tx := 1\n\tx == 2\n}\n'
    )
    (tmp_path / "b_test.rego").write_text("package b\n\ntest_three if true\n\ntodo_test_four if false\n")
    p = pyrego_test("-v", str(tmp_path))
    assert p.returncode == 2
    a, b = tmp_path / "a_test.rego", tmp_path / "b_test.rego"
    from pyrego.testing import features

    if features.trace_available():
        # OPA's trace, filtered to the failure and the rules that led to it, printed as
        # its reporter prints it: every cell (and each row's end) indented by two spaces.
        rows = [("query:1", "Enter data.a.test_two"), (f"{a}:5", "| Enter data.a.test_two"), (f"{a}:8", "| | Fail x == 2")]
        width = max(len(loc) for loc, _ in rows) + 4
        explanation = "".join(f"  {loc:<{width}} " + f"  {text}" + "  \n" for loc, text in rows)
    else:
        # Without a trace, the failed expression stands in for it.
        explanation = f"  {a}:8:\n    \tx == 2\n\n"
    assert _normalized(p.stdout) == (
        "FAILURES\n" + "-" * 80 + "\n"
        "data.a.test_two: FAIL (T)\n"
        "\n" + explanation + "\n"
        "SUMMARY\n" + "-" * 80 + "\n"
        f"{a}:\n"
        "data.a.test_one: PASS (T)\n"
        "data.a.test_two: FAIL (T)\n"
        "\n"
        "  two\n"
        "\n"
        "\n"
        f"{b}:\n"
        "data.b.test_three: PASS (T)\n"
        "data.b.todo_test_four: SKIPPED\n" + "-" * 80 + "\n"
        "PASS: 2/4\nFAIL: 1/4\nSKIPPED: 1/4\n"
    )


def test_var_values_report() -> None:
    p = pyrego_test("--var-values", "-r", "test_bob_quota|test_double$", rel(CASES / "outcomes"), rel(CASES / "params"))
    assert p.returncode == 2
    f = rel(CASES / "outcomes" / "outcomes_test.rego")
    g = rel(CASES / "params" / "params_test.rego")
    # OPA's layout: the expression as written (tabs kept), a bar under each variable, its value below.
    assert _normalized(p.stdout) == (
        "FAILURES\n" + "-" * 80 + "\n"
        "data.outcomes_test.test_bob_quota: FAIL (T)\n"
        "\n"
        f"  {f}:23:\n"
        "    \tq == 10\n"
        "    \t|\n"
        "    \t5\n"
        "\n"
        "data.params_test.test_double: FAIL (T)\n"
        "\n"
        "  three: FAIL\n"
        "    \n"
        f"      {g}:15:\n"
        "        \ttc.in * 2 == tc.want\n"
        "        \t|\n"
        '        \t{"in": 3, "note": "three", "want": 7}    \n'
        "\n"
        "SUMMARY\n" + "-" * 80 + "\n"
        f"{f}:\n"
        "data.outcomes_test.test_bob_quota: FAIL (T)\n"
        "\n"
        f"{g}:\n"
        "data.params_test.test_double: FAIL (T)\n"
        "  three: FAIL\n" + "-" * 80 + "\n"
        "PASS: 2/4\nFAIL: 2/4\n"
    )


def test_json_report_shape() -> None:
    p = pyrego_test("--format", "json", rel(CASES / "outcomes"), rel(CASES / "params"))
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    by_name = {r["name"]: r for r in doc}
    order = ["error", "location", "benchmark_result", "sub_results", "package", "name", "output", "duration", "fail", "skip"]
    for r in doc:
        keys = list(r)
        assert keys == [k for k in order if k in r]  # Go's field order, empty fields left out
        assert set(r["location"]) == {"file", "row", "col"}
        assert isinstance(r["duration"], int)
        assert r["package"].startswith("data.")
    ok = by_name["test_admin_allowed"]
    assert "fail" not in ok and "skip" not in ok and "error" not in ok
    assert by_name["test_bob_writes"]["fail"] is True
    assert by_name["todo_test_later"]["skip"] is True and by_name["todo_test_later"]["duration"] == 0
    err = by_name["test_conflict"]["error"]
    assert err["code"] == "eval_conflict_error" and set(err) == {"code", "message", "location"}
    # print() output is bytes in Go: base64 in JSON.
    assert base64.b64decode(by_name["test_prints_then_fails"]["output"]) == b"quota of bob: 5\n"
    assert by_name["test_double"]["sub_results"] == {
        "one": {"name": "one"},
        "three": {"name": "three", "fail": True},
        "two": {"name": "two"},
    }
    assert by_name["test_grid"]["sub_results"]["q"] == {
        "sub_results": {"r": {"name": "r", "fail": True}, "s": {"name": "s", "fail": True}},
        "name": "q",
        "fail": True,
    }
    assert p.stdout.startswith('[\n  {\n    "location": {\n      "file": ')


# ---------------------------------------------------------------- flags and exit statuses


def test_exit_statuses(tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.mkdir()
    (good / "t_test.rego").write_text("package t\n\ntest_a if true\n")
    skipped = tmp_path / "skipped"
    skipped.mkdir()
    (skipped / "t_test.rego").write_text("package s\n\ntest_a if true\n\ntodo_test_b if false\n")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "t_test.rego").write_text("package b\n\ntest_a if {\n")

    assert pyrego_test(str(good)).returncode == 0
    assert pyrego_test(rel(CASES / "outcomes")).returncode == 2  # failures and errors: 2, as opa test
    assert pyrego_test(str(skipped)).returncode == 2  # a skipped test is not a pass
    assert pyrego_test("-z", str(skipped)).returncode == 0
    p = pyrego_test(str(broken))
    assert p.returncode == 1 and "rego_parse_error" in p.stderr and p.stdout == ""
    p = pyrego_test(str(tmp_path / "missing"))
    assert p.returncode == 1 and "no such file or directory" in p.stderr
    p = pyrego_test("-r", "nothing_matches", str(good))
    assert (p.returncode, p.stdout) == (0, "")
    p = pyrego_test("--fail-on-empty", "-r", "nothing_matches", str(good))
    assert p.returncode == 1 and p.stderr == "no tests were run\n"
    p = pyrego_test("-r", "(", str(good))
    assert p.returncode == 1 and "error parsing regexp" in p.stderr
    # Usage errors: 2.
    assert pyrego_test().returncode == 2
    p = pyrego_test("--timeout", "5", str(good))  # a Go duration needs a unit
    assert p.returncode == 2 and "--timeout" in p.stderr


def test_run_filter_matches_full_names() -> None:
    names = [r.full_name for r in run_tests([CASES / "outcomes"], run="bob")]
    assert names == [
        "data.outcomes_test.test_bob_reads",
        "data.outcomes_test.test_bob_writes",
        "data.outcomes_test.test_bob_quota",
    ]
    # Unanchored, over the whole name (package included), as Go's regexp.MatchString.
    assert len(run_tests([CASES / "outcomes"], run=r"^data\.outcomes_test\.test_(admin|false)")) == 2
    nested = [r.full_name for r in run_tests([CASES / "outcomes"], run=r"nested\.test_")]
    assert nested == ["data.outcomes_test.nested.test_ref_head"]


def test_ignore_globs(tmp_path: Path) -> None:
    (tmp_path / "keep_test.rego").write_text("package k\n\ntest_a if true\n")
    (tmp_path / "skip_test.rego").write_text("package s\n\ntest_b if {\n")  # would not parse
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "v_test.rego").write_text("package v\n\ntest_c if true\n")
    results = run_tests([tmp_path], ignore=["skip_*", "vendor"])
    assert [r.full_name for r in results] == ["data.k.test_a"]
    p = pyrego_test("--ignore", "skip_*,vendor", str(tmp_path))
    assert (p.returncode, p.stdout) == (0, "PASS: 1/1\n")
    p = pyrego_test("--ignore", "*_test.rego", "--fail-on-empty", str(tmp_path))
    assert p.returncode == 1


def test_timeout_per_test() -> None:
    start = time.monotonic()
    p = pyrego_test("--timeout", "300ms", "--format", "json", rel(CASES / "timeout"))
    elapsed = time.monotonic() - start
    assert p.returncode == 2
    by_name = {r["name"]: r for r in json.loads(p.stdout)}
    assert "error" not in by_name["test_fast"]
    assert by_name["test_slow"]["error"]["code"] == "eval_cancel_error"
    assert by_name["test_slow"]["duration"] < 5_000_000_000
    assert elapsed < 60


def test_bench_lines() -> None:
    p = pyrego_test("--bench", "-r", "test_admin_allowed", rel(CASES / "outcomes"))
    assert p.returncode == 0, p.stderr
    line, rule, summary = p.stdout.splitlines()
    # Go's benchmark result: name, iterations (%8d), ns/op (prettyPrint).
    assert re.fullmatch(r"data\.outcomes_test\.test_admin_allowed\t +\d+\t +\d+(\.\d+)? ns/op", line), line
    assert int(line.split("\t")[1]) > 1
    assert rule == "-" * 80 and summary == "PASS: 1/1"
    p = pyrego_test("--bench", "--format", "gobench", "-r", "test_admin_allowed", rel(CASES / "outcomes"))
    assert p.stdout.startswith("BenchmarkDataOutcomesTestTestAdminAllowed\t")
    p = pyrego_test("--format", "gobench", rel(CASES / "outcomes"))
    assert p.returncode == 0 and "without running benchmarks" in p.stderr


def test_explain_flag(tmp_path: Path) -> None:
    from pyrego.testing import features

    if not features.trace_available():
        p = pyrego_test("--explain", "fails", rel(CASES / "v0"), "--v0-compatible")
        assert p.returncode == 2 and "not available" in p.stderr
        return
    (tmp_path / "n_test.rego").write_text(
        'package n\n\nallowed(x) if {\n\ttrace("checking x")\n\tx > 1\n}\n\ntest_noted if allowed(0)\n\ntest_ok if allowed(2)\n'
    )
    f = tmp_path / "n_test.rego"
    # --explain turns on the verbose report; a failed test shows the trace its mode keeps.
    p = pyrego_test("--explain", "notes", str(tmp_path))
    assert p.returncode == 2
    assert re.search(r"\n  [^\n]*n_test\.rego:4 +  (\| )+Note \"checking x\"  \n", p.stdout), p.stdout
    assert "Fail x > 1" not in p.stdout
    assert "data.n.test_ok: PASS" in p.stdout  # verbose
    p = pyrego_test("--explain", "fails", str(tmp_path))
    assert "Fail x > 1" in p.stdout and "Note" not in p.stdout
    p = pyrego_test("--explain", "full", str(tmp_path))
    assert "Eval x > 1" in p.stdout and "Note" in p.stdout and "Fail x > 1" in p.stdout
    assert f"{f}:5" in p.stdout


def test_coverage_report_agrees_with_opa(oracle: Any) -> None:
    from pyrego.testing import features

    root = CASES / "coverage"
    if not features.coverage_available():
        p = pyrego_test("--coverage", rel(root))
        assert p.returncode == 2 and "not available" in p.stderr
        return
    # One test: the run's coverage is that of evaluating the one test rule in OPA.
    engine = oracle._exact()
    try:
        for path in sorted(root.glob("*.rego")):
            engine.add_policy(rel(path), path.read_text(encoding="utf-8"))
        engine.eval_query("data.cov_test.test_admin", None, coverage=True)
        want = json.loads(json.dumps(engine.last_coverage, default=float))
    finally:
        engine.close()
    p = pyrego_test("--coverage", rel(root))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == want
    assert p.stdout.endswith('\n  "coverage": 40\n}\n')  # Go writes a whole float without a fraction
    # Below the threshold: OPA's message, exit 2; -v lists the lines not covered.
    p = pyrego_test("--threshold", "50", rel(root))
    assert (p.returncode, p.stdout, p.stderr) == (2, "", "Code coverage threshold not met: got 40.00 instead of 50.00\n")
    p = pyrego_test("--threshold", "50", "-v", rel(root))
    f = rel(root / "policy.rego")
    assert p.stderr == (
        "Code coverage threshold not met: got 40.00 instead of 50.00\nLines not covered:\n"
        f"\t{f}:5\n\t{f}:11-13\n\t{f}:16-17\n"
    )
    assert pyrego_test("--threshold", "40", rel(root)).returncode == 0
    # A failed test: reported, and the run fails (exit 1).
    p = pyrego_test("--coverage", rel(CASES / "outcomes"))
    assert p.returncode == 1


def test_coverage_with_failed_skipped_and_erring_tests_is_opas() -> None:
    """``opa test --coverage`` when not every test passes (v1/tester/reporter.go,
    JSONCoverageReporter.Report, and cmd/test.go's runTests): the failed tests alone
    go through the pretty reporter (so its summary counts only them), the first
    failure is the command's error on stderr, no coverage report is printed, exit 1.
    A test that errs is the error at once (exit 1). Skipped tests do not stop the
    report, but the run exits 2 for them (0 with -z), as without --coverage."""
    from pyrego.testing import features

    if not features.coverage_available():
        pytest.skip("no coverage support")
    root = rel(CASES / "outcomes")
    p = pyrego_test("--coverage", root, "-r", "test_admin_allowed|test_bob_writes|test_bob_quota|todo_test_later")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0] == f"{root}/outcomes_test.rego:"
    assert [line.split(" (")[0] for line in lines[1:3]] == [
        "data.outcomes_test.test_bob_writes: FAIL",
        "data.outcomes_test.test_bob_quota: FAIL",
    ]
    assert lines[3:] == ["-" * 80, "FAIL: 2/2"]
    assert p.stderr.split(" (")[0] == "data.outcomes_test.test_bob_writes: FAIL"
    assert '"coverage"' not in p.stdout
    # An error ends the run with it.
    p = pyrego_test("--coverage", root, "-r", "test_admin_allowed|test_conflict")
    assert (p.returncode, p.stdout) == (1, "")
    assert "eval_conflict_error" in p.stderr
    # Passed and skipped tests: the report, and the exit status of the skip.
    p = pyrego_test("--coverage", root, "-r", "test_admin_allowed|todo_test_later")
    assert p.returncode == 2 and json.loads(p.stdout)["coverage"] > 0
    assert pyrego_test("--coverage", "-z", root, "-r", "test_admin_allowed|todo_test_later").returncode == 0


def test_threshold_must_be_a_percentage() -> None:
    p = pyrego_test("--threshold", "101", rel(CASES / "v0"))
    assert p.returncode == 1 and "between 0 and 100" in p.stderr


def test_go_duration() -> None:
    # Go's time.Duration.String().
    assert go_duration(0) == "0s"
    assert go_duration(1) == "1ns"
    assert go_duration(999) == "999ns"
    assert go_duration(1_100) == "1.1µs"
    assert go_duration(540_459) == "540.459µs"
    assert go_duration(2_200_000) == "2.2ms"
    assert go_duration(1_000_000) == "1ms"
    assert go_duration(3_300_000_000) == "3.3s"
    assert go_duration(65_000_000_000) == "1m5s"
    assert go_duration(4_530_918_273_645) == "1h15m30.918273645s"
    assert go_duration(3_600_000_000_000) == "1h0m0s"


def test_python_api_result_fields() -> None:
    results = run_tests([CASES / "outcomes"], run="test_prints_then_fails|test_admin_allowed|todo_")
    assert all(isinstance(r, TestResult) for r in results)
    admin, printed, todo = results
    assert (admin.passed, admin.outcome, admin.duration_ns > 0) == (True, "PASS", True)
    assert admin.location.file == str(CASES / "outcomes" / "outcomes_test.rego") and admin.location.row == 7
    assert (printed.fail, printed.output, printed.failure) == (True, "quota of bob: 5\n", None)
    assert (todo.skip, todo.outcome, todo.line()) == (True, "SKIPPED", "data.outcomes_test.todo_test_later: SKIPPED")
