"""Running Rego tests (``test_`` rules), as ``opa test`` does.

>>> from pyrego.testing import run_tests
>>> results = run_tests(["policies/"])            # doctest: +SKIP
>>> [r.full_name for r in results if not r.passed]  # doctest: +SKIP

:func:`run_tests` loads files and folders as ``pyrego eval -d`` does, finds
every ``test_`` rule (``todo_test_`` ones are skipped) and evaluates each on
its own; the ``pyrego test`` command and the pytest plugin
(:mod:`pyrego.pytest_plugin`) are built on :class:`TestSuite`.
"""

from pyrego.testing.discovery import LoadFailure, TestCase, find_tests, load_suite
from pyrego.testing.results import BenchmarkResult, FailureLine, SubResult, TestResult, VarValue, go_duration
from pyrego.testing.runner import RunOptions, TestRunner, TestSuite, run_tests

__all__ = [
    "BenchmarkResult",
    "FailureLine",
    "LoadFailure",
    "RunOptions",
    "SubResult",
    "TestCase",
    "TestResult",
    "TestRunner",
    "TestSuite",
    "VarValue",
    "find_tests",
    "go_duration",
    "load_suite",
    "run_tests",
]
