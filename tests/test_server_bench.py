"""benchmarks/server.py: the requests it sends (seed policies under their own packages,
inputs rotated, answers checked against the engine) and a short real run under wrk
(no figure is asserted: only that every request was answered, without errors)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from shared_material import need_shared

REPO = Path(__file__).resolve().parent.parent


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("server_bench", REPO / "benchmarks" / "server.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["server_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def _shared() -> Path:
    return need_shared("bench", "seed").parent.parent


def test_requests_cover_every_seed_policy_and_input(tmp_path: Path) -> None:
    bench = _bench()
    shared = _shared()
    requests, texts = bench.prepare(shared, ["all"], tmp_path)
    names = sorted(p.name.removesuffix("_policy.rego") for p in (shared / "bench" / "seed" / "policies").glob("*_policy.rego"))
    assert sorted(texts) == names
    inputs = list((shared / "bench" / "seed" / "inputs").glob("*_input*.json"))
    assert len(requests) == len(inputs) == 27
    assert [r[0] for r in requests[: len(names)]] == [f"/v1/data/bench/{n}/allow" for n in names]  # interleaved
    for name, text in texts.items():
        assert f"package bench.{name}\n" in text
        assert (tmp_path / "policies" / f"{name}.rego").read_text() == text
    expected = bench.expected_results(requests, texts)
    assert all(isinstance(v, bool) for v in expected)
    assert True in expected and False in expected  # (the inputs decide both ways)


def test_one_policy_served_as_it_is(tmp_path: Path) -> None:
    bench = _bench()
    shared = _shared()
    requests, texts = bench.prepare(shared, ["rbac"], tmp_path)
    assert {r[0] for r in requests} == {"/v1/data/bench/allow"} and len(requests) == 3
    assert texts["rbac"] == (shared / "bench" / "seed" / "policies" / "rbac_policy.rego").read_text()


def test_short_run_under_wrk(tmp_path: Path) -> None:
    if shutil.which("wrk") is None:
        if os.environ.get("PYREGO_NO_WRK") == "1":
            pytest.skip("PYREGO_NO_WRK=1: the load-test tool is not used")
        pytest.fail("wrk is not installed (Debian: apt-get install wrk; .ci/run installs it), or set PYREGO_NO_WRK=1")
    bench = _bench()
    shared = _shared()
    status = bench.main(
        ["--duration", "1", "--warmup", "0", "--connections", "2", "--workers", "1", "--policies", "rbac,time_based", "--shared", str(shared), "--out", str(tmp_path)]
    )
    assert status == 0
    doc = json.loads((tmp_path / "server.json").read_text())
    runs = {r["server"]: r for r in doc["runs"]}
    assert set(runs) == {"ceiling", "pyrego"}
    for run in runs.values():
        assert run["requests"] > 0 and run["errors_total"] == 0
    assert "| pyrego | 1 |" in (tmp_path / "server.md").read_text()
