"""``pyrego test PATH...``: run the policies' ``test_`` rules, as ``opa test`` does.

Paths (files or folders) are loaded as ``pyrego eval -d`` loads them; with
``-b/--bundle`` each is a bundle folder or archive (a ``.tar.gz`` always is),
signatures checked with the flags of ``pyrego eval`` (``--verification-key``...). Flags
as ``opa test``'s: ``-v`` (every test, grouped by file, and a FAILURES
section), ``-r/--run REGEX``, ``-f/--format pretty|json|gobench``,
``--timeout`` (per test, a Go duration: ``5s``, ``250ms``), ``--var-values``
(the failed expression and its variables), ``--explain notes|fails|full|debug``
(a failed test's trace), ``--coverage`` and ``--threshold``, ``--bench`` (``--benchmem`` is
accepted; pyrego does not count allocations), ``--fail-on-empty``,
``-z/--exit-zero-on-skipped``, ``--ignore GLOB``, ``--v0-compatible``,
``-m/--max-errors``, ``--count``; ``-p/--parallel`` is accepted, tests run one
after another. ``--no-cache`` skips the on-disk cache of parsed policies.

Exit status as OPA's: 0 when every test passed, 2 when one failed, erred or
was skipped (skips allowed with ``-z``), 1 when the policies do not load or
compile or (``--fail-on-empty``) no test ran; 2 for usage errors.

With ``--coverage``, as ``opa test --coverage``: the coverage report is printed
only when no test failed or erred; otherwise the failed tests are listed (the
summary counts only them), the first one is the error on stderr, and the exit
status is 1 (:mod:`pyrego.testing.coverage_report`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from pyrego.cli.output import UsageError, format_errors

if TYPE_CHECKING:
    from pyrego.testing import TestResult


def cmd_test(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``pyrego test``: run the tests and report them; returns OPA's exit status."""
    from pyrego.codegen import disk_cache
    from pyrego.testing import LoadFailure, RunOptions, TestSuite, features
    from pyrego.testing.reporters import JSONReporter, PrettyReporter
    from pyrego.testing.runner import compile_filter

    fmt: str = ns.format
    if ns.explain is not None:
        ns.verbose = True  # as opa test: an explanation is shown in the verbose report
    if fmt == "gobench" and not ns.bench:
        print("cannot use output format gobench without running benchmarks (--bench)", file=err)
        return 0
    if not 0 <= ns.threshold <= 100:
        print("Code coverage threshold must be between 0 and 100", file=err)
        return 1
    coverage = bool(ns.coverage or ns.threshold > 0)
    if coverage and ns.bench:
        print("coverage reporting is not supported when benchmarking tests", file=err)
        return 1
    if coverage and not features.coverage_available():
        raise UsageError("--coverage and --threshold are not available: this pyrego has no coverage support yet")
    if ns.explain is not None and not features.trace_available():
        raise UsageError("--explain is not available: this pyrego has no evaluation trace yet")
    timeout = 0.0
    if ns.timeout is not None:
        from pyrego.builtins.time_parse import TimeError, parse_duration  # Go's time.ParseDuration

        try:
            timeout = parse_duration(ns.timeout) / 1e9
        except TimeError as exc:
            raise UsageError(f'invalid argument "{ns.timeout}" for "--timeout" flag: {exc}') from None
    if timeout == 0:
        timeout = 30.0 if ns.bench else 5.0  # OPA's defaults

    if ns.no_cache:
        disk_cache.disable()
    else:
        disk_cache.enable_default()
    ignore = [p for arg in ns.ignore or [] for p in arg.split(",") if p]
    from pyrego.bundle.model import BundleError
    from pyrego.cli.bundle_args import verification_config

    try:
        suite = TestSuite.load(
            ns.paths,
            ignore=ignore,
            v0_compatible=bool(ns.v0_compatible),
            max_errors=ns.max_errors,
            bundle_mode=bool(ns.bundle),
            verification=verification_config(ns),
            skip_verify=bool(ns.skip_verify),
        )
    except LoadFailure as exc:
        print(format_errors(exc.errors, "pretty"), file=err)
        return 1
    except BundleError as exc:
        print(f"error: {exc}", file=err)
        return 1
    options = RunOptions(
        run=ns.run,
        timeout=timeout if timeout > 0 else None,
        explain_failures=bool(ns.var_values or ns.verbose),
        trace=ns.explain or ("verbose" if ns.verbose else None),
        bench=bool(ns.bench),
    )
    if ns.run:
        try:
            compile_filter(ns.run)
        except ValueError as exc:
            print(str(exc), file=err)
            return 1

    if coverage:
        from pyrego.testing.coverage_report import CoverageReporter

        suite.engine.set_enable_coverage(True)

    status = 0
    for _ in range(max(ns.count, 1)):
        ran = False

        def stream() -> Iterator[TestResult]:
            nonlocal ran, status
            for result in suite.run(options):
                ran = True
                if not result.passed and not (result.skip and ns.exit_zero_on_skipped):
                    status = 2
                yield result

        if coverage:
            failed = CoverageReporter(out, err, suite.engine, threshold=ns.threshold, verbose=ns.verbose).report(stream())
            if failed:
                return failed
        elif fmt == "json":
            JSONReporter(out).report(stream())
        else:
            reporter = PrettyReporter(
                out, verbose=ns.verbose, var_values=ns.var_values, benchmark=ns.bench, gobench=fmt == "gobench"
            )
            reporter.report(stream())
        if not ran and ns.fail_on_empty:
            print("no tests were run", file=err)
            return 1
        if status:
            return status
    return status


def register(sub: Any) -> None:
    """Add ``test`` to the subcommand parsers ``sub``."""
    t = sub.add_parser("test", help="run Rego tests", description="Execute Rego test cases (like opa test).")
    t.add_argument("paths", nargs="+", metavar="PATH", help="policy or data file, or folder")
    t.add_argument("-v", "--verbose", action="store_true", help="set verbose reporting mode")
    t.add_argument("-b", "--bundle", action="store_true", help="load paths as bundle files or root directories")
    t.add_argument("-r", "--run", metavar="REGEX", help="run only test cases matching the regular expression")
    t.add_argument(
        "-f", "--format", choices=("pretty", "json", "gobench"), default="pretty", help="output format (default pretty)"
    )
    t.add_argument("--timeout", metavar="DURATION", help="set test timeout (default 5s, 30s when benchmarking)")
    t.add_argument("--var-values", action="store_true", help="show local variable values in test output")
    t.add_argument("--fail-on-empty", action="store_true", help="fail when no test was run")
    t.add_argument("-z", "--exit-zero-on-skipped", action="store_true", help="skipped tests return status 0")
    t.add_argument("--bench", action="store_true", help="benchmark the unit tests")
    t.add_argument("--benchmem", action="store_true", help="accepted for compatibility (no allocation figures)")
    t.add_argument("--count", type=int, default=1, help="number of times to repeat each test (default 1)")
    t.add_argument(
        "--explain", choices=("fails", "full", "notes", "debug"), help="enable query explanations (needs the trace)"
    )
    t.add_argument(
        "-c",
        "--coverage",
        action="store_true",
        help="report coverage as JSON; as in opa test, the report needs every test to pass or be skipped "
        "(failed tests are listed instead, exit 1)",
    )
    t.add_argument("--threshold", type=float, default=0.0, help="coverage threshold: exit 2 below this percentage")
    t.add_argument("--ignore", action="append", metavar="GLOB", help="file and folder names to ignore (repeatable)")
    t.add_argument("-m", "--max-errors", type=int, default=10, help="parse errors to report before stopping (default 10)")
    t.add_argument("-p", "--parallel", type=int, default=0, help="accepted for compatibility: tests run one at a time")
    t.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    t.add_argument("--v1-compatible", action="store_true", help="parse policies with Rego v1 syntax (the default)")
    t.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache of parsed policies")
    from pyrego.cli.bundle_args import add_verification_arguments

    add_verification_arguments(t)
    t.set_defaults(func=cmd_test)
