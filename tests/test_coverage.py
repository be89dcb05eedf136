"""Coverage reports: the same covered and not-covered lines as OPA, and the engine API.

The differential tests evaluate each program in OPA (the oracle's coverage
report) and in pyrego with coverage on, and compare the sets of lines each
report marks covered and not covered, file by file: the 9 seed policies x 3
inputs, every test rule of the Rego v1 repositories in tests/repos, and every
OPA conformance case that evaluates without an error in both engines. The conformance cases in :data:`KNOWN_DIFFERENCES` differ
deliberately (pyrego evaluates those documents another way; see the reasons
there): they are checked to still differ, so the list cannot go stale.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.ast import nodes as ast
from pyrego.conformance import Case, iter_cases
from pyrego.instrument.coverage import line_sets
from shared_material import SHARED_DIR

SEED_DIR = SHARED_DIR / "bench" / "seed" if SHARED_DIR is not None else None
CONFORMANCE_ROOT = SHARED_DIR / "opa-conformance" / "v1" if SHARED_DIR is not None else None
NO_SHARED = "no ../shared (seed policies and conformance cases) beside the repository and no $PYREGO_SHARED"

_PARTIAL_KEY = (
    "a partial rule read with a key that is only partly known (data.p[[x, 2]]) or spread over rules "
    "with ref heads (p[k] beside p.foo): OPA evaluates each rule for that key, pyrego the whole document"
)
#: Conformance cases whose coverage differs from OPA's on purpose, with the reason.
KNOWN_DIFFERENCES = {
    "compositereferences/unify partial ground array": _PARTIAL_KEY,
    "planner-ir/ir/call-dynamic with ref heads and unrelated rule (issue 7399)": _PARTIAL_KEY,
    "refheads/regression/virtual-cache key scope": _PARTIAL_KEY,
    "type/regression/partial-object override, different key type, query": _PARTIAL_KEY,
    "negation/not-body: negated call with vars, undefined operands": (
        "`not` over a whole body (import future.keywords.not): pyrego does not split that body as OPA does"
    ),
}


def _opa_engine() -> Any:
    from opa_bindings.engine import OpaEngine  # on sys.path once the oracle fixture has loaded it

    return OpaEngine()


def _opa_coverage(modules: dict[str, str], query: str, input: Any, data: Any = None) -> dict[str, Any]:
    engine = _opa_engine()
    try:
        for path, text in modules.items():
            engine.add_policy(path, text)
        if data is not None:
            engine.add_data(data)
        engine.eval_query(query, input, coverage=True)
        report: dict[str, Any] = engine.last_coverage
        return report
    finally:
        engine.close()


def _pyrego_coverage(modules: dict[str, str], query: str, input: Any, data: Any = None, strict: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    if data is not None:
        engine.add_data(data)
    engine.add_policies(modules)
    engine.set_enable_coverage(True)
    result = engine.eval_query(query, **_input_arg(input))
    return engine.get_coverage_report(), result


def _input_arg(input: Any) -> dict[str, Any]:
    """The ``input=`` argument: none at all for no input (None is OPA's "no input")."""
    return {} if input is None else {"input": input}


def _differences(modules: dict[str, str], opa: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    out = []
    for path in modules:
        want = line_sets(opa["files"].get(path, {}))
        got = line_sets(ours["files"].get(path, {}))
        if want != got:
            out.append(
                f"{path}: OPA covered {sorted(want[0])} not covered {sorted(want[1])}; "
                f"pyrego covered {sorted(got[0])} not covered {sorted(got[1])}"
            )
    return out


# ---------------------------------------------------------------- seed policies


def _seed_cases() -> list[tuple[str, str]]:
    if SEED_DIR is None or not (SEED_DIR / "policies").is_dir():
        return []
    names = sorted(p.name.removesuffix("_policy.rego") for p in (SEED_DIR / "policies").glob("*_policy.rego"))
    return [(name, suffix) for name in names for suffix in ("", "2", "3")]


SEED_CASES = _seed_cases()


@pytest.mark.parametrize("name,suffix", SEED_CASES or [("none", "")], ids=[f"{n}/input{s or 1}" for n, s in SEED_CASES] or ["seed-missing"])
def test_seed_policy_coverage_matches_opa(name: str, suffix: str, oracle: Any) -> None:
    if not SEED_CASES:
        pytest.skip(NO_SHARED)
    assert SEED_DIR is not None
    path = f"{name}_policy.rego"
    modules = {path: (SEED_DIR / "policies" / path).read_text()}
    input = json.loads((SEED_DIR / "inputs" / f"{name}_input{suffix}.json").read_text())
    opa = _opa_coverage(modules, "data.bench.allow", input)
    ours, _ = _pyrego_coverage(modules, "data.bench.allow", input)
    assert not _differences(modules, opa, ours)
    # The ranges themselves and the figures agree too (OPA writes 65 where Python has 65.0).
    assert json.loads(json.dumps(ours)) == opa


def test_seed_policies_are_all_compared() -> None:
    if not SEED_CASES:
        pytest.skip(NO_SHARED)
    assert len(SEED_CASES) == 27


# ---------------------------------------------------------------- conformance programs


def _conformance_cases() -> list[Case]:
    if CONFORMANCE_ROOT is None or not CONFORMANCE_ROOT.is_dir():
        return []
    return [
        c
        for c in iter_cases(CONFORMANCE_ROOT)
        if c.modules and not c.skip and c.input_term is None and not c.want_error and not c.want_error_code
    ]


def test_conformance_coverage_matches_opa(oracle: Any) -> None:
    """Every conformance program that evaluates in both engines: the same lines,
    and the same results as pyrego's normal code gives."""
    cases = _conformance_cases()
    if not cases:
        pytest.skip(NO_SHARED)
    agree, differ, skipped = 0, [], 0
    known_seen = set()
    for case in cases:
        modules = {f"test-{i}.rego": text for i, text in enumerate(case.modules)}
        input = case.input if case.input_given else None
        try:
            opa = _opa_coverage(modules, case.query, input, case.data)
        except Exception:  # noqa: BLE001 - an error in OPA: nothing to compare
            skipped += 1
            continue
        try:
            normal = pyrego.Engine()
            normal.set_strict_builtin_errors(case.strict_error)
            if case.data is not None:
                normal.add_data(case.data)
            normal.add_policies(modules)
            want_result = normal.eval_query(case.query, **_input_arg(input))
        except pyrego.RegoError:
            skipped += 1
            continue
        ours, result = _pyrego_coverage(modules, case.query, input, case.data, case.strict_error)
        assert result == want_result, f"{case.id}: the instrumented program answered differently"
        problems = _differences(modules, opa, ours)
        if case.id in KNOWN_DIFFERENCES:
            known_seen.add(case.id)
            assert problems, f"{case.id} now agrees with OPA: remove it from KNOWN_DIFFERENCES"
            continue
        if problems:
            differ.append(f"{case.id}: {problems}")
        else:
            agree += 1
    print(f"\ncoverage agreement with OPA on conformance programs: {agree} agree, {len(known_seen)} known differences, {skipped} skipped (errors)")
    assert not differ, "\n".join(differ[:20])
    assert known_seen == set(KNOWN_DIFFERENCES)
    assert agree > 1000


# ---------------------------------------------------------------- policy repositories


REPOS = Path(__file__).resolve().parent / "repos"


@pytest.mark.parametrize("repo", ["api_authz", "infra_scan", "k8s_admission", "mocking"])
def test_repository_test_rules_coverage_matches_opa(repo: str, oracle: Any) -> None:
    """Each test rule of a realistic repository (many files, helper packages,
    METADATA, else chains, mocks), evaluated alone: OPA's lines."""
    from pyrego.engine_support import _package_name

    engine = pyrego.Engine()
    engine.add_policies_from_dir(REPOS / repo)
    modules = {path: text for path, (text, _) in engine._policies.items()}
    tests = sorted(
        {
            f"{_package_name(module)}.{rule.head.ref.head.name}"
            for _, module in engine._policies.values()
            for rule in module.rules
            if isinstance(rule.head.ref.head, ast.Var) and rule.head.ref.head.name.startswith("test_") and not rule.head.ref.path
        }
    )
    opa = _opa_engine()
    try:
        for path, text in modules.items():
            opa.add_policy(path, text)
        if engine._data:
            opa.add_data(json.loads(json.dumps(engine._data)))
        engine.set_enable_coverage(True)
        problems = []
        for test in tests:
            opa.eval_query(test, None, coverage=True)
            engine.clear_coverage_data()
            engine.eval_query(test)
            problems += [f"{test}: {p}" for p in _differences(modules, opa.last_coverage, engine.get_coverage_report())]
    finally:
        opa.close()
    assert len(tests) >= 10
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------- shapes and details


POLICY = """package p

default allow := false

allow if {
    input.x == 1
    count(input.y) > 0
}

deny contains msg if {
    some v in input.y
    v > 10
    msg := sprintf("big %v", [v])
}
"""


def test_report_shape_follows_opa(oracle: Any) -> None:
    modules = {"p.rego": POLICY}
    for input in ({"x": 1, "y": [1, 20]}, {"x": 1}, {"x": 2, "y": [20]}, {}):
        opa = _opa_coverage(modules, "data.p", input)
        ours, _ = _pyrego_coverage(modules, "data.p", input)
        assert json.loads(json.dumps(ours)) == opa, input


def test_line_both_covered_and_not_when_an_expression_stops_early(oracle: Any) -> None:
    # count(input.y) > 0 with no input.y: OPA reaches `input.y` (covered) but
    # never the comparison (not covered): line 7 is in both lists.
    modules = {"p.rego": POLICY}
    ours, _ = _pyrego_coverage(modules, "data.p.deny", {"x": 1, "y": "s"})
    opa = _opa_coverage(modules, "data.p.deny", {"x": 1, "y": "s"})
    assert line_sets(ours["files"]["p.rego"]) == line_sets(opa["files"]["p.rego"])


def test_omits_empty_fields_and_reports_every_module() -> None:
    engine = pyrego.Engine()
    engine.add_policies({"a.rego": "package a\n\nx := 1\n", "b.rego": "package b\n"})
    engine.set_enable_coverage(True)
    report = engine.get_coverage_report()
    assert report["files"]["b.rego"] == {}
    assert report["files"]["a.rego"] == {
        "not_covered": [
            {"start": {"row": 3, "col": 1}, "end": {"row": 3, "col": 7}},
            {"start": {"row": 3, "col": 6}, "end": {"row": 3, "col": 7}},
        ],
        "not_covered_lines": 1,
    }
    assert (report["covered_lines"], report["not_covered_lines"], report["coverage"]) == (0, 1, 0.0)
    assert engine.eval_rule("data.a.x") == 1
    report = engine.get_coverage_report()
    assert report["files"]["a.rego"]["covered_lines"] == 1
    assert "not_covered" not in report["files"]["a.rego"]
    assert report["coverage"] == 100.0


def test_accumulates_until_cleared_and_stops_when_disabled() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    engine.set_enable_coverage(True)
    engine.eval_rule("data.p.allow", input={"x": 2})
    first = line_sets(engine.get_coverage_report()["files"]["p.rego"])[0]
    engine.eval_rule("data.p.allow", input={"x": 1, "y": [1]})
    second = line_sets(engine.get_coverage_report()["files"]["p.rego"])[0]
    assert first < second and {5, 6, 7} <= second
    engine.set_enable_coverage(False)
    engine.eval_query("data.p.deny", input={"y": [20]})
    assert line_sets(engine.get_coverage_report()["files"]["p.rego"])[0] == second
    engine.clear_coverage_data()
    assert engine.get_coverage_report()["covered_lines"] == 0


def test_eval_rule_and_eval_query_give_the_same_answers_with_coverage() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    inputs = [{"x": 1, "y": [1, 20, 30]}, {"x": 1}, {}, {"y": "no"}]
    plain = [(engine.eval_rule("data.p.allow", input=i), engine.eval_rule("data.p.deny", input=i), engine.eval_query("data.p", input=i)) for i in inputs]
    engine.set_enable_coverage(True)
    covered = [(engine.eval_rule("data.p.allow", input=i), engine.eval_rule("data.p.deny", input=i), engine.eval_query("data.p", input=i)) for i in inputs]
    assert covered == plain
    assert engine.eval_rule("data.p.nothing") is pyrego.UNDEFINED


def test_coverage_off_leaves_the_normal_program_untouched() -> None:
    """Zero cost when off: the normal program's source is the same, and the
    engine's evaluation methods are the class's own (nothing in front of them)."""
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    source_before = engine.compiled_source
    program = engine._get_program()
    engine.set_enable_coverage(True)
    engine.eval_rule("data.p.allow", input={"x": 1, "y": [1]})
    engine.eval_query("data.p.deny")
    assert engine.compiled_source == source_before
    assert engine._get_program() is program
    assert "EV(" not in engine.compiled_source
    # (the engine's tables change with coverage, never its methods)
    assert "eval_rule" not in engine.__dict__ and "eval_query" not in engine.__dict__
    engine.set_enable_coverage(False)
    assert "eval_rule" not in engine.__dict__ and "eval_query" not in engine.__dict__
    assert type(engine).eval_rule is pyrego.Engine.eval_rule
    assert engine.eval_rule("data.p.allow", input={"x": 1, "y": [1]}) is True
    fresh = pyrego.Engine()
    fresh.add_policy("p.rego", POLICY)
    assert fresh.compiled_source == source_before


def test_every_way_of_evaluating_a_rule_is_counted() -> None:
    """A prepared rule (each call, not only its first), eval_many (a small
    list goes through a rule the engine keeps prepared per path) and
    eval_query count what eval_rule counts for the same evaluations; so do
    they after coverage is turned off and on again."""
    inputs = [{"x": 1, "y": [1, 20]}, {"x": 2}, {"y": "no"}, {"x": 1, "y": []}]
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    allow = engine.prepare_rule("data.p.allow")
    assert [allow(i) for i in inputs] == [True, False, False, False]
    engine.set_enable_coverage(True)

    def counted(evaluate: Any) -> dict[str, Any]:
        engine.clear_coverage_data()
        evaluate()
        return engine.get_coverage_report()

    by_eval_rule = counted(lambda: [engine.eval_rule("data.p.allow", input=i) for i in inputs])
    assert by_eval_rule["covered_lines"] > 0
    one = counted(lambda: engine.eval_rule("data.p.allow", input=inputs[1]))
    assert 0 < one["covered_lines"] < by_eval_rule["covered_lines"]
    for _ in range(2):
        assert counted(lambda: [allow(i) for i in inputs]) == by_eval_rule
        assert counted(lambda: list(engine.eval_many("data.p.allow", inputs))) == by_eval_rule
        assert counted(lambda: [engine.eval_query("x = data.p.allow", input=i) for i in inputs]) == by_eval_rule
        assert counted(lambda: [engine.eval_query("x = allow", input=i, package="p") for i in inputs]) == by_eval_rule
        engine.set_enable_coverage(False)
        assert counted(lambda: [allow(i) for i in inputs])["covered_lines"] == 0
        assert counted(lambda: engine.eval_query("x = data.p.allow", input=inputs[0]))["covered_lines"] == 0
        engine.set_enable_coverage(True)
    # Results are the same with coverage on, by each way.
    assert [allow(i) for i in inputs] == [r.value for r in engine.eval_many("data.p.allow", inputs)] == [True, False, False, False]


def test_threads_share_one_engine_and_their_coverage_merges() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    engine.set_enable_coverage(True)
    inputs = [{"x": 1, "y": [1]}, {"x": 2}, {"y": [50]}, {"x": 1, "y": []}]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(30):
                engine.eval_rule("data.p.allow", input=inputs[i % 4])
                engine.eval_rule("data.p.deny", input=inputs[(i + 1) % 4])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    merged = engine.get_coverage_report()
    single = pyrego.Engine()
    single.add_policy("p.rego", POLICY)
    single.set_enable_coverage(True)
    for i in inputs:
        single.eval_rule("data.p.allow", input=i)
        single.eval_rule("data.p.deny", input=i)
    assert merged == single.get_coverage_report()


def test_clone_collects_its_own_coverage() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    engine.set_enable_coverage(True)
    twin = engine.clone()
    twin.eval_rule("data.p.allow", input={"x": 1, "y": [1]})
    assert engine.get_coverage_report()["covered_lines"] == 0
    assert twin.get_coverage_report()["covered_lines"] > 0


def test_pretty_report_marks_lines() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    engine.set_enable_coverage(True)
    engine.eval_rule("data.p.allow", input={"x": 1, "y": 5})  # count(5) is undefined
    text = engine.get_coverage_report_pretty(color=False)
    lines = text.splitlines()
    assert lines[0].startswith("p.rego: ")
    assert any(line.startswith("+  6 |     input.x == 1") for line in lines)
    assert any(line.startswith("~  7 |     count(input.y) > 0") for line in lines)
    assert any(line.startswith("- 10 | deny contains msg if {") for line in lines)
    assert any(line.startswith("   1 | package p") for line in lines)
    assert lines[-1].startswith("Total: ")
    colored = engine.get_coverage_report_pretty(color=True)
    assert "\x1b[" in colored and "input.x == 1" in colored


def test_errors_keep_what_was_covered_before_them() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\n\nx := 1\n\ny := z if {\n    z := 1 / 0\n}\n")
    engine.set_strict_builtin_errors(True)
    engine.set_enable_coverage(True)
    assert engine.eval_rule("data.p.x") == 1
    with pytest.raises(pyrego.RegoError):
        engine.eval_rule("data.p.y")
    covered, _ = line_sets(engine.get_coverage_report()["files"]["p.rego"])
    assert 3 in covered


def test_report_keys_are_module_paths(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.rego").write_text("package lib\n\nf(x) := x + 1\n")
    (tmp_path / "main.rego").write_text("package main\n\nimport data.lib\n\ny := lib.f(1)\n")
    engine = pyrego.Engine()
    engine.add_policies_from_dir(tmp_path)
    engine.set_enable_coverage(True)
    assert engine.eval_rule("data.main.y") == 2
    files = engine.get_coverage_report()["files"]
    assert set(files) == {"lib/a.rego", "main.rego"}
    assert files["lib/a.rego"]["covered_lines"] == 1
