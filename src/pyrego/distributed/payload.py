"""What a cluster job ships to its workers: a :class:`PolicyPayload`.

A payload is either policy texts and data (compiled once in each worker
process, then cached there) or a compiled policy artifact (generated Python,
loaded without the compiler: see :mod:`pyrego.artifact`). It is plain,
picklable data with a :attr:`~PolicyPayload.digest`: a worker keeps one
evaluator per digest in :data:`_EVALUATORS` (module level, so a Python worker
that runs many tasks compiles once).

This module imports neither Spark nor Dask.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyrego.errors import ArgumentError

if TYPE_CHECKING:
    from pyrego.distributed.records import RecordEvaluator
    from pyrego.engine import Engine

POLICIES = "policies"
ARTIFACT = "artifact"


@dataclass(frozen=True)
class PolicyPayload:
    """Policies (and data) to evaluate on workers.

    ``kind``: ``"policies"`` (``policies``: file name -> Rego text, ``data``:
    the base documents, ``rego_v0``, ``strict``) or ``"artifact"``
    (``artifact``: the bytes of a compiled artifact). ``timeout``: a time
    limit per record, in seconds (None: none); a record over it gets the
    error ``eval_cancel_error`` and the job goes on.

    Build one with :meth:`from_policies`, :meth:`from_engine`,
    :meth:`from_files` or :meth:`from_artifact`.
    """

    kind: str
    policies: tuple[tuple[str, str], ...] = ()
    data: Any = None
    rego_v0: bool = False
    strict: bool = False
    timeout: float | None = None
    artifact: bytes | None = None
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.kind not in (POLICIES, ARTIFACT):
            raise ArgumentError(f"payload kind must be {POLICIES!r} or {ARTIFACT!r}, not {self.kind!r}")
        if self.kind == ARTIFACT and not self.artifact:
            raise ArgumentError("an artifact payload needs the artifact's bytes")
        if self.timeout is not None and not self.timeout > 0:
            raise ArgumentError(f"timeout must be a positive number of seconds, not {self.timeout!r}")
        if not self.digest:
            object.__setattr__(self, "digest", _digest(self))

    @classmethod
    def from_policies(
        cls,
        policies: dict[str, str],
        data: Any = None,
        *,
        rego_v0: bool = False,
        strict: bool = False,
        timeout: float | None = None,
    ) -> PolicyPayload:
        """Rego texts (file name -> text) and base data (a JSON-like object)."""
        if not isinstance(policies, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in policies.items()
        ):
            raise ArgumentError("policies must map file names to Rego texts")
        return cls(POLICIES, tuple(sorted(policies.items())), data, rego_v0, strict, timeout)

    @classmethod
    def from_files(cls, paths: list[str | os.PathLike[str]], data: Any = None, **settings: Any) -> PolicyPayload:
        """The ``.rego`` files at ``paths`` (a directory: every ``.rego`` file under it)."""
        texts: dict[str, str] = {}
        for p in paths:
            p = os.fspath(p)
            if os.path.isdir(p):
                for root, _dirs, files in sorted(os.walk(p)):
                    for name in sorted(files):
                        if name.endswith(".rego") and not name.endswith("_test.rego"):
                            full = os.path.join(root, name)
                            with open(full, encoding="utf-8") as f:
                                texts[os.path.relpath(full, p)] = f.read()
            else:
                with open(p, encoding="utf-8") as f:
                    texts[os.path.basename(p)] = f.read()
        return cls.from_policies(texts, data, **settings)

    @classmethod
    def from_engine(cls, engine: Engine, *, timeout: float | None = None) -> PolicyPayload:
        """An engine's policies, data and settings (its time limit unless ``timeout`` is given).

        Extension functions (``Engine.add_extension``) are not shipped: an
        engine with any is refused."""
        compiled = engine.program()
        if compiled.builtins_key[0]:
            raise ArgumentError("an engine with extension functions cannot be shipped to workers")
        ctx = compiled.context(None)
        limit = timeout if timeout is not None else ctx.cfg.timeout
        return cls(
            POLICIES,
            tuple(sorted(compiled.texts.items())),
            ctx.data or None,
            compiled.rego_v0,
            bool(ctx.cfg.strict),
            limit,
        )

    @classmethod
    def from_artifact(
        cls, path: str | os.PathLike[str], *, strict: bool = False, timeout: float | None = None
    ) -> PolicyPayload:
        """A compiled artifact file (``pyrego build --target python``; :func:`pyrego.artifact.write_artifact`)."""
        with open(path, "rb") as f:
            blob = f.read()
        return cls(ARTIFACT, artifact=blob, strict=strict, timeout=timeout)

    def with_timeout(self, seconds: float | None) -> PolicyPayload:
        """This payload with another time limit per record."""
        return PolicyPayload(self.kind, self.policies, self.data, self.rego_v0, self.strict, seconds, self.artifact)

    def build(self) -> Any:
        """What evaluates: an :class:`~pyrego.Engine` (texts) or a loaded artifact;
        anything with ``eval_rule(path, input=...)``. Compiles (or loads) now."""
        if self.kind == ARTIFACT:
            from pyrego.artifact.load import load_artifact_bytes  # type: ignore[import-not-found,unused-ignore]

            assert self.artifact is not None
            target: Any = load_artifact_bytes(self.artifact)
            if self.strict:
                target.set_strict_builtin_errors(True)
        else:
            from pyrego.engine import Engine

            target = Engine()
            if self.rego_v0:
                target.set_rego_v0(True)
            if self.strict:
                target.set_strict_builtin_errors(True)
            target.set_gather_prints(False)
            target.add_policies(dict(self.policies))
            if self.data:
                target.add_data(self.data)
            target.compile()
        if self.timeout is not None:
            target.set_eval_timeout(self.timeout)
        return target


def _digest(p: PolicyPayload) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([p.kind, p.rego_v0, p.strict, p.timeout]).encode())
    for name, text in p.policies:
        h.update(b"\0policy\0" + name.encode() + b"\0" + text.encode())
    if p.data is not None:
        from pyrego.runtime.convert import dumps, from_python

        h.update(b"\0data\0" + dumps(from_python(p.data)).encode())
    if p.artifact is not None:
        h.update(b"\0artifact\0" + p.artifact)
    return h.hexdigest()


#: Evaluators built in this process: (payload digest, rule path) -> evaluator.
_EVALUATORS: dict[tuple[str, str], RecordEvaluator] = {}
_LOCK = threading.Lock()
#: How many times this process built each (digest, path): once, unless the cache was cleared.
_BUILDS: dict[tuple[str, str], int] = {}


def evaluator(payload: PolicyPayload, path: str) -> RecordEvaluator:
    """The evaluator of ``path`` under ``payload`` in this process, built (compiled) on first use."""
    key = (payload.digest, path)
    found = _EVALUATORS.get(key)
    if found is not None:
        return found
    from pyrego.distributed.records import RecordEvaluator

    with _LOCK:
        found = _EVALUATORS.get(key)
        if found is None:
            found = _EVALUATORS[key] = RecordEvaluator(payload.build(), path)
            _BUILDS[key] = _BUILDS.get(key, 0) + 1
    return found


#: Payloads installed in this process ahead of its tasks (a Dask worker plugin): digest -> payload.
SHIPPED: dict[str, PolicyPayload] = {}


def install(payload: PolicyPayload) -> None:
    """Keep ``payload`` in this process, for the tasks that name it by digest (:class:`PayloadRef`)."""
    SHIPPED[payload.digest] = payload


def installed() -> list[str]:
    """The digests of the payloads installed in this process."""
    return sorted(SHIPPED)


@dataclass(frozen=True)
class PayloadRef:
    """A payload as a task carries it: its digest, and the payload itself only
    when it was not installed on the workers ahead (no cluster client)."""

    digest: str
    payload: PolicyPayload | None = None

    def resolve(self) -> PolicyPayload:
        """The payload: carried, or installed in this process."""
        if self.payload is not None:
            return self.payload
        found = SHIPPED.get(self.digest)
        if found is None:
            raise RuntimeError(
                f"policy payload {self.digest[:16]} is not installed in this worker (was its plugin registered?)"
            )
        return found


def builds_in_process() -> dict[tuple[str, str], int]:
    """How many times this process built each (payload digest, rule path): a
    worker that runs many tasks builds each once."""
    return dict(_BUILDS)


__all__ = [
    "ARTIFACT",
    "POLICIES",
    "SHIPPED",
    "PayloadRef",
    "PolicyPayload",
    "builds_in_process",
    "evaluator",
    "install",
    "installed",
]
