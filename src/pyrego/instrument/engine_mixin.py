"""Coverage and traces on :class:`pyrego.Engine` (its ``InstrumentationMixin``).

Coverage costs nothing while it is off. Turning it on puts instrumented
``eval_rule``/``eval_query`` on the engine *instance*, in front of the
class's methods, and turning it off removes them: the normal path runs the
very code it ran before, with no flag tested on it, and the normal program
is never changed (the instrumented one is a separate program; see
:mod:`pyrego.instrument.codegen`). Each covered evaluation records the
ranges it reached in its own recorder, merged into the engine's
:class:`~pyrego.instrument.coverage.CoverageData` under a lock once per evaluation, so
one engine can serve many threads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyrego.engine_support import NO_INPUT, PolicySource
from pyrego.errors import ArgumentError

if TYPE_CHECKING:
    from pyrego.engine_support import CompiledProgram
    from pyrego.instrument.coverage import CoverageData
    from pyrego.instrument.evaluate import InstrumentedRun
    from pyrego.instrument.tracing import Trace, TraceEvent

# The instrumented program, coverage and traces are imported when first used:
# an engine that never asks for them does not load them.


class InstrumentationMixin:
    """Coverage (regorus's method names) and traced evaluation for :class:`pyrego.Engine`.

    Turning coverage on shadows ``eval_rule`` and ``eval_query`` in the
    instance's own ``__dict__`` (the engine's own attributes: this class is
    part of the engine) so that the normal path tests no flag at all."""

    _coverage: CoverageData | None = None
    # The engine's (see pyrego.engine.Engine).
    _policies: Mapping[str, PolicySource]
    _rule_fns: dict[str, Any]

    if TYPE_CHECKING:

        def program(self) -> CompiledProgram: ...

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
            self.__dict__["eval_rule"] = self._covered_eval_rule
            self.__dict__["eval_query"] = self._covered_eval_query
        else:
            self.__dict__.pop("eval_rule", None)
            self.__dict__.pop("eval_query", None)
        # A new table of resolved rules: prepared rules (Engine.prepare_rule)
        # take it as their sign to go through eval_rule again, as it is now.
        self._rule_fns = {}

    def get_coverage_report(self) -> dict[str, Any]:
        """The coverage collected so far, as OPA's JSON report (a dict): per
        file the ``covered`` and ``not_covered`` ranges, line counts and
        ``coverage`` percentage, and the totals."""
        from pyrego.instrument.coverage import report

        covered = self._coverage.snapshot() if self._coverage is not None else set()
        return report(covered, self._policies)

    def get_coverage_report_pretty(self, *, color: bool | None = None) -> str:
        """The policies' source with each line marked covered (``+``), not
        covered (``-``) or both (``~``); coloured with ``rich`` when writing to
        a terminal (``color`` forces it on or off)."""
        from pyrego.instrument.coverage import pretty_report

        texts = {path: text for path, (text, _) in self._policies.items()}
        return pretty_report(self.get_coverage_report(), texts, color=color)

    def clear_coverage_data(self) -> None:
        """Forget the coverage collected so far (coverage stays on or off as it was)."""
        if self._coverage is not None:
            self._coverage.clear()

    def _covered_eval_rule(self, path: str, *, input: Any = NO_INPUT) -> Any:
        from pyrego.instrument.evaluate import eval_rule_instrumented

        run = eval_rule_instrumented(self, path, input)
        self.record_run(run)
        return run.result

    def _covered_eval_query(
        self, query: str, *, input: Any = NO_INPUT, package: str | None = None, imports: Sequence[str] = ()
    ) -> dict[str, Any]:
        from pyrego.instrument.evaluate import eval_query_instrumented

        run = eval_query_instrumented(self, query, input, package=package, imports=imports)
        self.record_run(run)
        return run.result  # type: ignore[no-any-return]

    def record_run(self, run: InstrumentedRun) -> None:
        """Add what an instrumented evaluation covered to this engine's coverage (when it is on)."""
        if self._coverage is not None and "eval_rule" in self.__dict__:
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
        """A clone collects its own coverage (on when this engine's is on)."""
        on = "eval_rule" in self.__dict__
        new.__dict__.pop("eval_rule", None)
        new.__dict__.pop("eval_query", None)
        new._coverage = None
        if on:
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
