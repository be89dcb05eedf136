"""pytest-pyrego (:mod:`pyrego.pytest_plugin`): Rego test rules as pytest items.

Each test runs pytest inside pytest (``pytester``). The counts of passed,
failed and skipped items must be those of ``pyrego test`` (and so of OPA,
tests/test_test_cmd.py) on the same folders.
"""

from __future__ import annotations

import importlib
import pkgutil
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from pyrego.builtins.registry import all_builtins
from pyrego.testing import run_tests
from test_repos import is_v0, rego_tests, repositories

pytest_plugins = ["pytester"]

# pytester runs pytest in this process and afterwards drops the modules the run
# imported; pyrego's builtin modules register themselves once per process, so
# they are all imported here, before any run (they load per category otherwise).
all_builtins()
import pyrego.testing.reporters  # noqa: E402, F401

# The package's names (pyrego.Engine, ...) are imported on first use and then
# kept: they are bound here, before any run, to modules that stay.
for _name in pyrego.__all__:
    getattr(pyrego, _name)

# So is the type checker, which the first run would otherwise import: a later
# run's fresh copy of its modules would not know the types an earlier one left
# in the modules that stay.
import pyrego.typecheck  # noqa: E402

for _module in pkgutil.iter_modules(pyrego.typecheck.__path__):
    importlib.import_module(f"pyrego.typecheck.{_module.name}")

# And the instrumented program's (coverage): the process-wide program cache
# keeps the programs a run builds, made of its classes.
import pyrego.instrument.coverage  # noqa: E402, F401
import pyrego.instrument.evaluate  # noqa: E402, F401

CASES = Path(__file__).resolve().parent / "test_cmd_cases"


def test_registered_as_pytest11_entry_point() -> None:
    found = [e for e in entry_points(group="pytest11") if e.name == "pyrego"]
    assert [e.value for e in found] == ["pyrego.pytest_plugin"]


@pytest.mark.parametrize("repo", repositories(), ids=[r.name for r in repositories()])
def test_repository_tests_run_as_items(repo: Path, pytester: pytest.Pytester) -> None:
    args = ["--rego", str(repo), "-p", "no:cacheprovider"]
    if is_v0(repo):
        args.append("--rego-v0")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=len(rego_tests(repo)))


def test_outcomes_match_pyrego_test(pytester: pytest.Pytester) -> None:
    root = CASES / "outcomes"
    expected = run_tests([root])
    result = pytester.runpytest("--rego", str(root), "-p", "no:cacheprovider")
    result.assert_outcomes(
        passed=sum(r.passed for r in expected),
        failed=sum(r.fail or r.error is not None for r in expected),
        skipped=sum(r.skip for r in expected),
    )
    # Items are named by the rule and located at it.
    result.stdout.fnmatch_lines(["*FAILED*outcomes_test.rego::test_bob_quota*"])


def test_failure_report_is_readable(pytester: pytest.Pytester) -> None:
    root = CASES / "outcomes"
    result = pytester.runpytest("--rego", str(root), "-p", "no:cacheprovider", "-k", "test_bob_quota or test_prints_then_fails or test_conflict")
    result.assert_outcomes(failed=3)
    f = root / "outcomes_test.rego"
    result.stdout.fnmatch_lines(
        [
            f"data.outcomes_test.test_bob_quota: FAIL ({f}:21)",
            f"  failed at {f}:23:",
            "    q == 10",
            "      q = 5",
        ]
    )
    result.stdout.fnmatch_lines(["  printed:", "    quota of bob: 5"])
    result.stdout.fnmatch_lines([f"  {f}:44: eval_conflict_error: complete rules must not produce multiple outputs*"])


def test_parameterized_failure_names_its_cases(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--rego", str(CASES / "params"), "-p", "no:cacheprovider", "-k", "test_double and not marked")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  case three: FAIL", f"    failed at {CASES / 'params' / 'params_test.rego'}:15:"])


def test_repeated_names_and_todo(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--rego", str(CASES / "dups"), "-p", "no:cacheprovider", "-o", "addopts=", "-v")
    result.assert_outcomes(passed=2, failed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*a_test.rego::test_same FAILED*",
            "*a_test.rego::test_same#01 PASSED*",
            "*a_test.rego::todo_test_twice SKIPPED*",
            "*b_test.rego::test_same#02 PASSED*",
        ]
    )


def test_only_test_files_and_files_with_tests_are_collected(pytester: pytest.Pytester) -> None:
    pol = pytester.mkdir("pol")
    (pol / "lib.rego").write_text("package lib\n\nf(x) := x + 1\n")
    (pol / "helpers.rego").write_text("package lib\n\ntest_in_a_plain_file if f(1) == 2\n")
    (pol / "lib_test.rego").write_text("package lib_test\n\nimport data.lib\n\ntest_f if lib.f(1) == 2\n")
    result = pytester.runpytest("--rego", "pol", "-p", "no:cacheprovider", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["pol/helpers.rego::test_in_a_plain_file", "pol/lib_test.rego::test_f"])
    assert "lib.rego::" not in result.stdout.str()


def test_load_error_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pol = pytester.mkdir("pol")
    (pol / "ok_test.rego").write_text("package ok\n\ntest_a if true\n")
    (pol / "bad_test.rego").write_text("package bad\n\ntest_b if {\n")
    result = pytester.runpytest("--rego", "pol", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting pol/bad_test.rego*", "*rego_parse_error*"])


def test_timeout_option(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--rego", str(CASES / "timeout"), "--rego-timeout", "0.3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*eval_cancel_error*"])


def test_missing_folder_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--rego", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rego nowhere: no such file or directory*"])


def test_without_rego_nothing_changes(pytester: pytest.Pytester) -> None:
    # .rego files are not collected, a Python test runs as usual, no collector is registered.
    (pytester.path / "x_test.rego").write_text("package x\n\ntest_a if false\n")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert pytester.parseconfig().pluginmanager.get_plugin("pyrego-rego-tests") is None


def test_fixtures(pytester: pytest.Pytester) -> None:
    pol = pytester.mkdir("pol")
    (pol / "authz.rego").write_text('package authz\n\nallow if input.user == "admin"\n')
    pytester.makepyfile(
        test_engines="""
        import pyrego

        def test_fresh(rego_engine):
            assert isinstance(rego_engine, pyrego.Engine)
            assert rego_engine.get_packages() == []

        def test_factory_defaults_to_the_rego_folder(rego_engine_factory):
            engine = rego_engine_factory()
            assert engine.eval_rule("data.authz.allow", input={"user": "admin"}) is True

        def test_factory_with_a_path(rego_engine_factory):
            engine = rego_engine_factory("pol/authz.rego")
            assert engine.eval_rule("data.authz.allow", input={"user": "bob"}) is pyrego.UNDEFINED
        """
    )
    result = pytester.runpytest("--rego", "pol", "test_engines.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_rego_folder_named_on_the_command_line_is_collected_once(pytester: pytest.Pytester) -> None:
    pol = pytester.mkdir("pol")
    shutil.copy(CASES / "v0" / "policy.rego", pol / "policy.rego")
    shutil.copy(CASES / "v0" / "policy_test.rego", pol / "policy_test.rego")
    result = pytester.runpytest("--rego", "pol", "--rego-v0", "pol", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_several_rego_paths_are_one_program(pytester: pytest.Pytester) -> None:
    """``--rego policy --rego data`` loads both together, as ``pyrego test policy data`` does:
    a test in one folder sees the data and the policies of the other."""
    pol, data = pytester.mkdir("policy"), pytester.mkdir("data")
    (pol / "authz.rego").write_text("package authz\n\nallow if input.user in data.users\n")
    (pol / "authz_test.rego").write_text(
        "package authz_test\n\nimport data.authz\n\n"
        'test_alice if authz.allow with input as {"user": "alice"}\n\n'
        'test_mallory if not authz.allow with input as {"user": "mallory"}\n\n'
        "test_lib if data.lib.double(2) == 4\n"
    )
    (data / "data.json").write_text('{"users": ["alice"]}')
    (data / "lib.rego").write_text("package lib\n\ndouble(x) := 2 * x\n")
    expected = run_tests([pol, data])
    assert [r.passed for r in expected] == [True, True, True]
    result = pytester.runpytest("--rego", "policy", "--rego", "data", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    # The policy folder alone is another program, one that does not compile.
    result = pytester.runpytest("--rego", "policy", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*rego_type_error: undefined function data.lib.double*"])


def test_coverage_threshold_option(pytester: pytest.Pytester) -> None:
    from pyrego.testing import features

    root = CASES / "coverage"
    if not features.coverage_available():
        result = pytester.runpytest("--rego", str(root), "--rego-coverage-threshold", "50")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*not available*"])
        return
    # The fixture's one test covers 40 % of its lines (tests/test_test_cmd.py checks that against OPA).
    result = pytester.runpytest("--rego", str(root), "--rego-coverage-threshold", "50", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"Rego code coverage threshold not met for {root}: got 40.00 instead of 50.00"])
    result = pytester.runpytest("--rego", str(root), "--rego-coverage-threshold", "40", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
