"""Loading an artifact: :func:`load_artifact` gives a :class:`CompiledPolicy`.

Loading checks the envelope (format, pyrego version, digest: see
:mod:`pyrego.artifact.format`), then compiles the Python source and runs it
in a namespace holding only pyrego's runtime helpers and the constructors the
writer uses (``__builtins__`` empty, as for all generated code). Nothing is
parsed, checked or generated: this module imports only the runtime, so a
process that only loads artifacts never imports pyrego's compiler.

**Security**: an artifact is code. Loading one runs it with the rights of
the process, as importing a module does: load only artifacts from a source
you trust (your own build, a signed bundle), never one a user uploads.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from decimal import Decimal
from types import CodeType
from typing import Any

from pyrego.artifact.format import ArtifactError, open_envelope
from pyrego.batch.prepared import PreparedRule, eval_prepared, run_prepared
from pyrego.batch.results import BatchResult, OnError
from pyrego.builtins.registry import lookup
from pyrego.errors import ArgumentError, Location, RegoError
from pyrego.runtime.context import EvalConfig, EvalContext
from pyrego.runtime.convert import FrozenObject, loads
from pyrego.runtime.docs import DOC_HELPERS, rt_path
from pyrego.runtime.helpers import HELPERS, builtin_call
from pyrego.runtime.members import artifact_member_reader, artifact_path_reader
from pyrego.runtime.values import FALSE_KEY, TRUE_KEY, ArrayKey, ObjectKey, SetKey
from pyrego.runtime.withs import make_call_mock, make_with, rt_const_fn, rt_node_child

#: The ``__name__`` an artifact's code runs under (its rules are defined only then).
ARTIFACT_NAME = "__pyrego_artifact__"


class _Node:
    """What ``WITH`` reads of a rule node: its path and id."""

    __slots__ = ("path", "id")
    kind = "complete"

    def __init__(self, path: tuple[Any, ...], nid: int) -> None:
        self.path = path
        self.id = nid

    def has_rules(self) -> bool:
        return True


class _Nodes:
    __slots__ = ("nodes",)

    def __init__(self, nodes: dict[tuple[Any, ...], _Node]) -> None:
        self.nodes = nodes


def _with(nodes: Iterable[tuple[tuple[Any, ...], int]]) -> Any:
    return make_with(_Nodes({p: _Node(p, i) for p, i in nodes}))  # type: ignore[arg-type]


def _builtin(name: str) -> Any:
    found = lookup(name)
    if found is None:
        raise ArtifactError(f"the artifact calls builtin {name}, which this pyrego does not have")
    return found.fn


def _noop() -> None:
    return None


def _namespace() -> dict[str, Any]:
    namespace = _names()
    namespace["ASM"] = functools.partial(artifact_member_reader, namespace)
    namespace["APR"] = functools.partial(artifact_path_reader, namespace)
    return namespace


def _names() -> dict[str, Any]:
    return {
        **HELPERS,
        **DOC_HELPERS,
        "rt_path": rt_path,
        "rt_node_child": rt_node_child,
        "rt_const_fn": rt_const_fn,
        "__builtins__": {},
        "__name__": ARTIFACT_NAME,
        "AL": Location,
        "AB": _builtin,
        "AC": builtin_call,
        "AW": _with,
        "AM": make_call_mock,
        "ANOOP": _noop,
        "AF": frozenset,
        "AS": set,
        "AO": FrozenObject,
        "AD": Decimal,
        "AX": float,
        "AAK": ArrayKey,
        "AOK": ObjectKey,
        "ASK": SetKey,
        "ATK": TRUE_KEY,
        "AFK": FALSE_KEY,
        "AJ": loads,
    }


def _rule_key(path: str) -> tuple[str, ...]:
    if type(path) is not str:
        raise ArgumentError(f"rule path must be a string, not {type(path).__name__}")
    text = path[5:] if path.startswith("data.") else ("" if path == "data" else path)
    return tuple(text.split(".")) if text else ()


class CompiledPolicy:
    """Policies loaded from an artifact: evaluate rules without an engine.

    ``metadata``: the artifact's first line (pyrego version, policy digests,
    rules, settings). ``rules``: the rule paths it can evaluate.
    ``strict_builtin_errors`` and ``timeout`` start as the engine's were when
    the artifact was written.
    """

    def __init__(self, namespace: dict[str, Any], metadata: dict[str, Any], text: bytes) -> None:
        self.metadata = metadata
        self._ns = namespace
        self._rules: dict[tuple[Any, ...], tuple[Any, ...]] = namespace["RULES"]
        self._data = namespace["DATA"]
        self._text = text
        settings = metadata.get("settings") or {}
        self._config = EvalConfig(bool(settings.get("strict_builtin_errors")), None, None, settings.get("timeout"))
        # Rules prepared by eval_rule, by path and settings.
        self._prepared: dict[tuple[str, EvalConfig], PreparedRule] = {}

    @property
    def rules(self) -> list[str]:
        """The rule paths this artifact evaluates (``data.pkg.rule``)."""
        return list(self.metadata.get("rules") or [])

    def set_strict_builtin_errors(self, enabled: bool) -> None:
        """Make builtin errors end the evaluation instead of making it undefined."""
        cfg = self._config
        self._config = EvalConfig(bool(enabled), None, None, cfg.timeout)

    def set_eval_timeout(self, seconds: float | None) -> None:
        """Limit each evaluation to ``seconds`` of wall time (None: no limit)."""
        if seconds is not None and (type(seconds) not in (int, float) or not seconds > 0):
            raise ArgumentError(f"timeout must be a positive number of seconds, not {seconds!r}")
        self._config = EvalConfig(self._config.strict, None, None, seconds)

    def _context(self, input: Any) -> EvalContext:
        import time

        cfg = self._config
        deadline = time.monotonic() + cfg.timeout if cfg.timeout is not None else None
        return EvalContext.fast(input, self._data, cfg, deadline)

    def prepare(self, path: str) -> PreparedRule:
        """``path`` ready for many evaluations (see :mod:`pyrego.batch`)."""
        entry = self._rules.get(_rule_key(path))
        if entry is None:
            raise ArgumentError(f"{path} is not a rule of this artifact (its rules: {', '.join(self.rules)})")
        fn, more, default = entry
        return PreparedRule(fn, more, default, self._context, _no_source)

    def eval_rule(self, path: str, *, input: Any = None) -> Any:
        """The value of the rule at ``path`` for ``input``, or ``pyrego.UNDEFINED`` (as ``Engine.eval_rule``)."""
        key = (path, self._config)
        rule = self._prepared.get(key)
        if rule is None:
            if len(self._prepared) > 64:
                self._prepared.clear()
            rule = self._prepared[key] = self.prepare(path)
        return eval_prepared(rule, input)

    def eval_many(
        self,
        path: str,
        inputs: Iterable[Any],
        *,
        processes: int | None = None,
        chunk_size: int = 1000,
        on_error: OnError = "report",
        mp_context: str | None = None,
    ) -> Iterator[BatchResult]:
        """:func:`pyrego.batch.eval_many` on this artifact."""
        if processes is None:
            return run_prepared(self.prepare(path), inputs, on_error)
        from pyrego.batch.pool import pool_values

        return pool_values(
            self.worker_spec(), path, inputs, processes=processes, chunk_size=chunk_size, on_error=on_error, mp_context=mp_context
        )

    def worker_spec(self) -> tuple[Any, ...]:
        """What a worker process loads this artifact from (its text, checked again there)."""
        return (artifact_rule, self._text)


def _no_source(err: RegoError) -> None:
    """Artifacts hold no policy text: errors keep their file:row:col only."""


def _compile(source: str, where: str, digest: str, cache: bool) -> CodeType:
    """The code of an artifact's source: from pyrego's on-disk code cache
    (:mod:`pyrego.codegen.disk_cache`: a private directory, packs checked
    as there) when ``cache`` and the cache is usable, else ``compile()``.
    Python's ``compile()`` is most of a load's cost; a code object read back
    costs about a fiftieth of it."""
    if cache:
        from pyrego.codegen.disk_cache import CodeCache, default_directory

        store = CodeCache(default_directory())
        if store.usable():
            store.use_context(f"artifact:{digest}")  # one pack per artifact content
            code = store.compile(source, where)
            store.flush()
            return code
    return compile(source, where, "exec")


def load_artifact_bytes(blob: bytes, where: str = "artifact", *, cache: bool = False) -> CompiledPolicy:
    """A :class:`CompiledPolicy` from an artifact's bytes (checked as
    :func:`load_artifact` does; ``cache``: as there, off by default here)."""
    meta, body = open_envelope(blob, where)
    try:
        # The first line stays out of the code; a blank line keeps line numbers.
        code = _compile("\n" + body.decode("utf-8"), where, meta["digest"], cache)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ArtifactError(f"{where}: the artifact's code does not compile ({type(exc).__name__})") from None
    namespace = _namespace()
    exec(code, namespace)  # noqa: S102 - an artifact is trusted code (see the module's description)
    if "RULES" not in namespace or "DATA" not in namespace:
        raise ArtifactError(f"{where}: the artifact defines no rules")
    return CompiledPolicy(namespace, meta, blob)


def load_artifact(path: str | os.PathLike[str], *, cache: bool = True) -> CompiledPolicy:
    """Load the artifact at ``path`` (written by :func:`pyrego.artifact.write_artifact`).

    ``cache``: keep the artifact's compiled Python code in pyrego's on-disk
    code cache (``$PYREGO_CACHE_DIR``, else ``~/.cache/pyrego``; used only
    while private to this user, as ``__pycache__`` is), so that loading it
    again skips Python's ``compile()``. Raises :class:`~pyrego.artifact.format.ArtifactError` when the file is not
    an artifact, was modified or damaged (its digest does not match), or was
    written by another pyrego version. Loading runs the artifact's code: load
    only artifacts from a trusted source."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as f:
            blob = f.read()
    except OSError as exc:
        raise ArtifactError(f"cannot read artifact {where}: {exc.strerror or exc}") from None
    return load_artifact_bytes(blob, where, cache=cache)


def artifact_rule(path: str, blob: bytes) -> PreparedRule:
    """A worker process's evaluator: the artifact loaded from its bytes, ``path`` prepared."""
    return load_artifact_bytes(blob, "artifact").prepare(path)


__all__ = ["ARTIFACT_NAME", "CompiledPolicy", "artifact_rule", "load_artifact", "load_artifact_bytes"]
