"""The state of one evaluation, shared by generated code and builtins."""

from __future__ import annotations

import time
from typing import Any, Callable

from .values import UNDEF


class EvalContext:
    """One query's evaluation state.

    ``input`` and ``data`` are the caller's objects, read in place. ``cache``
    memoises rule values for this evaluation. ``now_ns`` is taken once, on
    first use, so every ``time.now_ns()`` in one query agrees, as in OPA.
    """

    __slots__ = (
        "input",
        "data",
        "cache",
        "strict",
        "_now_ns",
        "builtin_cache",
        "print_hook",
        "deadline",
        "depth",
        "max_depth",
        "overrides",
        "functions",
        "options",
        "builtin_errors",
    )

    def __init__(
        self,
        input: Any = UNDEF,
        data: Any = None,
        *,
        strict: bool = False,
        print_hook: Callable[[str], None] | None = None,
        deadline: float | None = None,
        max_depth: int = 2000,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.input = input
        self.data = {} if data is None else data
        self.cache: dict[Any, Any] = {}
        self.strict = strict
        self._now_ns: int | None = None
        # Per-query caches of builtins (rand.intn, http.send, ...), keyed by the builtin.
        self.builtin_cache: dict[str, dict[Any, Any]] = {}
        self.print_hook = print_hook
        self.deadline = deadline
        self.depth = 0
        self.max_depth = max_depth
        # `with` replacements of data paths (tuple path -> value) and of functions.
        self.overrides: dict[tuple[str, ...], Any] | None = None
        self.functions: dict[str, Any] | None = None
        # Engine options builtins may read (e.g. {"allow_net": False}).
        self.options = options or {}
        self.builtin_errors: list[Exception] = []

    def derive(self) -> EvalContext:
        """A context for a ``with`` expression: same query, fresh rule cache."""
        new = EvalContext.__new__(EvalContext)
        new.input = self.input
        new.data = self.data
        new.cache = {}
        new.strict = self.strict
        new._now_ns = self.now_ns
        new.builtin_cache = self.builtin_cache
        new.print_hook = self.print_hook
        new.deadline = self.deadline
        new.depth = self.depth
        new.max_depth = self.max_depth
        new.overrides = self.overrides
        new.functions = self.functions
        new.options = self.options
        new.builtin_errors = self.builtin_errors
        return new

    @property
    def now_ns(self) -> int:
        """Nanoseconds since the epoch, fixed for the whole query."""
        if self._now_ns is None:
            self._now_ns = time.time_ns()
        return self._now_ns

    def cache_for(self, name: str) -> dict[Any, Any]:
        """A per-query cache dict for the builtin ``name``."""
        cache = self.builtin_cache.get(name)
        if cache is None:
            cache = self.builtin_cache[name] = {}
        return cache

    def emit_print(self, text: str) -> None:
        if self.print_hook is not None:
            self.print_hook(text)
