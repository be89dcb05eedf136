"""The benchmark suite (pyrego.bench): a quick run on tiny periods, its outputs,
and the agreement check that must stop a run when engines disagree.

Only pyrego is run (peers are optional); the runs read the seed and ACI
workloads from the shared folder and are skipped without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyrego.bench import engines as bench_engines
from pyrego.bench.cli import main
from pyrego.bench.engines import UNDEFINED_MARK, Evaluator, Prepared, PyregoAdapter, normalize
from pyrego.bench.report import fmt_time
from pyrego.bench.runner import CONFIGS, STAGES, Stat, timed_loop
from pyrego.bench.workloads import PolicySet, default_paths

PATHS = default_paths()
NEEDS_SHARED = pytest.mark.skipif(
    PATHS.seed_dir is None or not PATHS.seed_dir.is_dir(), reason="no shared bench folder (../shared/bench or $PYREGO_SHARED)"
)
TINY = ["--quick", "--warmup", "0.05", "--measure", "0.05", "--no-progress"]


def _load(out: Path) -> dict[str, Any]:
    data = json.loads((out / "results.json").read_text())
    assert isinstance(data, dict)
    return data


@NEEDS_SHARED
def test_quick_run_writes_report_json_and_plots(tmp_path: Path) -> None:
    assert main([*TINY, "--engines", "pyrego", "--out", str(tmp_path)]) == 0
    data = _load(tmp_path)
    for key in ("environment", "settings", "engines", "workloads", "agreement", "throughput", "aci", "init"):
        assert key in data, key
    assert data["agreement"]["ok"] is True and data["agreement"]["compared"] > 0
    assert [e["name"] for e in data["engines"]] == ["pyrego"]
    assert {w["name"] for w in data["workloads"]} == {"seed", "allow", "aci"}
    points = data["throughput"]["points"]
    # 5 configurations x (1 worker, 2 threads, 2 processes)
    assert len(points) == len(CONFIGS) * 3
    assert {p["config"] for p in points} == {c.key for c in CONFIGS}
    for p in points:
        assert p["error"] is None, p
        assert p["evals"] > 0 and p["seconds"] > 0 and p["kelem_s"] > 0
    cases = data["aci"]["cases"]["pyrego"]
    assert len(cases) == 9 and all(c["us_per_eval"] > 0 for c in cases)
    assert set(data["aci"]["load"]["pyrego"]) == {"cold", "warm"}
    stages = data["init"]["pyrego_stages"]["seed"]
    assert set(stages) == set(STAGES) | {"total"}
    # Python's compile() may not run at all: rules run as closures until hot.
    assert all(stages[s]["n"] >= 9 and (stages[s]["median_s"] > 0 or s == "py_compile") for s in STAGES)
    assert set(data["init"]["fresh"]["pyrego"]) == {"warm", "cold"}

    report = (tmp_path / "report.md").read_text()
    for heading in ("## Test Environment", "## Headline", "## Performance Results", "## Large policy: ACI", "## Initialization cost", "## Analysis"):
        assert heading in report, heading
    assert "DISAGREEMENT" not in report
    assert "us/iter (+/- " in report
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib" in " ".join(data["notes"])
    else:
        assert len(list(tmp_path.glob("throughput_*.png"))) == len(CONFIGS)


class _LiarPrepared(Prepared):
    """pyrego with every boolean answer negated."""

    def __init__(self, inner: Prepared) -> None:
        self.inner = inner

    def set_input(self, value: Any) -> None:
        self.inner.set_input(value)

    def set_input_json(self, text: str) -> None:
        self.inner.set_input_json(text)

    def add_data(self, data: Any) -> None:
        self.inner.add_data(data)

    def eval(self, query: str) -> Any:
        v = self.inner.eval(query)
        return (not v) if isinstance(v, bool) else v

    def clone(self) -> Prepared:
        return _LiarPrepared(self.inner.clone())


class _LiarAdapter(PyregoAdapter):
    name = "liar"
    title = "liar (negated pyrego)"

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        return _LiarPrepared(super().prepare(ps, modules))

    def fresh_evaluator(self, ps: PolicySet, query: str, json_input: bool, cold: bool) -> Evaluator:
        inner = super().fresh_evaluator(ps, query, json_input, cold)
        return lambda value: not v if isinstance(v := inner(value), bool) else v


@NEEDS_SHARED
def test_disagreement_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench_engines.ADAPTERS, "liar", _LiarAdapter)
    status = main([*TINY, "--engines", "pyrego,liar", "--workloads", "seed", "--out", str(tmp_path)])
    assert status == 1
    data = _load(tmp_path)
    assert data["agreement"]["ok"] is False
    found = data["agreement"]["disagreements"]
    assert len(found) == 27  # every seed case
    assert {"pyrego", "liar"} <= set(found[0]["values"])
    assert data["throughput"]["points"] == []  # nothing was timed
    assert "DISAGREEMENT BETWEEN ENGINES" in (tmp_path / "report.md").read_text()


@NEEDS_SHARED
def test_disagreement_can_be_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench_engines.ADAPTERS, "liar", _LiarAdapter)
    args = [*TINY, "--engines", "pyrego,liar", "--workloads", "seed", "--workers", "1", "--no-plots", "--out", str(tmp_path)]
    assert main([*args, "--allow-disagreement"]) == 0
    data = _load(tmp_path)
    assert data["agreement"]["ok"] is False and data["agreement"]["allowed"] is True
    assert {p["engine"] for p in data["throughput"]["points"]} == {"pyrego", "liar"}
    assert "DISAGREEMENT BETWEEN ENGINES" in (tmp_path / "report.md").read_text()


@NEEDS_SHARED
def test_allow_inputs_return_true_in_pyrego_and_opa() -> None:
    from pyrego.bench.workloads import load_allow

    w = load_allow(PATHS)
    adapter = PyregoAdapter()
    for c in w.cases:
        assert adapter.prepare(w.policy_sets[c.group]).evaluator(c.query, False)(c.input) is True, c.label
    try:
        from opa_oracle import OracleUnavailable, get_oracle

        oracle = get_oracle()
    except (ImportError, OracleUnavailable) as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    for c in w.cases:
        ps = w.policy_sets[c.group]
        res = oracle.evaluate(dict(ps.modules), f"x := {c.query}", input=c.input)
        assert res.bindings == [{"x": True}], (c.label, res)


def test_normalize_keeps_rego_equality() -> None:
    assert normalize(True) != normalize(1)
    assert normalize(1) == normalize(1.0)
    assert normalize({2, 1}) == normalize([1, 2])
    assert normalize(UNDEFINED_MARK) != normalize(False)
    assert normalize({"a": [1, {"b": None}]}) == normalize({"a": [1.0, {"b": None}]})


def test_stat_and_formatting() -> None:
    st = Stat.of([1e-6, 2e-6, 3e-6, 4e-6, 100e-6])
    assert st.median == pytest.approx(3e-6) and st.n == 5
    assert fmt_time(12.3e-6, 0.4e-6, "/iter") == "12.3 us/iter (+/- 0.4)"
    assert fmt_time(0.0123) == "12.3 ms"
    assert Stat.of([]).n == 0


def test_timed_loop_counts_rounds() -> None:
    calls: list[int] = []
    steps = [(calls.append, 1), (calls.append, 2)]
    m = timed_loop(steps, 0.0, 0.01, per_step=False)
    assert m.evals % 2 == 0 and m.evals > 0 and m.seconds >= 0.01 and m.cpu_seconds > 0
    assert len(calls) >= m.evals
    assert timed_loop(steps, 0.0, 0.01, per_step=True).evals > 0
