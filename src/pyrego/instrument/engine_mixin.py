"""Coverage and traces on :class:`pyrego.Engine` (its ``InstrumentationMixin``).

Coverage costs nothing while it is off. ``eval_rule`` and ``eval_query``
run what the engine's tables of resolved rules and compiled queries hold;
turning coverage on or off replaces both tables, and while it is on their
entries are made here: functions that run the evaluation through the
instrumented program (a separate program; see
:mod:`pyrego.instrument.codegen`) and record what it covered. The
evaluation path itself is the same either way, with no flag tested on it;
prepared rules, which take their functions from the same table, are
counted too. Each covered evaluation records the ranges it reached in its
own recorder, merged into the engine's
:class:`~pyrego.instrument.coverage.CoverageData` under a lock once per
evaluation, so one engine can serve many threads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable

from pyrego.engine_support import NO_INPUT, PolicySource
from pyrego.errors import ArgumentError
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.codegen.bounded import BoundedDict
    from pyrego.engine_support import CompiledProgram
    from pyrego.instrument.coverage import CoverageData
    from pyrego.instrument.evaluate import InstrumentedRun
    from pyrego.instrument.tracing import Trace, TraceEvent
    from pyrego.queries import CompiledQuery
    from pyrego.runtime.context import EvalContext

# The instrumented program, coverage and traces are imported when first used:
# an engine that never asks for them does not load them.


class InstrumentationMixin:
    """Coverage (regorus's method names) and traced evaluation for :class:`pyrego.Engine`.

    While coverage is on, the engine's tables of resolved rules and compiled
    queries hold the entries :meth:`_covered_rule_entry` and
    :meth:`_covered_query` make (the engine asks for them when it fills a
    table), so that the evaluation path tests no flag at all."""

    _coverage: CoverageData | None = None
    #: Whether coverage is on (read when a table entry is made, never per evaluation).
    _covering = False
    # The engine's (see pyrego.engine.Engine).
    _policies: Mapping[str, PolicySource]
    _rule_fns: dict[str, Any]
    _prepared_rules: dict[str, Any]
    _queries: BoundedDict[Any, CompiledQuery] | None

    if TYPE_CHECKING:

        def program(self) -> CompiledProgram: ...

        def _policy_table(self) -> Mapping[str, PolicySource]: ...

    # -- coverage ----------------------------------------------------------------------

    def set_enable_coverage(self, enable: bool) -> None:
        """Collect coverage from every evaluation from now on (``True``), or stop (``False``).

        Coverage accumulates across evaluations (and threads) until
        :meth:`clear_coverage_data`. With coverage off the engine runs its
        normal code and pays nothing for this feature."""
        if enable:
            if self._coverage is None:
                from pyrego.instrument.coverage import CoverageData

                self._coverage = CoverageData()
        self._covering = bool(enable)
        # New tables, filled as coverage now asks; prepared rules
        # (Engine.prepare_rule) take the new rule table as their sign to go
        # through eval_rule again.
        self._rule_fns = {}
        self._prepared_rules = {}
        self._queries = None

    def get_coverage_report(self) -> dict[str, Any]:
        """The coverage collected so far, as OPA's JSON report (a dict): per
        file the ``covered`` and ``not_covered`` ranges, line counts and
        ``coverage`` percentage, and the totals."""
        from pyrego.instrument.coverage import report

        covered = self._coverage.snapshot() if self._coverage is not None else set()
        return report(covered, self._policy_table())

    def get_coverage_report_pretty(self, *, color: bool | None = None) -> str:
        """The policies' source with each line marked covered (``+``), not
        covered (``-``) or both (``~``); coloured with ``rich`` when writing to
        a terminal (``color`` forces it on or off)."""
        from pyrego.instrument.coverage import pretty_report

        texts = {path: text for path, (text, _) in self._policy_table().items()}
        return pretty_report(self.get_coverage_report(), texts, color=color)

    def clear_coverage_data(self) -> None:
        """Forget the coverage collected so far (coverage stays on or off as it was)."""
        if self._coverage is not None:
            self._coverage.clear()

    def _covered_rule_entry(self, path: str) -> tuple[Callable[[EvalContext], Any], tuple[()], Any, None]:
        """With coverage on, the entry of ``path`` in the engine's table of
        resolved rules (see ``Engine._resolve_rule``): its function evaluates
        the rule through the instrumented program, for the context's input,
        and records what it covered; its value is converted by the caller,
        as a rule function's is."""

        def covered(ctx: EvalContext) -> Any:
            from pyrego.instrument.evaluate import eval_rule_instrumented

            run = eval_rule_instrumented(self, path, ctx.input, convert=False)
            self.record_run(run)
            return run.result

        return covered, (), UNDEF, None

    def _covered_query(self, compiled: CompiledQuery, query: str, package: str | None, imports: tuple[str, ...]) -> CompiledQuery:
        """With coverage on, the entry of ``query`` (``compiled``, as checked
        and compiled for the normal program) in the engine's table of
        compiled queries: its function yields the solutions of the
        instrumented program, for the context's input, and records what they
        covered."""

        def covered(ctx: EvalContext) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
            from pyrego.instrument.evaluate import query_solutions_instrumented

            run = query_solutions_instrumented(self, query, ctx.input, package=package, imports=imports)[0]
            self.record_run(run)
            return run.result  # type: ignore[no-any-return]

        return compiled.run_by(covered)

    def record_run(self, run: InstrumentedRun) -> None:
        """Add what an instrumented evaluation covered to this engine's coverage (when it is on)."""
        if self._coverage is not None and self._covering:
            self._coverage.add(run.covered())

    # -- traces --------------------------------------------------------------------------

    def eval_query_with_trace(
        self,
        query: str,
        *,
        input: Any = NO_INPUT,
        explain: str = "full",
        package: str | None = None,
        imports: Sequence[str] = (),
    ) -> Trace:
        """Evaluate ``query`` as :meth:`eval_query` does and return its result
        with OPA's trace (``opa eval --explain``): ``explain`` is ``"full"``
        (every event), ``"notes"`` (``trace()`` notes and the rules that led
        to them), ``"fails"`` (failures and their context) or ``"off"``;
        ``package`` and ``imports`` as for :meth:`eval_query`.
        ``Trace.pretty()`` renders it as OPA prints it (``var_values=True``:
        with each expression's variable values, as ``opa test --var-values``);
        see :mod:`pyrego.instrument.tracing` for the events and how they differ from OPA's.
        With coverage on, the evaluation is counted in it too."""
        from pyrego.instrument.evaluate import eval_query_instrumented
        from pyrego.instrument.tracing import Trace
        from pyrego.instrument.tracing import explain as explain_events

        _check_mode(explain)
        run = eval_query_instrumented(self, query, input, package=package, imports=imports, trace=True)
        self.record_run(run)
        return Trace(run.result, explain_events(trace_events(run, query), explain))

    def eval_rule_with_trace(self, path: str, *, input: Any = NO_INPUT, explain: str = "full") -> Trace:
        """:meth:`eval_rule` with OPA's trace (see :meth:`eval_query_with_trace`); the result is the value."""
        from pyrego.instrument.evaluate import eval_rule_instrumented
        from pyrego.instrument.tracing import Trace
        from pyrego.instrument.tracing import explain as explain_events

        _check_mode(explain)
        run = eval_rule_instrumented(self, path, input, trace=True)
        self.record_run(run)
        return Trace(run.result, explain_events(trace_events(run, path), explain))

    def _instrumentation_after_clone(self, new: Any) -> None:
        """A clone collects its own coverage (on when this engine's is on: its
        tables, copied from this engine, are replaced by its own then)."""
        new._coverage = None
        new._covering = False
        if self._covering:
            new.set_enable_coverage(True)


def _check_mode(explain: str) -> None:
    from pyrego.instrument.tracing import EXPLAIN_MODES

    if explain not in EXPLAIN_MODES:
        raise ArgumentError(f"explain must be one of {', '.join(EXPLAIN_MODES)}, not {explain!r}")


def trace_events(run: InstrumentedRun, query: str) -> list[TraceEvent]:
    """The events a traced evaluation recorded (``query``: its text, for its own events)."""
    from pyrego.instrument.codegen import piece_table
    from pyrego.instrument.evaluate import QUERY_LOCATION
    from pyrego.instrument.tracing import events_from

    return events_from(run.recorder, piece_table(run.program), query, QUERY_LOCATION)


__all__ = ["InstrumentationMixin", "trace_events"]
