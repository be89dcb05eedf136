"""The state of one evaluation, shared by generated code and builtins."""

from __future__ import annotations

import time
from typing import Any, Callable

from pyrego.runtime.budget import HasDeadline
from pyrego.runtime.values import UNDEF

_NO_OPTIONS: dict[str, Any] = {}

#: Takes a printed line, held in a list of its own: the line is withdrawn
#: (set to None) when the evaluation that printed it runs again.
PrintHook = Callable[[list[str | None]], None]


class EvalConfig:
    """Engine settings an evaluation reads; shared by every evaluation of an engine."""

    __slots__ = ("strict", "print_hook", "options", "timeout")

    def __init__(
        self,
        strict: bool = False,
        print_hook: PrintHook | None = None,
        options: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.strict = strict
        self.print_hook = print_hook
        self.options = options if options else _NO_OPTIONS
        # Seconds an evaluation may take (None: no limit); a context's
        # deadline is set from it, per evaluation.
        self.timeout = timeout


#: The default settings, no print hook: shared by every evaluation that has
#: them (an engine's, when nothing it evaluates can print).
DEFAULT_CONFIG = EvalConfig()


class QueryState:
    """Per-query state shared by a context and the contexts ``with`` derives from it."""

    __slots__ = ("now_ns", "builtin_cache", "builtin_errors", "printed")

    def __init__(self) -> None:
        # (The caches and errors are made on first use: most queries that
        # read the clock, which makes this state, have neither.)
        self.now_ns: int | None = None
        self.builtin_cache: dict[str, dict[Any, Any]] | None = None
        self.builtin_errors: list[Exception] | None = None
        # The lines given to the print hook, each in a list of its own so that
        # a failed evaluation run again can withdraw exactly its own lines
        # (by blanking them), whatever other threads printed meanwhile.
        self.printed: list[list[str | None]] | None = None


class EvalContext(HasDeadline):
    """One query's evaluation state.

    ``input`` and ``data`` are the caller's objects, read in place. ``cache``
    memoises rule values for this evaluation. ``now_ns`` is taken once, on
    first use, so every ``time.now_ns()`` in one query agrees, as in OPA.

    A context is made for every evaluation, so it holds few slots: settings
    live in a shared :class:`EvalConfig`, and the query's clock and builtin
    caches in a :class:`QueryState` made on first use.
    """

    __slots__ = ("input", "data", "cache", "deadline", "cfg", "functions", "q")

    def __init__(
        self,
        input: Any = UNDEF,
        data: Any = None,
        *,
        strict: bool = False,
        print_hook: PrintHook | None = None,
        deadline: float | None = None,
        options: dict[str, Any] | None = None,
        config: EvalConfig | None = None,
    ) -> None:
        self.input = input
        self.data = {} if data is None else data
        self.cache: dict[Any, Any] = {}
        self.deadline = deadline
        if config is None:
            config = EvalConfig(strict, print_hook, options) if (strict or print_hook or options) else DEFAULT_CONFIG
        self.cfg = config
        # `with` replacements of functions (name -> callable).
        self.functions: dict[str, Any] | None = None
        self.q: QueryState | None = None

    @classmethod
    def fast(cls, input: Any, data: Any, config: EvalConfig, deadline: float | None) -> EvalContext:
        """The engine's per-evaluation constructor (no argument processing)."""
        ctx = _new(cls)
        ctx.input = input
        ctx.data = data
        ctx.cache = {}
        ctx.deadline = deadline
        ctx.cfg = config
        ctx.functions = None
        ctx.q = None
        return ctx

    def derive(self) -> EvalContext:
        """A context for a ``with`` expression: same query, fresh rule cache."""
        new = _new(EvalContext)
        new.input = self.input
        new.data = self.data
        new.cache = {}
        new.deadline = self.deadline
        new.cfg = self.cfg
        new.functions = self.functions
        new.q = self.state
        return new

    def replay(self) -> EvalContext:
        """A context to run this evaluation again from the start (after it
        failed, in OPA's iteration order): :meth:`derive`'s, with a query state
        of its own that keeps the clock and builtin caches, so ``time.now_ns``,
        ``rand.intn`` and ``http.send`` answer as in the first run and nothing
        is sent twice (and the lines it prints are counted apart)."""
        new = self.derive()
        first, new.q = new.q, None
        assert first is not None
        state = new.state
        state.now_ns = first.now_ns
        state.builtin_cache = first.builtin_cache
        return new

    @property
    def state(self) -> QueryState:
        q = self.q
        if q is None:
            q = self.q = QueryState()
        return q

    @property
    def strict(self) -> bool:
        return self.cfg.strict

    @property
    def options(self) -> dict[str, Any]:
        """Engine options builtins may read (e.g. ``{"allow_net": False}``)."""
        return self.cfg.options

    @property
    def print_hook(self) -> PrintHook | None:
        return self.cfg.print_hook

    @property
    def now_ns(self) -> int:
        """Nanoseconds since the epoch, fixed for the whole query."""
        q = self.q
        if q is None:
            q = self.q = QueryState()
        now = q.now_ns
        if now is None:
            now = q.now_ns = time.time_ns()
        return now

    @property
    def builtin_cache(self) -> dict[str, dict[Any, Any]]:
        """Per-query caches of builtins (rand.intn, http.send, ...), by builtin name."""
        q = self.state
        caches = q.builtin_cache
        if caches is None:
            caches = q.builtin_cache = {}
        return caches

    @property
    def builtin_errors(self) -> list[Exception]:
        """Builtin errors that made expressions undefined (non-strict mode)."""
        q = self.state
        errors = q.builtin_errors
        if errors is None:
            errors = q.builtin_errors = []
        return errors

    def cache_for(self, name: str) -> dict[Any, Any]:
        """A per-query cache dict for the builtin ``name``."""
        caches = self.builtin_cache
        cache = caches.get(name)
        if cache is None:
            cache = caches[name] = {}
        return cache

    def emit_print(self, text: str) -> None:
        hook = self.cfg.print_hook
        if hook is not None:
            line: list[str | None] = [text]
            hook(line)
            state = self.state
            if state.printed is None:
                state.printed = [line]
            else:
                state.printed.append(line)


_new = object.__new__
