"""What the instrumented program calls while it runs: one :class:`Recorder` per evaluation.

Instrumented code (see :mod:`pyrego.instrument.codegen`) reports each
expression it starts (``EV``), each test that fails (``FL``), each further
solution of an iterating expression (``RI``), each rule body entered and
left, each rule head reached (``XT``), and ``trace()`` notes. The recorder is
reached through the evaluation's configuration (``ctx.cfg.recorder``), so
one compiled instrumented program serves every engine and thread: what one
evaluation records is its own, and the engine merges it afterwards.

The recorder always keeps the set of pieces reached (coverage costs a set
insertion per expression); with ``trace`` it also keeps OPA's events
(``Enter``, ``Eval``, ``Fail``, ``Redo``, ``Exit``, ``Index``, ``Note``)
with their query ids, and with ``profile`` the time and counts per piece.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Iterator

from pyrego.compile.opa_form import PieceTable
from pyrego.runtime.context import EvalConfig
from pyrego.runtime.values import UNDEF

#: A recorded event: (op, query id, piece id (-1: the query), message, node text or None, variable values or None).
RawEvent = tuple[str, int, int, str, "str | None", "dict[str, Any] | None"]


class Recorder:
    """The record of one instrumented evaluation."""

    __slots__ = (
        "table", "hits", "events", "parents", "stack", "_next_qid", "allowed", "current",
        "profile", "_last", "_last_at", "_locals", "counters", "_outer",
    )  # fmt: skip

    def __init__(self, table: PieceTable, *, trace: bool = False, profile: bool = False) -> None:
        self.table = table
        self.hits: set[int] = set()
        self.events: list[RawEvent] | None = [] if trace else None
        # Query ids: the root query is 0; each rule body, comprehension and
        # negation evaluated gets the next id, its parent the one it ran in.
        self.parents: dict[int, int] = {0: 0}
        self.stack = [0]
        self._next_qid = 1
        # The branches of each document's definitions that the rule index chose.
        self.allowed: dict[int, list[int]] = {}
        self.current = -1  # the last piece started
        self._outer: list[int] = []  # the current piece of each query below the top one
        # Profile: piece id -> [nanoseconds, evaluations, redos].
        self.profile: dict[int, list[int]] | None = {} if profile else None
        self._last = -1
        self._last_at = 0
        # The variable values each traced expression started with (for its Fail).
        self._locals: dict[int, dict[str, Any]] = {}
        # Instrumentation counters (--instrument): name -> count or nanoseconds.
        self.counters: dict[str, int] = {}

    # -- query frames --------------------------------------------------------------------

    def push(self) -> None:
        qid = self._next_qid
        self._next_qid += 1
        self.parents[qid] = self.stack[-1]
        self.stack.append(qid)
        self._outer.append(self.current)

    def pop(self) -> None:
        if len(self.stack) > 1:
            self.stack.pop()
            # Back in the query that called: its expression is the current one again.
            self.current = self._outer.pop()

    # -- events --------------------------------------------------------------------------

    def _event(self, op: str, pid: int, message: str = "", node: str | None = None, values: dict[str, Any] | None = None) -> None:
        events = self.events
        if events is not None:
            events.append((op, self.stack[-1], pid, message, node, values))

    def eval(self, pid: int) -> None:
        self.hits.add(pid)
        self.current = pid
        if self.profile is not None:
            self._tick(pid, 1)
        if self.events is not None:
            self.events.append(("Eval", self.stack[-1], pid, "", None, None))

    def eval_locals(self, pid: int, names: tuple[str, ...], values: tuple[Any, ...]) -> None:
        """:meth:`eval` with the values of the expression's variables bound so far."""
        self.hits.add(pid)
        self.current = pid
        if self.profile is not None:
            self._tick(pid, 1)
        if self.events is not None:
            bound = dict(zip(names, values))
            self._locals[pid] = bound
            self.events.append(("Eval", self.stack[-1], pid, "", None, bound))

    def _tick(self, pid: int, counter: int) -> None:
        """Charge the time since the last piece started to it; count ``pid``."""
        profile = self.profile
        assert profile is not None
        now = time.perf_counter_ns()
        last = self._last
        if last >= 0:
            profile[last][0] += now - self._last_at
        stats = profile.get(pid)
        if stats is None:
            stats = profile[pid] = [0, 0, 0]
        stats[counter] += 1
        self._last, self._last_at = pid, now

    def finish(self) -> None:
        """Close the profile's last interval (at the end of the evaluation)."""
        if self.profile is not None and self._last >= 0:
            self.profile[self._last][0] += time.perf_counter_ns() - self._last_at
            self._last = -1

    def fail(self, pid: int) -> None:
        if self.events is not None:
            self._event("Fail", pid, values=self._locals.get(pid))

    def redo(self, pid: int) -> None:
        if self.profile is not None:
            self._tick(pid, 2)
        self._event("Redo", pid)

    def enter(self, pid: int) -> None:
        self._event("Enter", pid)

    def exit(self, pid: int, message: str = "") -> None:
        self.hits.add(pid)
        self._event("Exit", pid, message)

    def note(self, pid: int, message: str) -> None:
        self._event("Note", pid, message)

    def query_event(self, op: str) -> None:
        """An event of the root query itself (its Enter, its Exit)."""
        self._event(op, -1)

    def index(self, name: str, matched: int, early_exit: bool) -> None:
        counters = self.counters
        counters["counter_eval_op_rule_index"] = counters.get("counter_eval_op_rule_index", 0) + 1
        if self.events is not None:
            plural = "" if matched == 1 else "s"
            early = ", early exit" if early_exit else ""
            self._event("Index", self.current, f"(matched {matched} rule{plural}{early})", name)

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    def enter_query(self) -> None:
        """The ``Enter`` of a subquery (a comprehension or negation body) at ``current``."""
        self.push()
        self._event("Enter", self.current)

    def exit_query(self) -> None:
        """A solution of the subquery begun by :meth:`enter_query`."""
        if self.events is not None:
            self._event("Exit", self._outer[-1] if self._outer else -1)

    def default_rule(self, rule_pid: int, true_pid: int, head_pid: int) -> None:
        """A default rule taken: entered, its ``true`` body evaluated, its head reached."""
        self.push()
        self.enter(rule_pid)
        self.eval(true_pid)
        self.exit(head_pid)
        self.pop()

    def allow(self, node_id: int, branches: list[int]) -> None:
        self.allowed[node_id] = branches


class RecordingConfig(EvalConfig):
    """An evaluation's settings with its recorder (one per instrumented evaluation)."""

    __slots__ = ("recorder",)

    def __init__(self, base: EvalConfig, recorder: Recorder) -> None:
        super().__init__(base.strict, base.print_hook, base.options)
        self.recorder = recorder


# -- the functions instrumented code calls (names in the program's namespace) ------------------


def _ev(ctx: Any, pid: int) -> None:
    ctx.cfg.recorder.eval(pid)


def _evl(ctx: Any, pid: int, names: tuple[str, ...], values: tuple[Any, ...]) -> None:
    ctx.cfg.recorder.eval_locals(pid, names, values)


def _fl(ctx: Any, pid: int) -> None:
    ctx.cfg.recorder.fail(pid)


def _en(ctx: Any, pid: int) -> None:
    ctx.cfg.recorder.enter(pid)


def _xt(ctx: Any, pid: int) -> None:
    ctx.cfg.recorder.exit(pid)


def _qe(ctx: Any) -> None:
    ctx.cfg.recorder.enter_query()


def _qs(ctx: Any) -> None:
    ctx.cfg.recorder.exit_query()


def _qx(ctx: Any) -> None:
    ctx.cfg.recorder.pop()


def _ixa(ctx: Any, node_id: int, branch: int) -> bool:
    """Whether the rule index chose ``branch`` of the definition being evaluated."""
    allowed = ctx.cfg.recorder.allowed.get(node_id)
    return allowed is None or branch in allowed


def _nt(ctx: Any, pid: int, message: Any) -> Any:
    """``trace(message)``: a note in the trace; true (undefined for a non-string)."""
    if type(message) is not str:
        return UNDEF
    ctx.cfg.recorder.note(pid, message)
    return True


def _ri(ctx: Any, pid: int, items: Iterable[Any]) -> Iterator[Any]:
    """The solutions of an iterating expression: each after the first is a ``Redo``
    (OPA's backtracking into the expression), and none at all a ``Fail``."""
    rec = ctx.cfg.recorder
    first = True
    for item in items:
        if not first:
            rec.redo(pid)
        first = False
        yield item
    if first:
        rec.fail(pid)
    else:
        rec.redo(pid)


NAMESPACE: dict[str, Any] = {
    "EV": _ev, "EVL": _evl, "FL": _fl, "EN": _en, "XT": _xt, "QE": _qe, "QS": _qs, "QX": _qx, "IXA": _ixa, "NT": _nt, "RI": _ri,
}  # fmt: skip


__all__ = ["NAMESPACE", "RawEvent", "Recorder", "RecordingConfig"]
