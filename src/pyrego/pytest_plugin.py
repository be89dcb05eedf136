"""pytest-pyrego: Rego tests as pytest items (``pytest --rego DIR``).

Registered through the ``pytest11`` entry point, and off unless asked:
without ``--rego`` it only adds its options and two fixtures, and does not
import pyrego.

``pytest --rego DIR`` loads DIR as ``pyrego test DIR`` does (every policy
and data file under it, compiled together; several ``--rego`` paths are
loaded together as one program, as ``pyrego test A B`` loads them, so a test
in one may use the data or policies of another), collects its ``*_test.rego``
files and any other ``.rego`` file with ``test_`` rules, and runs each
``test_`` rule as an item (``todo_test_`` rules are skipped). DIR is added to
what pytest collects: ``pytest --rego policies`` runs the project's Python
tests and the policies' tests; ``pytest --rego policies policies`` only the
latter. A failure shows the test, its file and row, the expression it failed
at with its variables' values, failed cases of a parameterized test, and
what it printed.

Options: ``--rego DIR`` (repeatable), ``--rego-v0`` (Rego v0 syntax),
``--rego-timeout SECONDS`` (per test, default 5, as OPA), and
``--rego-coverage-threshold PERCENT`` (needs engine coverage support).

Fixtures: ``rego_engine`` (a fresh :class:`pyrego.Engine`) and
``rego_engine_factory`` (``make(path=None, *, v0=False)``: an engine with a
policy folder loaded, by default the first ``--rego`` folder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyrego.engine import Engine
    from pyrego.testing import TestCase, TestResult, TestSuite

_PLUGIN_NAME = "pyrego-rego-tests"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rego", "Rego policy tests (pyrego)")
    group.addoption(
        "--rego",
        action="append",
        default=[],
        metavar="DIR",
        help="run the test_ rules of the Rego policies in DIR as test items (repeatable)",
    )
    group.addoption("--rego-v0", action="store_true", default=False, help="parse the --rego policies as Rego v0")
    group.addoption(
        "--rego-timeout", type=float, default=5.0, metavar="SECONDS", help="time limit of each Rego test (default 5)"
    )
    group.addoption(
        "--rego-coverage-threshold",
        type=float,
        default=None,
        metavar="PERCENT",
        help="fail the run when the Rego tests cover less of the policies than PERCENT",
    )


def pytest_configure(config: pytest.Config) -> None:
    dirs = [Path(d) for d in config.getoption("rego") or []]
    if not dirs:
        return
    for d in dirs:
        if not d.exists():
            raise pytest.UsageError(f"--rego {d}: no such file or directory")
    threshold = config.getoption("rego_coverage_threshold")
    if threshold is not None:
        from pyrego.testing import features

        if not 0 <= threshold <= 100:
            raise pytest.UsageError("--rego-coverage-threshold must be between 0 and 100")
        if not features.coverage_available():
            raise pytest.UsageError("--rego-coverage-threshold is not available: this pyrego has no coverage support yet")
    # Collect the policy folders too, unless the command line already names them or a folder above.
    given = [Path(a.split("::")[0]).resolve() for a in config.args]
    for d in dirs:
        resolved = d.resolve()
        if not any(resolved == g or g in resolved.parents for g in given):
            config.args.append(str(d))
    config.pluginmanager.register(RegoTests(config, dirs), _PLUGIN_NAME)


class RegoTests:
    """The ``--rego`` paths of one pytest run: loaded together as one program, once, on first use."""

    def __init__(self, config: pytest.Config, dirs: list[Path]) -> None:
        self.config = config
        resolved = list(dict.fromkeys(d.resolve() for d in dirs))
        # A path inside another given path is loaded through that one (its files once).
        self.dirs = [d for d in resolved if not any(o in d.parents for o in resolved)]
        self._suite: TestSuite | Exception | None = None

    def root_of(self, path: Path) -> Path | None:
        resolved = path.resolve()
        for d in self.dirs:
            if resolved == d or d in resolved.parents:
                return d
        return None

    def suite(self) -> TestSuite:
        """Every ``--rego`` path's policies and data, compiled together (as ``pyrego test A B``)."""
        found = self._suite
        if found is None:
            from pyrego.testing import TestSuite

            try:
                found = TestSuite.load(self.dirs, v0_compatible=bool(self.config.getoption("rego_v0")))
                if self.config.getoption("rego_coverage_threshold") is not None:
                    found.engine.set_enable_coverage(True)
            except Exception as exc:  # noqa: BLE001 - reported on the files, below
                found = exc
            self._suite = found
        if isinstance(found, Exception):
            raise found
        return found

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> RegoFile | None:
        if file_path.suffix != ".rego":
            return None
        root = self.root_of(file_path)
        if root is None:
            return None
        if not file_path.name.endswith("_test.rego") and "test_" not in file_path.read_text(encoding="utf-8", errors="replace"):
            return None
        return RegoFile.from_parent(parent, path=file_path, rego=self)  # type: ignore[no-any-return]

    def coverage_shortfalls(self) -> list[str]:
        """A line when the tests covered less of the ``--rego`` policies than the threshold."""
        threshold = self.config.getoption("rego_coverage_threshold")
        suite = self._suite
        if threshold is None or suite is None or isinstance(suite, Exception):
            return []
        coverage = float(suite.engine.get_coverage_report().get("coverage") or 0)
        if coverage >= threshold:
            return []
        where = ", ".join(str(d) for d in self.dirs)
        return [f"Rego code coverage threshold not met for {where}: got {coverage:.2f} instead of {threshold:.2f}"]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._shortfalls = self.coverage_shortfalls()
        if self._shortfalls and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in getattr(self, "_shortfalls", []):
            terminalreporter.write_line(line, red=True)


class RegoFile(pytest.File):
    """A .rego file of a ``--rego`` folder: one item per test rule it defines."""

    def __init__(self, *, rego: RegoTests, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rego = rego

    def collect(self) -> Iterator[RegoItem]:
        from pyrego.testing import LoadFailure

        try:
            suite = self.rego.suite()
        except LoadFailure as exc:
            # Shown on the files the errors are in (or the first file when none names one).
            mine = [e for e in exc.errors if e.location is not None and Path(e.location.file).resolve() == self.path]
            if mine or not any(e.location is not None for e in exc.errors):
                raise self.CollectError("\n".join(str(e) for e in (mine or exc.errors))) from None
            return
        for case in suite.tests:
            if Path(case.module_file).resolve() == self.path:
                yield RegoItem.from_parent(self, name=case.name, case=case)


class RegoTestFailure(Exception):
    """A Rego test that failed or erred (the result says how)."""

    def __init__(self, result: TestResult) -> None:
        super().__init__(result.line())
        self.result = result


class RegoItem(pytest.Item):
    """One ``test_`` rule."""

    def __init__(self, *, case: TestCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from pyrego.testing import RunOptions, TestRunner

        parent = self.parent
        assert isinstance(parent, RegoFile)
        suite = parent.rego.suite()
        options = RunOptions(timeout=self.config.getoption("rego_timeout"), explain_failures=True)
        result = TestRunner(suite, options).run(self.case)
        if result.skip:
            pytest.skip("todo_test_ rule (skipped, as opa test does)")
        if not result.passed:
            raise RegoTestFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, RegoTestFailure):
            return failure_text(excinfo.value.result)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.location.row - 1, self.case.full_name


def failure_text(result: TestResult) -> str:
    """A failed test as the pytest report shows it."""
    from pyrego.testing.results import iter_sub_results

    loc = result.location
    lines = [f"{result.full_name}: {result.outcome} ({loc.file}:{loc.row})"]
    if result.error is not None:
        lines.append(f"  {result.error_text()}")
    if result.failure is not None:
        lines.extend(_failure_lines(result.failure, "  "))
    for full, sub in iter_sub_results(result.sub_results):
        if sub.fail and not sub.sub_results:
            lines.append(f"  case {' / '.join(full)}: FAIL")
            if sub.failure is not None:
                lines.extend(_failure_lines(sub.failure, "    "))
    if result.error is None and result.failure is None and not result.sub_results:
        lines.append("  the test is not true (undefined, or a value other than true)")
    if result.output:
        lines.append("  printed:")
        lines.extend("    " + line for line in result.output.rstrip("\n").split("\n"))
    return "\n".join(lines)


def _failure_lines(failure: Any, indent: str) -> list[str]:
    out = [f"{indent}failed at {failure.file}:{failure.row}:", f"{indent}  {failure.text.strip()}"]
    for v in failure.variables:
        out.append(f"{indent}    {v.name} = {v.value}")
    return out


@pytest.fixture
def rego_engine() -> Engine:
    """A fresh :class:`pyrego.Engine`."""
    from pyrego.engine import Engine

    return Engine()


@pytest.fixture
def rego_engine_factory(request: pytest.FixtureRequest) -> Callable[..., Engine]:
    """``make(path=None, *, v0=False)``: an engine with the policies and data of ``path`` loaded
    (a folder as ``pyrego eval -d`` loads it, or one file); ``path`` defaults to the first ``--rego`` folder."""
    from pyrego.engine import Engine

    def make(path: str | Path | None = None, *, v0: bool = False) -> Engine:
        if path is None:
            dirs = request.config.getoption("rego") or []
            if not dirs:
                raise ValueError("rego_engine_factory() needs a path when pytest runs without --rego")
            path = dirs[0]
        engine = Engine()
        engine.set_rego_v0(v0 or bool(request.config.getoption("rego_v0")))
        target = Path(path)
        if target.is_file() and target.suffix == ".rego":
            engine.add_policy_from_file(str(target))
        else:
            engine.add_policies_from_dir(target)
        return engine

    return make
