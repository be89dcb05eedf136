"""Policies loaded from a folder, reloaded on demand, the engine swapped whole.

>>> policies = PolicyDirectory("policy/")          # doctest: +SKIP
>>> policies().eval_rule("data.app.allow", input={...})  # doctest: +SKIP
>>> policies.reload()                                # doctest: +SKIP

A reload builds a new engine from the folder beside the one in use, compiles
it, and only then puts it in place (one reference assignment): a request
takes the engine once (``policies()``) and evaluates on it, so it sees the
old policies or the new ones, never a mix, and never a half-loaded engine.
A folder that does not load or compile leaves the engine in use as it was
(the error is raised to the caller of :meth:`PolicyDirectory.reload`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from pyrego.engine import Engine
from pyrego.loader import iter_files

__all__ = ["PolicyDirectory"]


class PolicyDirectory:
    """The engine of the policies and data in ``path`` (as ``opa run DIR`` loads them).

    Calling the object returns the engine in use: pass it wherever an
    integration takes an engine, and each request gets the current one.
    ``configure(engine)`` runs on every new engine before its policies are
    added (time limits, strict mode, extra data). ``decisions``: rule paths
    evaluated once (with an empty input) on a new engine before it goes in
    place, so that the first requests after a reload do not pay for
    resolving them (evaluation errors there are ignored: they may depend on
    the input)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        configure: Callable[[Engine], None] | None = None,
        decisions: Iterable[str] = (),
    ) -> None:
        self.path = Path(path)
        self.configure = configure
        self.decisions = tuple(decisions)
        self._reloading = threading.Lock()  # one reload at a time (readers take no lock)
        self._signature = self._files()
        self._engine = self._load()
        self.generation = 1

    def __call__(self) -> Engine:
        """The engine in use."""
        return self._engine

    @property
    def engine(self) -> Engine:
        """The engine in use."""
        return self._engine

    def reload(self) -> Engine:
        """Load the folder again into a new engine and put it in place; returns it.

        Raises what loading or compiling raises (a parse or compile error, a
        data conflict): the engine in use stays."""
        with self._reloading:
            signature = self._files()
            engine = self._load()
            self._engine = engine  # the swap: readers see the old engine or this one
            self._signature = signature
            self.generation += 1
            return engine

    def reload_if_changed(self) -> bool:
        """:meth:`reload` when a file under the folder was added, removed or
        changed (by name, size and modification time) since the last load;
        returns whether it reloaded."""
        if self._files() == self._signature:
            return False
        self.reload()
        return True

    def _load(self) -> Engine:
        engine = Engine()
        if self.configure is not None:
            self.configure(engine)
        engine.add_policies_from_dir(self.path)
        engine.compile()
        for decision in self.decisions:
            try:
                engine.eval_rule(decision, input={})
            except Exception:  # noqa: BLE001 - only warming: a real request reports its own error
                pass
        return engine

    def _files(self) -> tuple[tuple[str, int, int], ...]:
        out = []
        for file in iter_files(self.path, relative_to=self.path):
            try:
                st = file.path.stat()
            except OSError:
                continue
            out.append((file.name, st.st_size, st.st_mtime_ns))
        return tuple(out)
