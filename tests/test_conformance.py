"""OPA's conformance cases, one pytest test per case (id ``folder/note``).

Cases listed in ``conformance_known_failures.txt`` are expected to fail: when
they do they are reported as xfail, when they pass they are reported in the
terminal summary as newly passing (so the list can shrink). A case that is not
listed must pass. Without the shared folder (``../shared`` beside the
repository, or ``$PYREGO_SHARED``) every test here is skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED_DIR, KnownFailureTracker
from pyrego.conformance import Case, iter_cases, read_known_failures, run_case

HERE = Path(__file__).resolve().parent
KNOWN_FAILURES = read_known_failures(HERE / "conformance_known_failures.txt")


def _shared_root() -> Path | None:
    if SHARED_DIR is None:
        return None
    root = SHARED_DIR / "opa-conformance" / "v1"
    return root if root.is_dir() else None


ROOT = _shared_root()
CASES: list[Case] = list(iter_cases(ROOT)) if ROOT is not None else []
SKIP_REASON = "OPA conformance cases not found: no ../shared/opa-conformance/v1 beside the repository and no $PYREGO_SHARED"


def test_known_failures_are_real_case_ids() -> None:
    """Every id in the known-failures file names an existing case."""
    if ROOT is None:
        pytest.skip(SKIP_REASON)
    ids = {c.id for c in CASES}
    stale = sorted(set(KNOWN_FAILURES) - ids)
    assert not stale, f"known failures that are not case ids: {stale[:10]}"


@pytest.mark.parametrize("case", CASES or [None], ids=[c.id for c in CASES] or ["conformance-cases-missing"])
def test_conformance(case: Case | None, known_failures: KnownFailureTracker) -> None:
    if case is None:
        pytest.skip(SKIP_REASON)
    passed, detail = run_case(case)
    known = case.id in KNOWN_FAILURES
    if passed:
        if known:
            known_failures.passed("conformance", case.id)
        return
    if known:
        known_failures.failed("conformance", case.id)
        pytest.xfail(f"known failure: {detail}")
    pytest.fail(f"{case.id}: {detail}\n(file {case.file})", pytrace=False)
