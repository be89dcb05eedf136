"""Shared pytest configuration: where the shared test material lives, and the
conformance summary (known failures that now pass, known failures still failing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyrego.conformance import find_shared_dir

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR: Path | None = find_shared_dir(REPO_ROOT)


def pytest_configure(config: pytest.Config) -> None:
    config._pyrego_conformance = {"newly_passing": [], "still_failing": []}  # type: ignore[attr-defined]


@pytest.fixture
def conformance_tracker(request: pytest.FixtureRequest) -> dict[str, list[str]]:
    """Lists the conformance tests append to, read back by the terminal summary."""
    return request.config._pyrego_conformance  # type: ignore[attr-defined, no-any-return]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = getattr(config, "_pyrego_conformance", None)
    if not state or not (state["newly_passing"] or state["still_failing"]):
        return
    tr = terminalreporter
    tr.section("OPA conformance")
    still = state["still_failing"]
    tr.write_line(f"known failures still failing: {len(still)}")
    newly = sorted(state["newly_passing"])
    if newly:
        tr.write_line(f"newly passing known failures: {len(newly)} (remove them from tests/conformance_known_failures.txt)")
        for cid in newly:
            tr.write_line(f"  {cid}")
    else:
        tr.write_line("newly passing known failures: none")
