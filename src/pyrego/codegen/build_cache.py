"""The process-wide caches of parsed modules and compiled programs.

Engines built on the same policy texts share one compiled program; parsing
and compilation run with the cyclic garbage collector paused (see
:func:`gc_paused`). :func:`set_compile_cache_size` and
:func:`clear_compile_cache` are public (``pyrego.set_compile_cache_size``).
"""

from __future__ import annotations

import gc
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Generic, TypeVar

from pyrego.ast import nodes as ast
from pyrego.codegen.generator import Program
from pyrego.compile.checks import check_modules
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module

cache_lock = threading.Lock()
_T = TypeVar("_T")

#: How many keys seen once are remembered (so that a second request keeps its
#: build); small ints only, so a few tens of kilobytes.
_REQUESTS_COUNTED = 1024


class _BuildCache(Generic[_T]):
    """A least-recently-used cache of things built from policy text.

    Builds run outside the cache lock, with the cyclic GC paused (see
    gc_paused). Threads that want the same key at once wait for the first
    one's build instead of building it again: each engine then shares one
    program, and a thread never evaluates code that another thread's
    duplicate build has made the cache drop.

    A key is kept from its second request on (the first is only counted):
    text seen once (a scanner's many policies, an engine per never-seen
    policy) is never worth keeping, and kept entries are what the cyclic
    collector scans again and again and what pushes recently used memory
    out of the processor's caches. A fresh engine for never-seen text cost
    about 15% more with its program kept than with it freed along with
    its engine. While the engine that asked first still holds what it
    built, a second request shares it (found through a weak reference)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[Any, _T] = OrderedDict()
        self._building: dict[Any, threading.Lock] = {}
        #: hash(key) -> requests, for keys not kept yet (bounded; see _count).
        #: A colliding hash only makes a key kept one request early.
        self._requests: OrderedDict[int, int] = OrderedDict()
        #: hash(key) -> (weak reference, key) of a value built once and not
        #: kept, while something else holds it (see _remember)
        self._unkept: dict[int, tuple[weakref.ref[Any], Any]] = {}

    def find(self, key: Any) -> _T | None:
        """The kept entry of ``key``, or None; without the lock (a fresh
        engine on cached policies comes here twice): a dict read, and the
        move to the end, are single C calls under the GIL (one evicted in
        between is simply missed)."""
        value = self.entries.get(key)
        if value is not None:
            try:
                self.entries.move_to_end(key)
            except KeyError:
                pass
        return value

    def get_or_build(self, key: Any, build: Callable[[], _T]) -> _T:
        value = self.find(key)
        if value is not None:
            return value
        with cache_lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
                return value
            digest = hash(key)
            first = self._unkept.get(digest)
            if first is not None:
                value = first[0]()
                if value is not None and first[1] == key:
                    del self._unkept[digest]
                    self.entries[key] = value  # (asked for twice: kept from now on)
                    self._trim()
                    return value
            key_lock = self._building.get(key)
            if key_lock is None:
                key_lock = self._building[key] = threading.Lock()
            self._count(digest)
        with key_lock:
            with cache_lock:
                value = self.entries.get(key)
                if value is not None:
                    return value  # built by the thread this one waited for
            try:
                with _GC_PAUSE:
                    value = build()
                    # Evicted while the collector is still paused: its count of new
                    # objects then drops by what the eviction frees before it can
                    # start a collection (a large program's objects would trigger
                    # one at the first allocation, scanning every young object).
                    with cache_lock:
                        # (a request made while this build ran counts: that
                        # thread then finds the entry instead of building again)
                        if self._requests.get(digest, 0) > 1:
                            del self._requests[digest]
                            self.entries[key] = value
                            self._trim()
                        elif self.size:
                            self._remember(digest, key, value)
            finally:
                with cache_lock:
                    if self._building.get(key) is key_lock:
                        del self._building[key]
        return value

    def resize(self, size: int) -> None:
        with cache_lock:
            self.size = size
            self._trim()

    def clear(self) -> None:
        self.entries.clear()
        self._requests.clear()
        self._unkept.clear()

    def _remember(self, digest: int, key: Any, value: Any) -> None:
        """Keep a weak reference to ``value``, built once and not kept (under
        the cache lock). Its entry goes when the value does, with the key: a
        policy's text is held no longer than its program."""
        if not type(value).__weakrefoffset__:
            return  # (parsed modules: slotted, no weak references; trying would raise)
        unkept = self._unkept

        # (no lock here: the value may be freed while this thread holds it)
        def forget(ref: weakref.ref[Any], digest: int = digest) -> None:
            entry = unkept.get(digest)
            if entry is not None and entry[0] is ref:
                unkept.pop(digest, None)

        unkept[digest] = (weakref.ref(value, forget), key)

    def _count(self, digest: int) -> None:
        """Count a request for a key not kept (under the cache lock)."""
        requests = self._requests
        requests[digest] = requests.pop(digest, 0) + 1
        if len(requests) > _REQUESTS_COUNTED:
            requests.popitem(last=False)

    def _trim(self) -> None:
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


# Compiled programs kept for engines built on the same policies, and parsed
# modules (ASTs are immutable). Kept small by default: every cached program is
# a few hundred objects the cyclic GC must scan again and again; with 128
# entries, engines built for never-seen policies spent a sixth of their time
# in the collector. See set_compile_cache_size.
program_cache: _BuildCache[Program] = _BuildCache(32)
_modules: _BuildCache[ParsedPolicy] = _BuildCache(64)


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


class _GcPause:
    """Pause the cyclic GC while a policy is parsed or compiled.

    Parsing and code generation allocate many short-lived containers; with the
    collector on, they trigger repeated collections (full ones scan the whole
    heap), which cost about as much as the compilation itself. Nested and
    concurrent compilations share one pause; the collector is switched back on
    only if it was on before the first one began. (A class, not a
    ``contextmanager`` generator: a fresh engine goes through it twice.)
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _gc_depth, _gc_was_enabled
        with _gc_lock:
            if _gc_depth == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_depth += 1

    def __exit__(self, *exc: object) -> None:
        global _gc_depth
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


_GC_PAUSE = _GcPause()


def gc_paused() -> _GcPause:
    """The pause of the cyclic GC (see :class:`_GcPause`), for a ``with`` statement."""
    return _GC_PAUSE


class ParsedPolicy:
    """A policy file parsed and checked on its own, shared by every engine
    given the same text: ``module``; ``hidden``, the calls of functions a
    local variable hides, which the whole program's check reports (see
    :func:`pyrego.compile.checks.check_modules`); ``package``, its name
    (``data.authz``); ``source``, the ``(text, module)`` pair an engine
    keeps for the path (one object for all of them); and ``program_source``,
    the file as a compiled program's key names it (``(path, text, rego_v1)``),
    made once for every engine that adds the file."""

    __slots__ = ("module", "hidden", "package", "source", "program_source")

    def __init__(self, path: str, text: str, module: ast.Module, hidden: list[RegoError]) -> None:
        self.module = module
        self.hidden = hidden
        self.package = ast.ref_to_string(module.package)
        self.source = (text, module)
        self.program_source = (path, text, module.rego_v1)


def parse_cached(text: str, path: str, rego_v1: bool) -> ParsedPolicy:
    """Parse a policy and run OPA's checks of one module on it (raising their
    errors), reusing the result for identical text."""

    key = (path, text, rego_v1)
    found = _modules.find(key)  # (before making the closure below)
    if found is not None:
        return found

    def build() -> ParsedPolicy:
        module = parse_module(text, path, rego_v1=rego_v1)
        return ParsedPolicy(path, text, module, check_modules([module]))

    return _modules.get_or_build(key, build)


def set_compile_cache_size(programs: int = 32, modules: int = 64) -> None:
    """How many compiled programs and parsed modules the process keeps for reuse.

    A new engine whose policies (texts and paths) match a kept program starts
    at once, without parsing or compiling. A program or module is kept from
    the second time it is asked for on: text seen only once is never kept. Raise
    the sizes when a process
    builds fresh engines over more distinct policy sets than the defaults
    hold; lower them to save memory and garbage-collection time. Zero keeps
    nothing.
    """
    if programs < 0 or modules < 0:
        raise ValueError("cache sizes must not be negative")
    program_cache.resize(programs)
    _modules.resize(modules)


def clear_compile_cache() -> None:
    """Forget every parsed and compiled policy (the next evaluation compiles afresh)."""
    with cache_lock:
        program_cache.clear()
        _modules.clear()
