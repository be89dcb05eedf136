"""The state of one evaluation, shared by generated code and builtins."""

from __future__ import annotations

import time
from typing import Any, Callable

from .values import UNDEF

_NO_OPTIONS: dict[str, Any] = {}


class EvalContext:
    """One query's evaluation state.

    ``input`` and ``data`` are the caller's objects, read in place. ``cache``
    memoises rule values for this evaluation. ``now_ns`` is taken once, on
    first use, so every ``time.now_ns()`` in one query agrees, as in OPA.

    Creating a context is on every evaluation's path, so only ``input``,
    ``data`` and ``cache`` are set per instance; everything else defaults to
    a class attribute until an evaluation needs it.
    """

    strict = False
    print_hook: Callable[[str], None] | None = None
    deadline: float | None = None
    # `with` replacements of functions (name -> callable).
    functions: dict[str, Any] | None = None
    # Engine options builtins may read (e.g. {"allow_net": False}).
    options: dict[str, Any] = _NO_OPTIONS
    _now_ns: int | None = None
    _builtin_cache: dict[str, dict[Any, Any]] | None = None
    _builtin_errors: list[Exception] | None = None

    def __init__(
        self,
        input: Any = UNDEF,
        data: Any = None,
        *,
        strict: bool = False,
        print_hook: Callable[[str], None] | None = None,
        deadline: float | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.input = input
        self.data = {} if data is None else data
        self.cache: dict[Any, Any] = {}
        if strict:
            self.strict = True
        if print_hook is not None:
            self.print_hook = print_hook
        if deadline is not None:
            self.deadline = deadline
        if options:
            self.options = options

    def derive(self) -> EvalContext:
        """A context for a ``with`` expression: same query, fresh rule cache."""
        new = EvalContext.__new__(EvalContext)
        new.__dict__.update(self.__dict__)
        new.cache = {}
        # The query's clock and builtin caches are shared with the parent.
        new._now_ns = self.now_ns
        new._builtin_cache = self.builtin_cache
        new._builtin_errors = self.builtin_errors
        return new

    @property
    def now_ns(self) -> int:
        """Nanoseconds since the epoch, fixed for the whole query."""
        if self._now_ns is None:
            self._now_ns = time.time_ns()
        return self._now_ns

    @property
    def builtin_cache(self) -> dict[str, dict[Any, Any]]:
        """Per-query caches of builtins (rand.intn, http.send, ...), by builtin name."""
        if self._builtin_cache is None:
            self._builtin_cache = {}
        return self._builtin_cache

    @property
    def builtin_errors(self) -> list[Exception]:
        """Builtin errors that made expressions undefined (non-strict mode)."""
        if self._builtin_errors is None:
            self._builtin_errors = []
        return self._builtin_errors

    def cache_for(self, name: str) -> dict[Any, Any]:
        """A per-query cache dict for the builtin ``name``."""
        caches = self.builtin_cache
        cache = caches.get(name)
        if cache is None:
            cache = caches[name] = {}
        return cache

    def emit_print(self, text: str) -> None:
        if self.print_hook is not None:
            self.print_hook(text)
