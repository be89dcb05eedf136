"""The policy server's state: one store of policies and data, and the engine built on it.

:class:`ServerRuntime` owns a :class:`Snapshot` (the policies, the data, and
an :class:`~pyrego.engine.Engine` compiled on both). A write builds a new
snapshot on the side, compiles it, checks the data against the rules, and
only then replaces the current one with one assignment: a request takes the
snapshot once and evaluates on it from start to end, so it never sees half
of a change, and writes never wait for evaluations (nor evaluations for
writes). Writes are serialised among themselves by a lock.

Bundles (:mod:`pyrego.bundle`) activate their policies and data with
:meth:`ServerRuntime.activate`; plugins report their state with
:meth:`ServerRuntime.set_plugin_status`; a decision logger (any object with
``log(event: dict)``) receives OPA's decision events.
"""

from __future__ import annotations

import datetime
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pyrego.engine import Engine
from pyrego.errors import RegoError
from pyrego.server import store
from pyrego.version import __version__

#: Plugin states, as OPA's plugin manager names them.
PLUGIN_STATES = ("NOT_READY", "OK", "ERROR", "WARN")


class ScopeError(RegoError):
    """A write through the REST API to a path a bundle owns."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid_parameter")


def _go_quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def _erase(data: dict[str, Any], path: list[str]) -> dict[str, Any]:
    """``data`` without the document at ``path`` (a copy along the path; all of it for ``[]``)."""
    if not path:
        return {}
    head, rest = path[0], path[1:]
    if head not in data:
        return data
    out = dict(data)
    if not rest:
        del out[head]
    elif isinstance(out[head], dict):
        out[head] = _erase(out[head], rest)
    return out


def _kept(snap: Snapshot, policies: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    """The parsed (bundle) modules of ``snap`` still in ``policies`` with the same text."""
    return {pid: m for pid, m in snap.parsed.items() if policies.get(pid) == m[0]}


def _merge_data(a: dict[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """``b`` merged into a copy of ``a`` (objects merged key by key, other values of ``b`` win)."""
    out = dict(a)
    for k, v in b.items():
        if k in out and isinstance(out[k], dict) and isinstance(v, Mapping):
            out[k] = _merge_data(out[k], v)
        else:
            out[k] = v
    return out


class DecisionLogger(Protocol):
    """What receives decision events (``pyrego.plugins.logs`` provides one)."""

    def log(self, event: dict[str, Any]) -> None: ...


@dataclass
class Snapshot:
    """Policies, data and the engine compiled on them; never changed once made current."""

    policies: dict[str, str]
    data: dict[str, Any]
    engine: Engine
    revision: int
    bundles: dict[str, str] = field(default_factory=dict)
    strict_engine: Engine | None = None
    #: Clones with the inline time cap, by strict flag (made on first use).
    capped_engines: dict[bool, Engine] = field(default_factory=dict)
    #: The bundles' modules as parsed when read (each with its own Rego version), by id.
    parsed: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: Each active bundle's roots (paths under ``data`` that the REST API may not write).
    roots: dict[str, list[str]] = field(default_factory=dict)

    def engine_for(self, strict_builtin_errors: bool, inline_cap: float | None = None) -> Engine:
        """The engine to evaluate on (one with strict builtin errors, made on first use);
        with ``inline_cap``, a clone whose time limit is at most that many seconds
        (for evaluations on the event loop's thread, see ``server.common.Worker``)."""
        if inline_cap is not None:
            capped = self.capped_engines.get(strict_builtin_errors)
            if capped is None:
                capped = self.engine_for(strict_builtin_errors).clone()
                own = capped._timeout
                capped.set_eval_timeout(inline_cap if own is None else min(own, inline_cap))
                self.capped_engines[strict_builtin_errors] = capped
            return capped
        if not strict_builtin_errors:
            return self.engine
        eng = self.strict_engine
        if eng is None:
            eng = self.engine.clone()
            eng.set_strict_builtin_errors(True)
            self.strict_engine = eng
        return eng


class ServerRuntime:
    """The state of one policy server process (see the module's docstring).

    ``eval_timeout``: the time limit of one evaluation in seconds (None: none);
    ``rego_v0``: parse policies as Rego v0; ``decision_logger``: receives
    decision events; ``read_only``: refuse writes through the API (several
    worker processes each hold their own copy and could not agree);
    ``config``: the active configuration (for ``GET /v1/config`` and
    ``opa.runtime()``)."""

    def __init__(
        self,
        policies: Mapping[str, str] | None = None,
        data: Mapping[str, Any] | None = None,
        *,
        eval_timeout: float | None = None,
        rego_v0: bool = False,
        decision_logger: DecisionLogger | None = None,
        read_only: bool = False,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.eval_timeout = eval_timeout
        self.rego_v0 = rego_v0
        self.decision_logger = decision_logger
        self.read_only = read_only
        self.config: dict[str, Any] = dict(config or {})
        self.instance_id = str(uuid.uuid4())
        #: The instance's labels (``id``, ``version`` and the configuration's ``labels``).
        self.labels: dict[str, str] = {
            "id": self.instance_id,
            "version": __version__,
            **{str(k): str(v) for k, v in (self.config.get("labels") or {}).items()},
        }
        self._write_lock = threading.Lock()
        self._plugins: dict[str, dict[str, Any]] = {}
        self._plugins_lock = threading.Lock()
        self._revision = 0
        self._snapshot = self._build(dict(policies or {}), dict(data or {}), {})
        #: Started with the application and stopped after it (objects with ``start()`` and ``stop()``).
        self.plugins: list[Any] = []
        #: Each configured bundle's status in OPA's shape (set by the bundle plugin), for ``/v1/status``.
        self.bundle_status: Any = None

    # -- snapshots -----------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        """The current snapshot (take it once per request)."""
        return self._snapshot

    def _new_engine(self) -> Engine:
        eng = Engine()
        eng.set_rego_v0(self.rego_v0)
        eng.set_gather_prints(False)
        if self.eval_timeout is not None:
            eng.set_eval_timeout(self.eval_timeout)
        eng.set_runtime({"config": self.config, "env": {}, "version": __version__})
        return eng

    def _build(
        self,
        policies: dict[str, str],
        data: dict[str, Any],
        bundles: dict[str, str],
        base: Snapshot | None = None,
        parsed: dict[str, tuple[str, Any]] | None = None,
        roots: dict[str, list[str]] | None = None,
    ) -> Snapshot:
        """A compiled snapshot of ``policies`` and ``data``; raises a RegoError when they do not compile together.

        ``parsed``: modules already parsed (a bundle's, each in its own Rego
        version), installed as they are; their texts are in ``policies`` too."""
        parsed = parsed or {}
        if base is not None and base.policies == policies and base.parsed.keys() == parsed.keys():
            eng = base.engine.clone()  # (same policies: the compiled program is shared)
            eng.clear_data()
            if data:
                eng.add_data(data)
        elif parsed:
            from pyrego.parse.parser import parse_module

            eng = self._new_engine()
            if data:
                eng.add_data(data)
            modules = {pid: (text, parse_module(text, pid, rego_v1=not self.rego_v0)) for pid, text in policies.items() if pid not in parsed}
            eng.install_modules({**modules, **parsed})  # (compiled now, checked against the data)
        else:
            eng = self._new_engine()
            if policies:
                eng.add_policies(policies)
            if data:
                eng.add_data(data)
        eng.compile()
        self._revision += 1
        return Snapshot(policies, data, eng, self._revision, bundles, parsed=parsed, roots=dict(roots or {}))

    def activate(self, policies: Mapping[str, str], data: Mapping[str, Any], *, bundles: Mapping[str, str] | None = None) -> None:
        """Replace all policies and data at once.

        ``bundles``: bundle name to revision, for provenance and decision logs.
        Raises a :class:`~pyrego.errors.RegoError` (and changes nothing) when
        the policies do not compile or the data clashes with them."""
        with self._write_lock:
            self._snapshot = self._build(dict(policies), dict(data), dict(bundles or {}))

    def activate_bundles(self, plan: Any) -> None:
        """Serve the bundles of ``plan`` (a :class:`~pyrego.bundle.activate.ActivationPlan`)
        in place of the bundles served so far, in one step.

        As OPA's activation: the previous bundles' modules and the data under
        their roots and the new roots are erased, the new modules (installed
        as parsed, each in its bundle's Rego version) and data written; the
        rest (files given without ``-b``, API writes outside the roots) stays.
        Raises (and changes nothing) when the result does not compile."""
        with self._write_lock:
            snap = self._snapshot
            policies = {pid: text for pid, text in snap.policies.items() if pid not in snap.parsed}
            data = snap.data
            for roots in (*snap.roots.values(), *plan.roots.values()):
                for root in roots:
                    data = _erase(data, [p for p in root.split("/") if p])
            data = _merge_data(data, plan.data)
            for pid, (text, _) in plan.policies.items():
                policies[pid] = text
            self._snapshot = self._build(policies, data, dict(plan.revisions), parsed=dict(plan.policies), roots=dict(plan.roots))

    def check_path_scope(self, path: Sequence[str]) -> None:
        """Raise :class:`ScopeError` when the REST API may not write at ``path``
        (under ``data``) because a bundle owns it, with OPA's messages."""
        roots = self._snapshot.roots
        if not roots:
            return
        if not path:
            raise ScopeError("can't write to document root with bundle roots configured")
        for name, rs in sorted(roots.items()):
            for root in rs:
                if root == "":
                    raise ScopeError(f"all paths owned by bundle {_go_quote(name)}")
                parts = root.split("/")
                if all(a == b for a, b in zip(path, parts)):
                    raise ScopeError(f"path {'/'.join(path)} is owned by bundle {_go_quote(name)}")

    # -- policies ------------------------------------------------------------------

    def put_policy(self, policy_id: str, text: str) -> bool:
        """Add or replace the policy ``policy_id``; False when the text is already the same.

        Raises a RegoError (and changes nothing) when it does not parse or compile."""
        with self._write_lock:
            snap = self._snapshot
            if snap.policies.get(policy_id) == text:
                return False
            policies = {**snap.policies, policy_id: text}
            self._snapshot = self._build(policies, snap.data, snap.bundles, parsed=_kept(snap, policies), roots=snap.roots)
            return True

    def delete_policy(self, policy_id: str) -> None:
        """Remove the policy ``policy_id``; KeyError when there is none, a RegoError when the rest does not compile."""
        with self._write_lock:
            snap = self._snapshot
            if policy_id not in snap.policies:
                raise KeyError(policy_id)
            policies = {k: v for k, v in snap.policies.items() if k != policy_id}
            self._snapshot = self._build(policies, snap.data, snap.bundles, parsed=_kept(snap, policies), roots=snap.roots)

    # -- data ------------------------------------------------------------------------

    def write_data(self, ops: Sequence[tuple[str, Sequence[str], Any]], *, make_dirs: bool = False, if_none_match: bool = False) -> bool:
        """Apply the writes ``ops`` (``(op, path, value)``) together, or none of them.

        Raises :class:`~pyrego.server.store.StorageError` for a write the store
        refuses and a RegoError when the new data clashes with the rules.
        ``if_none_match``: leave a document already at the one path alone
        (returns False). ``make_dirs``: create missing parents (PUT)."""
        with self._write_lock:
            snap = self._snapshot
            data = snap.data
            if if_none_match:
                try:
                    store.read(data, ops[0][1])
                    return False
                except store.StorageError:
                    pass
            for op, path, value in ops:
                data = store.write(data, op, path, value, make_dirs=make_dirs)
            self._snapshot = self._build(snap.policies, data, snap.bundles, base=snap, parsed=snap.parsed, roots=snap.roots)
            return True

    # -- plugins and decision logs ---------------------------------------------------------

    def set_plugin_status(self, name: str, state: str, message: str | None = None) -> None:
        """Record plugin ``name``'s state (one of :data:`PLUGIN_STATES`) for the health and status APIs."""
        if state not in PLUGIN_STATES:
            raise ValueError(f"plugin state must be one of {', '.join(PLUGIN_STATES)}, not {state!r}")
        status: dict[str, Any] = {"state": state}
        if message:
            status["message"] = message
        with self._plugins_lock:
            self._plugins = {**self._plugins, name: status}

    def status_report(self) -> dict[str, Any]:
        """OPA's status report (``GET /v1/status``, the console status log): labels,
        bundles (each configured bundle's download and activation status),
        plugins, decision logs' upload status."""
        snap = self._snapshot
        bundles: dict[str, Any] = {name: {"name": name, "active_revision": rev} for name, rev in snap.bundles.items()}
        if self.bundle_status is not None:
            bundles.update(self.bundle_status())
        report: dict[str, Any] = {
            "labels": dict(self.labels),
            "bundles": dict(sorted(bundles.items())),
            "plugins": dict(sorted(self._plugins.items())),
            "metrics": {"prometheus": {}},
        }
        upload_status = getattr(self.decision_logger, "upload_status", None)
        if upload_status is not None:
            report["decision_logs"] = upload_status()
        return report

    def plugin_statuses(self) -> dict[str, dict[str, Any]]:
        """Each plugin's status, by name."""
        return self._plugins

    def log_decision(self, event: dict[str, Any]) -> None:
        """Hand a decision event to the decision logger (when there is one)."""
        if self.decision_logger is not None:
            self.decision_logger.log(event)

    def decision_event(
        self,
        decision_id: str,
        snap: Snapshot,
        *,
        path: str | None = None,
        query: str | None = None,
        input: Any = None,
        has_input: bool = False,
        result: Any = None,
        has_result: bool = False,
        error: dict[str, Any] | None = None,
        metrics: Mapping[str, Any] | None = None,
        requested_by: str = "",
    ) -> dict[str, Any]:
        """OPA's decision event for one evaluation (:func:`pyrego.plugins.logs.make_decision_event`;
        the fields OPA leaves out when empty, left out; the labels are the logger's)."""
        from pyrego.plugins.logs.encode import make_decision_event

        event = make_decision_event(
            path,
            input,
            result,
            has_input=has_input,
            has_result=has_result,
            decision_id=decision_id,
            query=query,
            metrics=metrics,
            bundles=dict(sorted(snap.bundles.items())) or None,
            requested_by=requested_by,
            error=error,
            timestamp=rfc3339_nano(time.time_ns()),
        )
        return {"labels": self.labels, **event}


def rfc3339_nano(ns: int) -> str:
    """A UTC time as Go's RFC3339Nano writes it (trailing zeros of the fraction dropped)."""
    secs, frac = divmod(ns, 1_000_000_000)
    stamp = datetime.datetime.fromtimestamp(secs, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        stamp += "." + f"{frac:09d}".rstrip("0")
    return stamp + "Z"
