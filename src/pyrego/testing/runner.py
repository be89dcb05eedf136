"""Running tests: one evaluation per ``test_`` rule, as ``opa test`` runs them.

A test passes when its document is ``true``. Anything else fails: undefined
(no body succeeded), ``false``, or another value. A parameterized test (a
``test_`` rule defining an object, one key per case) passes when every case it
started is ``true`` (see :mod:`pyrego.testing.explain`). An evaluation error
(a conflict, a builtin error under strict mode, a timeout) makes the test an
ERROR; the run goes on. ``todo_test_`` rules are SKIPPED without evaluation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyrego.codegen import disk_cache
from pyrego.errors import RegoError, RegoTypeError
from pyrego.runtime.values import UNDEF
from pyrego.testing.discovery import LoadedSuite, TestCase, load_suite
from pyrego.testing.explain import RuleProbe, case_name
from pyrego.testing.results import BenchmarkResult, SubResult, TestResult

#: OPA's default time limit for one test (30 s when benchmarking).
DEFAULT_TIMEOUT = 5.0


@dataclass
class RunOptions:
    """How to run tests (the ``pyrego test`` flags that change evaluation)."""

    run: str | None = None  # regular expression the test's full name must match
    timeout: float | None = DEFAULT_TIMEOUT  # seconds per test; None: no limit
    explain_failures: bool = False  # find the failed expression and its variables (--var-values, -v)
    strict_builtin_errors: bool = False
    bench: bool = False
    bench_time: float = 1.0  # seconds to spend on each benchmark (Go's -benchtime)
    # A failed test's trace: None (none), "verbose" (-v: notes, failures and what led
    # to them, as OPA's default), or an --explain mode ("notes", "fails", "full", "debug").
    trace: str | None = None


class TestSuite:
    """Policies and data loaded into one engine, and the tests found in them."""

    __test__ = False  # not a pytest class

    def __init__(self, loaded: LoadedSuite, *, v0_compatible: bool = False, strict_builtin_errors: bool = False) -> None:
        from pyrego.builtins.misc import cli_runtime
        from pyrego.engine import Engine

        self.loaded = loaded
        self.tests = loaded.tests
        self.sources = {name: text for name, (text, _) in loaded.modules.items()}
        # The on-disk code cache, where the caller enabled it, reads this policy set's pack.
        disk_cache.use_context(self.sources, "test", "v0" if v0_compatible else "v1")
        engine = Engine()
        engine.set_type_check(True)  # as opa test: an ill-typed policy does not load
        engine.set_rego_v0(v0_compatible)
        engine.set_strict_builtin_errors(strict_builtin_errors)
        engine.set_gather_prints(True)
        engine.set_runtime(cli_runtime())  # opa test reports its environment as opa eval does
        for doc in loaded.data:
            engine.add_data(doc)
        if loaded.modules:
            # The parsed modules themselves (repeated test names renamed), compiled together.
            engine.install_modules(dict(loaded.modules))
        self.engine = engine

    @classmethod
    def load(
        cls,
        paths: Iterable[str | Path],
        *,
        ignore: Sequence[str] = (),
        v0_compatible: bool = False,
        max_errors: int = 10,
        strict_builtin_errors: bool = False,
        bundle_mode: bool = False,
        verification: Any = None,
        skip_verify: bool = False,
    ) -> TestSuite:
        """Load ``paths`` (files or folders; bundles with ``bundle_mode``) and
        compile them; raises LoadFailure, LoadError or BundleError."""
        from pyrego.testing.discovery import LoadFailure

        loaded = load_suite(
            paths,
            ignore=ignore,
            v0_compatible=v0_compatible,
            max_errors=max_errors,
            bundle_mode=bundle_mode,
            verification=verification,
            skip_verify=skip_verify,
        )
        try:
            return cls(loaded, v0_compatible=v0_compatible, strict_builtin_errors=strict_builtin_errors)
        except RegoError as err:
            raise LoadFailure([err]) from None

    def selected(self, run: str | None) -> list[TestCase]:
        """The tests whose full name matches the regular expression ``run`` (all when None)."""
        if not run:
            return list(self.tests)
        pattern = compile_filter(run)
        return [t for t in self.tests if pattern(t.full_name)]

    def run(self, options: RunOptions | None = None) -> Iterator[TestResult]:
        """Run the selected tests in order, yielding each result as it is known."""
        options = options or RunOptions()
        runner = TestRunner(self, options)
        for case in self.selected(options.run):
            yield runner.run(case)


def compile_filter(regex: str) -> Callable[[str], bool]:
    """A test-name filter from an RE2 expression (as Go's regexp); ValueError with Go's
    message (``error parsing regexp: missing closing ): `(` ``) if it does not compile.

    Compiled as the ``regex.*`` builtins compile patterns: with RE2's own error
    logging off, so nothing but the message reaches the user."""
    from pyrego.builtins.regex import compile_regex, regex_match
    from pyrego.builtins.registry import BuiltinError

    try:
        compile_regex(regex)
    except BuiltinError as exc:
        raise ValueError(str(exc)) from None
    return lambda name: regex_match(regex, name)


class TestRunner:
    """Runs single tests of a :class:`TestSuite`."""

    __test__ = False  # not a pytest class

    def __init__(self, suite: TestSuite, options: RunOptions) -> None:
        self.suite = suite
        self.options = options
        timeout = options.timeout
        if timeout is not None and timeout <= 0:
            timeout = None
        suite.engine.set_eval_timeout(timeout)

    def run(self, case: TestCase) -> TestResult:
        result = TestResult(case.package, case.name, case.location)
        if case.skip:
            result.skip = True
            return result
        if case.function:
            # A function is not a document: OPA's query for it does not compile.
            result.error = RegoTypeError(f"function {case.full_name} used as reference, not called")
            return result
        if self.options.bench:
            return self._bench(case, result)
        engine = self.suite.engine
        engine.take_prints()
        start = time.perf_counter_ns()
        try:
            if case.parameterized:
                value = _document(engine, case.path)
            else:
                value = engine.eval_rule(_rule_ref(case.path))
        except RegoError as err:
            result.duration_ns = time.perf_counter_ns() - start
            result.error = err
            result.output = _output(engine.take_prints())
            return result
        result.duration_ns = time.perf_counter_ns() - start
        result.output = _output(engine.take_prints())
        if value is UNDEF:
            result.fail = True
        elif case.parameterized:
            self._cases(case, value, result)
        else:
            result.fail = value is not True
        if result.fail and self.options.explain_failures and not result.sub_results:
            result.failure = self._probe(case).failure_line()
        if result.fail and self.options.trace is not None:
            result.trace = self._trace(case)
        return result

    def _trace(self, case: TestCase) -> list[Any] | None:
        """The failed test evaluated again with OPA's trace, filtered as ``opa test`` filters it."""
        from pyrego.testing import features

        if not features.trace_available():
            return None
        from pyrego.instrument.tracing import explain, lineage

        engine = self.suite.engine
        try:
            events = engine.eval_rule_with_trace(_rule_ref(case.path, dotted=True), explain="full").events
        except RegoError:
            return None
        finally:
            engine.take_prints()
        mode = self.options.trace
        assert mode is not None
        if mode == "verbose":
            return lineage(events, lambda e: e.op in ("Note", "Fail"))
        return explain(events, "full" if mode == "debug" else mode)

    def _probe(self, case: TestCase) -> RuleProbe:
        return RuleProbe(self.suite.engine, case.path, case.location, self.suite.sources)

    def _cases(self, case: TestCase, value: Any, result: TestResult) -> None:
        """Sub-results of a parameterized test: its cases' values, and the cases it started."""
        fail, subs = _sub_results(value)
        probe = self._probe(case)
        started = probe.started_cases()
        for names, _ in started or ():
            if _update(subs, names, 0):
                fail = True
        result.fail = fail
        result.sub_results = subs
        if fail and self.options.explain_failures:
            failed = {names for names, sub in _leaves(subs) if sub.fail}
            for names, line in probe.case_failures(failed).items():
                sub = _lookup(subs, names)
                if sub is not None:
                    sub.failure = line

    def _bench(self, case: TestCase, result: TestResult) -> TestResult:
        """Evaluate the test repeatedly for about ``bench_time`` seconds (Go's benchmark loop)."""
        engine = self.suite.engine
        ref = _rule_ref(case.path)
        target_ns = int(self.options.bench_time * 1e9)
        n, total = 1, 0
        start = time.perf_counter_ns()
        try:
            while True:
                t0 = time.perf_counter_ns()
                for _ in range(n):
                    value = _document(engine, case.path) if case.parameterized else engine.eval_rule(ref)
                    if value is UNDEF or (not case.parameterized and value is not True):
                        result.fail = True
                total = time.perf_counter_ns() - t0
                if result.fail or total >= target_ns or n >= 1_000_000_000:
                    break
                n = _next_n(n, total, target_ns)
        except RegoError as err:
            result.error = err
        engine.take_prints()
        result.duration_ns = time.perf_counter_ns() - start
        if not result.fail and result.error is None:
            if case.parameterized:
                self._cases(case, value, result)
            result.benchmark = BenchmarkResult(n, total)
        return result


def _next_n(n: int, elapsed_ns: int, target_ns: int) -> int:
    """Go's predictNs: aim 20 % past the target, grow at most 100x and at least by one."""
    prev = max(elapsed_ns, 1)
    goal = target_ns * n * 1.2 / prev
    return int(max(min(goal, n * 100), n + 1))


def _rule_ref(path: tuple[str, ...], *, dotted: bool = False) -> str:
    """``data["a"]["test_b"]``, or (``dotted``) ``data.a.test_b`` where the keys allow it (as a trace shows it)."""
    import json

    from pyrego.parse.lexer import KEYWORD_KINDS

    def part(key: str) -> str:
        if dotted and key.isidentifier() and key.isascii() and key not in KEYWORD_KINDS:
            return "." + key
        return f"[{json.dumps(key)}]"

    return "data" + "".join(part(p) for p in path)


def _document(engine: Any, path: tuple[str, ...]) -> Any:
    """The test's document as OPA's runner sees it: JSON (object keys as text)."""
    rows = engine.eval_query(f"{_DOC_VAR} = {_rule_ref(path)}")["result"]
    return rows[0]["bindings"][_DOC_VAR] if rows else UNDEF


_DOC_VAR = "__pyrego_test_doc__"


def _output(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _sub_results(value: Any) -> tuple[bool, dict[str, SubResult]]:
    """OPA's subResults: each key of an object value is a case; ``true`` passes, anything else fails."""
    if type(value) is not dict:
        return value is None, {}
    fail = False
    out: dict[str, SubResult] = {}
    for key, v in value.items():
        name = case_name(key)
        if type(v) is dict:
            sub_fail, nested = _sub_results(v)
            sub = SubResult(name, sub_fail, nested)
        else:
            sub = SubResult(name, v is not True)
        out[name] = sub
        fail = fail or sub.fail
    return fail, out


def _update(subs: dict[str, SubResult], names: tuple[str, ...], i: int) -> bool:
    """Record a started case; a case with no value yet is a failure (OPA's SubResultMap.update)."""
    if i >= len(names):
        return True
    entry = subs.get(names[i])
    if entry is None:
        entry = subs[names[i]] = SubResult(names[i], True)
    if i == len(names) - 1:
        return entry.fail
    fail = _update(entry.sub_results, names, i + 1)
    if fail:
        entry.fail = True
    return fail


def _leaves(subs: dict[str, SubResult], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], SubResult]]:
    for name, sub in subs.items():
        full = prefix + (name,)
        if sub.sub_results:
            yield from _leaves(sub.sub_results, full)
        else:
            yield full, sub


def _lookup(subs: dict[str, SubResult], names: tuple[str, ...]) -> SubResult | None:
    sub = None
    for name in names:
        sub = subs.get(name)
        if sub is None:
            return None
        subs = sub.sub_results
    return sub


def run_tests(
    paths: Iterable[str | Path],
    *,
    run: str | None = None,
    ignore: Sequence[str] = (),
    v0_compatible: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
    explain_failures: bool = False,
    strict_builtin_errors: bool = False,
    max_errors: int = 10,
) -> list[TestResult]:
    """Run the Rego tests under ``paths`` as ``opa test`` does; one :class:`TestResult` per test.

    ``run``: a regular expression (RE2) the tests' full names must match.
    ``ignore``: glob patterns of file and folder names to leave out.
    ``timeout``: seconds each test may take (None: no limit).
    ``explain_failures``: find each failed test's failed expression and its
    variables' values (``TestResult.failure``).

    Raises :class:`pyrego.testing.LoadFailure` when the policies or data do not
    load or compile, :class:`pyrego.loader.LoadError` for a path that is not
    there, and ValueError for a ``run`` expression that does not compile.
    """
    suite = TestSuite.load(
        paths,
        ignore=ignore,
        v0_compatible=v0_compatible,
        max_errors=max_errors,
        strict_builtin_errors=strict_builtin_errors,
    )
    options = RunOptions(run=run, timeout=timeout, explain_failures=explain_failures)
    return list(suite.run(options))
