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

from conftest import KnownFailureTracker
from pyrego.conformance import Case, iter_cases, read_known_failures, run_case
from shared_material import SHARED_DIR

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


@pytest.fixture
def fast_code(monkeypatch: pytest.MonkeyPatch) -> object:
    """Programs built afresh whose code takes its fast form at the first rule computed."""
    import pyrego
    from pyrego.codegen import tiers as codegen_tiers

    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1)
    pyrego.clear_compile_cache()
    yield
    pyrego.clear_compile_cache()


@pytest.mark.parametrize("case", CASES or [None], ids=[c.id for c in CASES] or ["conformance-cases-missing"])
def test_conformance_fast_code(case: Case | None, known_failures: KnownFailureTracker, fast_code: object) -> None:
    """Every case again with the fast form of the generated code (codegen_tiers):
    a one-off evaluation runs the compact form, a hot program the fast one."""
    if case is None:
        pytest.skip(SKIP_REASON)
    passed, detail = run_case(case)
    if passed:
        return
    if case.id in KNOWN_FAILURES:
        pytest.xfail(f"known failure: {detail}")
    pytest.fail(f"{case.id} (fast code): {detail}\n(file {case.file})", pytrace=False)


def _outcome(case: Case) -> tuple[object, ...]:
    """What ``case`` gives: its result bindings in canonical form, or its error."""
    import pyrego
    from pyrego.conformance import DEFAULT_TIMEOUT, CaseTimeout, _evaluate, canonical, run_with_timeout

    try:
        return ("result", repr(canonical(run_with_timeout(lambda: _evaluate(case), DEFAULT_TIMEOUT))))
    except pyrego.RegoError as err:
        return ("error", type(err).__name__, str(err))
    except CaseTimeout:
        return ("timeout",)


@pytest.mark.parametrize("case", CASES or [None], ids=[c.id for c in CASES] or ["conformance-cases-missing"])
def test_conformance_closures_match_generated_code(case: Case | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case, known failures included, gives exactly the same results or
    error text whether rules run as closures (the default) or as generated code."""
    if case is None:
        pytest.skip(SKIP_REASON)
    import pyrego
    from pyrego.codegen import closures

    pyrego.clear_compile_cache()
    with_closures = _outcome(case)
    monkeypatch.setattr(closures, "ENABLED", False)
    pyrego.clear_compile_cache()
    try:
        generated = _outcome(case)
    finally:
        pyrego.clear_compile_cache()
    assert with_closures == generated


# ---------------------------------------------------------------- the harness itself


def test_results_compare_as_sets_with_numbers_by_value() -> None:
    from pyrego.conformance import results_equal

    assert results_equal([{"x": 1}, {"x": 2}], [{"x": 2.0}, {"x": 1}, {"x": 1}])
    assert not results_equal([{"x": 1}], [{"x": True}])
    assert not results_equal([{"x": [1, 2]}], [{"x": [2, 1]}])
    assert results_equal([{"x": [1, 2]}], [{"x": [2, 1]}], sort_bindings=True)
    assert results_equal([{"x": [None, False, 0, "a", [1], {"k": 1}]}], [{"x": [{"k": 1}, [1], "a", 0, False, None]}], True)
    assert not results_equal([], [{}])
    assert results_equal([{}], [{}])


def test_run_with_timeout_interrupts() -> None:
    import time

    from pyrego.conformance import CaseTimeout, run_with_timeout

    start = time.monotonic()
    with pytest.raises(CaseTimeout):
        run_with_timeout(lambda: time.sleep(5), 0.2)
    assert time.monotonic() - start < 2
    assert run_with_timeout(lambda: 42, 1) == 42


def test_case_checks() -> None:
    """Error codes and texts are checked as OPA's harness checks them."""
    from pyrego.conformance import Case, _check
    from pyrego.errors import EvalBuiltinError, Location

    err = EvalBuiltinError("div: divide by zero", Location("test-0.rego", 4, 9))
    want_code = Case(id="t", folder="f", file="", note="", query="", want_error_code="eval_builtin_error")
    assert _check(want_code, None, err)[0]
    assert not _check(want_code, [{"x": 1}], None)[0]
    want_text = Case(id="t", folder="f", file="", note="", query="", want_error="test-0.rego:4: eval_builtin_error: div")
    assert _check(want_text, None, err)[0]
    want_result = Case(id="t", folder="f", file="", note="", query="", want_result=[{"x": 1}])
    assert not _check(want_result, None, err)[0]
    assert not _check(want_result, None, ValueError("boom"))[0]
    assert _check(want_result, [{"x": 1.0}], None)[0]


def test_yaml_loader_keeps_values_exact() -> None:
    from decimal import Decimal

    from pyrego.conformance import load_yaml

    doc = load_yaml("a: 1e3\nb: 2020-01-01\nc: 0.1\nd: 123456789012345678901234567890.5\ne: 12345678901234567890\n")
    assert doc == {"a": 1000.0, "b": "2020-01-01", "c": 0.1, "d": Decimal("123456789012345678901234567890.5"), "e": 12345678901234567890}


def test_language_folders_exist() -> None:
    from pyrego.conformance import LANGUAGE_FOLDERS, list_folders

    if ROOT is None:
        pytest.skip(SKIP_REASON)
    assert LANGUAGE_FOLDERS <= set(list_folders(ROOT))
