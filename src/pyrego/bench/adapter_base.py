"""The interface every engine of ``pyrego bench`` stands behind (see :mod:`.engines`).

Apart from the adapters themselves so that an engine defined elsewhere (the
hand-written baseline, :mod:`.python_engine`) implements it without importing
the adapters' registry.
"""

from __future__ import annotations

import itertools
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pyrego.bench.workloads import PolicySet

Evaluator = Callable[[Any], Any]

UNDEFINED_MARK = "<undefined>"


class EngineUnavailable(RuntimeError):
    """The engine is not installed (or cannot run the workload)."""


class Prepared(ABC):
    """An engine with policies (and data) added, ready to evaluate."""

    @abstractmethod
    def set_input(self, value: Any) -> None:
        """Use the Python object ``value`` as ``input``."""

    @abstractmethod
    def set_input_json(self, text: str) -> None:
        """Use the JSON text ``text`` as ``input``."""

    @abstractmethod
    def eval(self, query: str) -> Any:
        """The value of ``query`` (a rule path like ``data.bench.allow``), or :data:`UNDEFINED_MARK`."""

    @abstractmethod
    def add_data(self, data: Any) -> None:
        """Merge ``data`` into the engine's base documents."""

    @abstractmethod
    def clone(self) -> Prepared:
        """An independent engine with the same policies and data (cheap where the engine allows)."""

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        """A closure ``input -> value`` (set input, evaluate) for the timing loops."""
        set_input = self.set_input_json if json_input else self.set_input
        ev = self.eval

        def run(value: Any) -> Any:
            set_input(value)
            return ev(query)

        return run

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release native resources (no-op by default)."""


class Adapter(ABC):
    """One engine: availability, version, preparation and fresh evaluation."""

    name = ""
    title = ""
    #: Whether Rego v0 policies (the ACI workload) can be loaded.
    supports_v0 = True
    #: Notes for the report: how the engine takes inputs, what is approximated.
    notes: tuple[str, ...] = ()
    #: Whether an engine made in one thread may be cloned and used in another
    #: (False: each worker thread prepares its own engines).
    shareable_across_threads = True
    #: The workloads the engine can run (None: all of them).
    workloads: tuple[str, ...] | None = None
    #: The engine uses it can be timed in ("prepared", "fresh-warm", "fresh-cold").
    engine_uses: tuple[str, ...] = ("prepared", "fresh-warm", "fresh-cold")

    def __init__(self) -> None:
        self._counter = itertools.count()

    @abstractmethod
    def available(self) -> str | None:
        """None when the engine can be used, else why not."""

    @abstractmethod
    def version(self) -> str:
        """The engine's version, for the report."""

    @abstractmethod
    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        """A new engine with ``ps``'s policies (or ``modules`` in their place) and data."""

    def runs(self, workload: str, engine_use: str = "prepared") -> bool:
        """Whether the engine takes part in ``workload`` used as ``engine_use``."""
        return (self.workloads is None or workload in self.workloads) and engine_use in self.engine_uses

    def unique_suffix(self) -> str:
        """A comment line never seen before by this process (for cold runs)."""
        return f"\n# run {os.getpid()}-{next(self._counter)}\n"

    def begin_cold(self) -> None:  # noqa: B027 - optional hook
        """Called before a cold configuration (pyrego forgets its compile cache)."""

    def fresh_evaluator(self, ps: PolicySet, query: str, json_input: bool, cold: bool) -> Evaluator:
        """A closure ``input -> value`` that builds a new engine per call."""
        suffix = self.unique_suffix

        def run(value: Any) -> Any:
            p = self.prepare(ps, ps.with_suffix(suffix()) if cold else None)
            try:
                if json_input:
                    p.set_input_json(value)
                else:
                    p.set_input(value)
                return p.eval(query)
            finally:
                p.close()

        return run


# ---------------------------------------------------------------- pyrego
