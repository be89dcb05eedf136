"""The process-wide caches of parsed modules and compiled programs.

Engines built on the same policy texts share one compiled program; parsing
and compilation run with the cyclic garbage collector paused (see
:func:`_gc_paused`). :func:`set_compile_cache_size` and
:func:`clear_compile_cache` are public (``pyrego.set_compile_cache_size``).
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, TypeVar

from . import ast
from .codegen import Program
from .parser import parse_module

_cache_lock = threading.Lock()
_T = TypeVar("_T")


class _BuildCache(Generic[_T]):
    """A least-recently-used cache of things built from policy text.

    Builds run outside the cache lock, with the cyclic GC paused (see
    _gc_paused). Threads that want the same key at once wait for the first
    one's build instead of building it again: each engine then shares one
    program, and a thread never evaluates code that another thread's
    duplicate build has made the cache drop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[Any, _T] = OrderedDict()
        self._building: dict[Any, threading.Lock] = {}

    def get_or_build(self, key: Any, build: Callable[[], _T]) -> _T:
        with _cache_lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
                return value
            key_lock = self._building.get(key)
            if key_lock is None:
                key_lock = self._building[key] = threading.Lock()
        with key_lock:
            with _cache_lock:
                value = self.entries.get(key)
                if value is not None:
                    return value  # built by the thread this one waited for
            try:
                with _gc_paused():
                    value = build()
                    # Evicted while the collector is still paused: its count of new
                    # objects then drops by what the eviction frees before it can
                    # start a collection (a large program's objects would trigger
                    # one at the first allocation, scanning every young object).
                    with _cache_lock:
                        self.entries[key] = value
                        self._trim()
            finally:
                with _cache_lock:
                    if self._building.get(key) is key_lock:
                        del self._building[key]
        return value

    def resize(self, size: int) -> None:
        with _cache_lock:
            self.size = size
            self._trim()

    def _trim(self) -> None:
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


# Compiled programs kept for engines built on the same policies, and parsed
# modules (ASTs are immutable). Kept small by default: every cached program is
# a few hundred objects the cyclic GC must scan again and again; with 128
# entries, engines built for never-seen policies spent a sixth of their time
# in the collector. See set_compile_cache_size.
_programs: _BuildCache[Program] = _BuildCache(32)
_modules: _BuildCache[ast.Module] = _BuildCache(64)


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a policy is parsed or compiled.

    Parsing and code generation allocate many short-lived containers; with the
    collector on, they trigger repeated collections (full ones scan the whole
    heap), which cost about as much as the compilation itself. Nested and
    concurrent compilations share one pause; the collector is switched back on
    only if it was on before the first one began.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


def _parse_cached(text: str, path: str, rego_v1: bool) -> ast.Module:
    """Parse a policy, reusing the AST of identical text."""
    return _modules.get_or_build((path, text, rego_v1), lambda: parse_module(text, path, rego_v1=rego_v1))


def set_compile_cache_size(programs: int = 32, modules: int = 64) -> None:
    """How many compiled programs and parsed modules the process keeps for reuse.

    A new engine whose policies (texts and paths) match a kept program starts
    at once, without parsing or compiling. Raise the sizes when a process
    builds fresh engines over more distinct policy sets than the defaults
    hold; lower them to save memory and garbage-collection time. Zero keeps
    nothing.
    """
    if programs < 0 or modules < 0:
        raise ValueError("cache sizes must not be negative")
    _programs.resize(programs)
    _modules.resize(modules)


def clear_compile_cache() -> None:
    """Forget every parsed and compiled policy (the next evaluation compiles afresh)."""
    with _cache_lock:
        _programs.entries.clear()
        _modules.entries.clear()
