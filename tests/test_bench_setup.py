"""``pyrego bench`` runs from any directory and says what to do when OPA is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pyrego.bench import engines, workloads

REPO = Path(__file__).resolve().parent.parent


def test_the_workload_ships_in_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYREGO_SHARED", str(tmp_path / "nowhere"))
    paths = workloads.default_paths()
    assert paths.seed_dir is not None and len(list((paths.seed_dir / "policies").glob("*.rego"))) == 9
    assert len(list((paths.seed_dir / "inputs").glob("*.json"))) == 27
    assert paths.allow_inputs is not None and len(list(Path(paths.allow_inputs).glob("*.json"))) == 9


def test_bench_runs_outside_the_repository(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYREGO_SHARED": str(tmp_path / "nowhere"), "HOME": str(tmp_path)}
    p = subprocess.run(
        [sys.executable, "-m", "pyrego", "bench", "--quick", "--engines", "pyrego", "--workloads", "seed", "--workers", "1",
         "--no-plots", "--no-progress", "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert (tmp_path / "out" / "results.json").is_file()


def test_missing_opa_is_explained_not_a_crash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A checkout whose oracle was never downloaded, with no package index to
    # download it from: the real helper module is loaded and fails cleanly.
    fake = tmp_path / "checkout"
    (fake / "tests").mkdir(parents=True)
    (fake / "src" / "pyrego").mkdir(parents=True)
    (fake / "pyproject.toml").write_text("")
    (fake / "tests" / "opa_oracle.py").write_text((REPO / "tests" / "opa_oracle.py").read_text())
    monkeypatch.setattr(engines, "find_repo_root", lambda: fake)
    monkeypatch.delenv("PYREGO_OPA_ORACLE_DIR", raising=False)
    monkeypatch.delenv("PYREGO_NO_ORACLE_DOWNLOAD", raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setitem(sys.modules, "opa_bindings", None)  # not importable from anywhere else
    monkeypatch.setitem(sys.modules, "opa_bindings.engine", None)
    with pytest.raises(engines.EngineUnavailable) as info:
        engines.load_opa_class()
    assert "python tests/opa_oracle.py" in str(info.value)
