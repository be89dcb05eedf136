"""Shared pytest configuration: where the shared test material lives, and the
summary of known failures (conformance cases and differential cases listed as
known to fail): those that now pass, and how many still fail."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.codegen import closures
from pyrego.codegen import tiers as codegen_tiers

REPO_ROOT = Path(__file__).resolve().parent.parent

KNOWN_FAILURE_FILES = {
    "conformance": "tests/conformance_known_failures.txt",
    "differential": "tests/differential_known_failures.txt",
}


class KnownFailureTracker:
    """Collects, per suite, the listed known failures that passed or failed in this run."""

    def __init__(self) -> None:
        self.newly_passing: dict[str, list[str]] = {}
        self.still_failing: dict[str, list[str]] = {}

    def passed(self, suite: str, case_id: str) -> None:
        self.newly_passing.setdefault(suite, []).append(case_id)

    def failed(self, suite: str, case_id: str) -> None:
        self.still_failing.setdefault(suite, []).append(case_id)


_TRACKER_KEY = pytest.StashKey[KnownFailureTracker]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TRACKER_KEY] = KnownFailureTracker()


@pytest.fixture(scope="session")
def oracle() -> Any:
    """OPA v1.20.2 (tests/opa_oracle.py); a test that asks for it is skipped when it cannot be had."""
    from opa_oracle import OracleUnavailable, get_oracle

    try:
        return get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")


#: pyrego's three ways of running a rule: closures planned from the checked
#: rules (a cold program), compact generated code (closures off), and the
#: fast generated code a hot program is recompiled into.
EXECUTION_FORMS = ("closures", "compact", "fast")


@contextmanager
def in_form(form: str, *, stay_cold: bool = False) -> Iterator[None]:
    """Programs compiled and run inside the block use ``form``, from an empty
    compile cache. ``stay_cold``: the closures and compact forms never turn
    hot (for runs of many evaluations of one program)."""
    assert form in EXECUTION_FORMS
    saved = closures.ENABLED, codegen_tiers.PROMOTE_AFTER
    closures.ENABLED = form == "closures"
    if form == "fast":
        codegen_tiers.PROMOTE_AFTER = 1
    elif stay_cold:
        codegen_tiers.PROMOTE_AFTER = 10**9
    pyrego.clear_compile_cache()
    try:
        yield
    finally:
        closures.ENABLED, codegen_tiers.PROMOTE_AFTER = saved
        pyrego.clear_compile_cache()


@pytest.fixture(scope="module")
def opa_engine(oracle: Any) -> Any:
    """OPA's engine class itself (for its Compile API), where the oracle is available."""
    from opa_bindings.engine import OpaEngine

    return OpaEngine


@pytest.fixture(params=EXECUTION_FORMS)
def execution_form(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Runs the test once per execution form (with an empty compile cache each time)."""
    form = request.param
    monkeypatch.setattr(closures, "ENABLED", form == "closures")
    if form == "fast":
        monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1)
    pyrego.clear_compile_cache()
    yield form
    pyrego.clear_compile_cache()


@pytest.fixture
def known_failures(request: pytest.FixtureRequest) -> KnownFailureTracker:
    """The run's :class:`KnownFailureTracker`."""
    return request.config.stash[_TRACKER_KEY]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    tracker = config.stash.get(_TRACKER_KEY, None)
    if tracker is None:
        return
    suites = sorted(set(tracker.newly_passing) | set(tracker.still_failing))
    if not suites:
        return
    tr = terminalreporter
    tr.section("known failures")
    for suite in suites:
        still = tracker.still_failing.get(suite, [])
        newly = sorted(tracker.newly_passing.get(suite, []))
        tr.write_line(f"{suite}: known failures still failing: {len(still)}")
        if newly:
            where = KNOWN_FAILURE_FILES.get(suite, "the known-failures file")
            tr.write_line(f"{suite}: newly passing known failures: {len(newly)} (remove them from {where})")
            for cid in newly:
                tr.write_line(f"  {cid}")
        else:
            tr.write_line(f"{suite}: newly passing known failures: none")


@contextmanager
def switching_often() -> Iterator[None]:
    """Threads switch every 10 microseconds (races show sooner)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)
