"""The coverage-guided fuzzer (fuzz/fuzz_engine.py) for a short budget.

libFuzzer runs the fuzz target on mutated policies, queries and inputs for
FUZZ_SECONDS; the run must end without a crash (an exception that is not a
RegoError) or a timeout (an evaluation past its limit). Longer runs:
``python fuzz/fuzz_engine.py -max_total_time=3600``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FUZZ_SECONDS = int(os.environ.get("PYREGO_FUZZ_SECONDS", "20"))


def test_coverage_guided_fuzzing_finds_no_crash_or_hang(tmp_path: Path) -> None:
    if importlib.util.find_spec("atheris") is None:
        if os.environ.get("CI"):
            pytest.fail("atheris is a dev dependency on Linux: pip install -e '.[dev]'")
        pytest.skip("atheris is not installed (pip install -e '.[dev]' on Linux)")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "fuzz" / "fuzz_engine.py"),
            f"-max_total_time={FUZZ_SECONDS}",
            "-timeout=20",
            f"-artifact_prefix={tmp_path}/",
            "-print_final_stats=1",
        ],
        capture_output=True,
        text=True,
        timeout=FUZZ_SECONDS + 120,
        cwd=tmp_path,
    )
    tail = proc.stderr[-4000:]
    assert proc.returncode == 0, tail
    assert "Done " in proc.stderr and "stat::number_of_executed_units" in proc.stderr, tail
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*")), tail
