"""The decision logger: OPA's ``decision_logs`` plugin.

``log(event)`` runs in the caller's thread, as OPA's ``Log`` runs in the
request's: the drop and mask policies are evaluated (a few microseconds
each), the event is encoded, written to the console and put in the buffer.
Nothing there waits on the network, and nothing raises into the caller.

Uploads run in one background thread, not in an asyncio task: the logger
serves the policy server and in-process ``Engine`` users alike, most of
whom have no event loop; the work is a blocking POST every few minutes; and
a thread with an ``Event`` to wait on gives a clean stop without needing a
loop to stop it from.
"""

from __future__ import annotations

import collections
import json
import logging
import random
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from pyrego.plugins.logs.config import DecisionLogConfig, parse_config
from pyrego.plugins.logs.encode import (
    ChunkBuilder,
    compressed_size_may_exceed,
    encode_event,
    gzip_array,
    rfc3339_nano,
)
from pyrego.plugins.logs.mask import MaskRule, apply_mask, parse_mask_rules
from pyrego.plugins.logs.upload import Uploader, UploadError, retry_delay
from pyrego.runtime.values import UNDEFINED
from pyrego.version import __version__

if TYPE_CHECKING:
    from pyrego.engine import Engine

log = logging.getLogger("pyrego.decision_logs")

#: Counter names (OPA's where OPA has one).
COUNTERS = (
    "events_logged",  # events that passed drop and mask and went to an output
    "events_dropped_by_policy",  # the drop decision was true
    "events_uploaded",  # events in batches the service accepted
    "uploads",  # batches the service accepted
    "upload_errors",  # batches refused or not delivered (they are retried)
    "dropped",  # events lost: buffer full, rate limit, too large to upload
    "mask_errors",  # mask decision failed or malformed: the event is not logged (as OPA)
    "drop_errors",  # drop decision failed: the event is not logged (as OPA)
    "log_errors",  # anything else that went wrong in log()
    "upload_rounds",  # turns of the upload thread (each uploads what is buffered, if anything)
    "decision_logs_dropped_buffer_size_limit_exceeded",
    "decision_logs_dropped_buffer_size_limit_bytes_exceeded",
    "decision_logs_dropped_rate_limit_exceeded",
    "decision_logs_encoding_failure",
    "decision_logs_nd_builtin_cache_dropped",
)

_STATE_OK, _STATE_NOT_READY = "OK", "NOT_READY"


class _RateLimiter:
    """A token bucket: ``rate`` events a second, bursts of ``max(1, rate)``."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.burst = max(1.0, rate)
        self.tokens = self.burst
        self.at = time.monotonic()

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class DecisionLogger:
    """OPA's decision logger: drop and mask policies, console output, batched uploads.

    Build it with :meth:`from_config`; call :meth:`start` once, :meth:`log` per
    decision (thread-safe, never raises), :meth:`stop` at shutdown (uploads
    what is left). :meth:`counters` and :meth:`status` report how it goes."""

    def __init__(
        self,
        config: DecisionLogConfig,
        *,
        engine_provider: Callable[[], Engine | None] | None = None,
        labels: dict[str, str] | None = None,
        console_stream: TextIO | None = None,
    ) -> None:
        """``config``: a checked configuration (:func:`parse_config`). ``engine_provider``:
        returns the engine whose policies hold the drop and mask decisions (the
        current one, after bundle activations), or ``None``. ``labels``: added
        to ``id`` (a new UUID unless given) and ``version``. ``console_stream``:
        where console events go (default: ``sys.stderr`` at each write, as OPA's
        logs go to standard error)."""
        self.config = config
        self._drop_query = config.drop_query
        self._mask_query = config.mask_query
        self._engine_provider = engine_provider
        self.labels: dict[str, str] = {"id": str(uuid.uuid4()), "version": __version__}
        self.labels.update({str(k): str(v) for k, v in (labels or {}).items()})
        self._console_stream = console_stream
        self._console_lock = threading.Lock()
        self._lock = threading.Lock()  # buffer, counters, status
        self._upload_lock = threading.Lock()  # one upload at a time
        self._buffer: collections.deque[bytes] = collections.deque()
        self._buffer_bytes = 0
        self._counters = dict.fromkeys(COUNTERS, 0)
        self._limiter = _RateLimiter(config.max_decisions_per_second) if config.max_decisions_per_second else None
        self._chunks = ChunkBuilder(config.upload_size_limit_bytes)
        self._uploader = Uploader(config.service, config.resource) if config.service is not None else None
        self._state = _STATE_NOT_READY
        self._upload_status: dict[str, Any] = {}
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- construction -------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        config: dict[str, Any] | None,
        services: Any = None,
        *,
        engine_provider: Callable[[], Engine | None] | None = None,
        labels: dict[str, str] | None = None,
        console_stream: TextIO | None = None,
    ) -> DecisionLogger | None:
        """A logger for OPA's ``decision_logs`` section and ``services`` (a mapping
        name -> settings, or a list with names), or ``None`` when the section asks
        for nothing (no service, no console output; OPA then starts no plugin).
        :class:`DecisionLogConfigError` for what OPA refuses, with OPA's message."""
        parsed = parse_config(config, services)
        if parsed is None:
            return None
        return cls(parsed, engine_provider=engine_provider, labels=labels, console_stream=console_stream)

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> None:
        """Start the upload thread (none without a service) and report ``OK``.
        A stopped logger does not start again (make a new one); after :meth:`stop`
        events are still taken, but only :meth:`flush` uploads them."""
        with self._lock:
            if self._thread is not None or self._stopping:
                return
            self._state = _STATE_OK
            if self._uploader is None:
                return
            self._thread = threading.Thread(target=self._loop, name="pyrego-decision-logs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the upload thread, then upload what is buffered, retrying until it
        is all accepted or ``timeout`` seconds have passed (OPA's flush on a
        graceful shutdown). True when nothing is left behind."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = True
        if self._uploader is not None:
            left = False
            while True:
                ok = self._upload_once(deadline)
                if ok is not False:
                    left = True
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.error("Plugin stopped with decisions possibly still in buffer.")
                    break
                time.sleep(min(1.0, remaining))
            if thread is None or not thread.is_alive():  # (else its request still holds the client)
                self._uploader.close()
        with self._lock:
            self._state = _STATE_NOT_READY
        return left

    def __enter__(self) -> DecisionLogger:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- logging ------------------------------------------------------------

    def log(self, event: dict[str, Any]) -> None:
        """Log one decision event (see :func:`make_decision_event`): drop and mask
        policies, console, buffer. Thread-safe, does not wait on the network, and
        never raises: a failure is counted and logged on ``pyrego.decision_logs``."""
        try:
            self._log(event)
        except Exception as exc:  # the caller's request must not fail because of its log
            with self._lock:
                self._counters["log_errors"] += 1
            log.error("Decision log failed: %s: %s", type(exc).__name__, exc)

    def _log(self, event: dict[str, Any]) -> None:
        ev = dict(event)
        ev["labels"] = dict(self.labels)
        if not ev.get("decision_id"):
            ev["decision_id"] = str(uuid.uuid4())
        if not ev.get("timestamp"):
            ev["timestamp"] = rfc3339_nano()
        if not self.config.nd_builtin_cache:
            ev.pop("nd_builtin_cache", None)

        engine = self._engine_provider() if self._engine_provider is not None else None
        rules = None
        if engine is not None:
            # The policies see the event before its metrics and error are added (as OPA's).
            policy_input = {k: v for k, v in ev.items() if k not in ("metrics", "error")}
            try:
                drop = engine.eval_rule(self._drop_query, input=policy_input) is True
            except Exception as exc:
                with self._lock:
                    self._counters["drop_errors"] += 1
                log.error("Log drop decision failed: %s.", exc)
                return
            if drop:
                with self._lock:
                    self._counters["events_dropped_by_policy"] += 1
                return
            try:
                rules = self._mask_rules(engine, policy_input)
            except Exception as exc:  # (MaskError: a malformed rule set)
                with self._lock:
                    self._counters["mask_errors"] += 1
                log.error("Log event masking failed: %s.", exc)
                return

        raw = encode_event(ev)
        if rules:
            private = json.loads(raw)  # a copy of its own: masking changes it
            apply_mask(rules, private)
            raw = encode_event(private)
            ev = private

        sent = False
        if self.config.console:
            try:
                self._write_console(raw)
                sent = True
            except Exception as exc:  # (the upload still gets the event)
                with self._lock:
                    self._counters["log_errors"] += 1
                log.error("Failed to log to console: %s.", exc)
        if self._uploader is not None:
            fitting = self._fit(ev, raw)
            if fitting is not None:
                self._push(fitting)
                sent = True
        if sent:
            with self._lock:
                self._counters["events_logged"] += 1

    def _mask_rules(self, engine: Engine, policy_input: dict[str, Any]) -> list[MaskRule] | None:
        """The mask decision's rules, in OPA's order (None: undefined)."""
        value = engine.eval_rule(self._mask_query, input=policy_input)
        if value is UNDEFINED:
            return None
        if isinstance(value, (set, frozenset)) and all(type(m) is str for m in value):
            return parse_mask_rules(sorted(value))  # (strings: OPA's order is theirs)
        # Objects among the rules: their JSON form and OPA's order from a query.
        rs = engine.eval_query(self._mask_query, input=policy_input).get("result") or []
        return parse_mask_rules(rs[0]["expressions"][0]["value"]) if rs else None

    def _fit(self, ev: dict[str, Any], raw: bytes) -> bytes | None:
        """``raw``, or the event without its ND builtin cache, if it fits in one
        upload; ``None`` (counted, as OPA's encoding failure) if it cannot."""
        limit = self.config.upload_size_limit_bytes
        if not compressed_size_may_exceed(len(raw), limit) or len(gzip_array([raw])) <= limit:
            return raw
        if "nd_builtin_cache" in ev:
            smaller = {k: v for k, v in ev.items() if k != "nd_builtin_cache"}
            raw = encode_event(smaller)
            with self._lock:
                self._counters["decision_logs_nd_builtin_cache_dropped"] += 1
            log.error(
                "ND builtins cache dropped from this event to fit under maximum upload size limits. "
                "Increase upload size limit or change usage of non-deterministic builtins."
            )
            if len(gzip_array([raw])) <= limit:
                return raw
        with self._lock:
            self._counters["decision_logs_encoding_failure"] += 1
            self._counters["dropped"] += 1
        log.error(
            "Log encoding failed: received a decision event size (%d) that exceeded the upload_size_limit_bytes (%d).",
            len(raw),
            limit,
        )
        return None

    def _push(self, raw: bytes) -> None:
        with self._lock:
            if self._limiter is not None and not self._limiter.allow():
                self._counters["decision_logs_dropped_rate_limit_exceeded"] += 1
                self._counters["dropped"] += 1
                log.error(
                    "Decision log dropped as rate limit exceeded. Reduce reporting interval or increase rate limit."
                )
                return
            self._buffer.append(raw)
            self._buffer_bytes += len(raw)
            self._trim()

    def _trim(self) -> None:
        """Drop the oldest events while the buffer is over its limit (lock held)."""
        cfg = self.config
        dropped = 0
        if cfg.buffer_type == "event":
            while len(self._buffer) > cfg.buffer_size_limit_events:
                self._buffer_bytes -= len(self._buffer.popleft())
                dropped += 1
            name = "decision_logs_dropped_buffer_size_limit_exceeded"
        else:
            limit = cfg.buffer_size_limit_bytes
            while limit and self._buffer_bytes > limit and self._buffer:
                self._buffer_bytes -= len(self._buffer.popleft())
                dropped += 1
            name = "decision_logs_dropped_buffer_size_limit_bytes_exceeded"
        if dropped:
            self._counters[name] += dropped
            self._counters["dropped"] += dropped
            log.error("Dropped %d events from buffer. Reduce reporting interval or increase buffer size.", dropped)

    def _write_console(self, raw: bytes) -> None:
        """One JSON line as OPA's console logger writes it: the event's fields with
        ``level``, ``msg``, ``time`` and ``type``, keys sorted."""
        record = json.loads(raw)
        record["level"] = "info"
        record["msg"] = "Decision Log"
        record["time"] = datetime.now().astimezone().isoformat(timespec="seconds")
        record["type"] = "openpolicyagent.org/decision_logs"
        line = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        stream = self._console_stream if self._console_stream is not None else sys.stderr
        with self._console_lock:
            stream.write(line + "\n")
            stream.flush()

    # -- uploading ----------------------------------------------------------

    def flush(self) -> bool | None:
        """Upload what is buffered now, in the caller's thread (OPA's manual
        trigger). True: all accepted; False: an upload failed (the rest stays
        buffered); None: nothing to upload or no service."""
        if self._uploader is None:
            return None
        return self._upload_once()

    def _upload_once(self, deadline: float | None = None) -> bool | None:
        """Upload the buffer's events in batches; what fails goes back in front.
        ``deadline`` (monotonic): give up then, waiting for the lock or the service."""
        uploader = self._uploader
        assert uploader is not None
        if deadline is None:
            self._upload_lock.acquire()
        elif not self._upload_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return False
        try:
            return self._upload_locked(uploader, deadline)
        finally:
            self._upload_lock.release()

    def _upload_locked(self, uploader: Uploader, deadline: float | None) -> bool | None:
        """:meth:`_upload_once` with the upload lock held."""
        with self._lock:
            events = list(self._buffer)
            self._buffer.clear()
            self._buffer_bytes = 0
        if not events:
            return None
        batches, oversized = self._chunks.chunks(events)
        if oversized:
            with self._lock:
                self._counters["decision_logs_encoding_failure"] += len(oversized)
                self._counters["dropped"] += len(oversized)
        failed: UploadError | None = None
        left: list[bytes] = []
        for body, part in batches:
            if failed is None:
                try:
                    uploader.post(body, None if deadline is None else deadline - time.monotonic())
                except UploadError as err:
                    failed = err
                except Exception as err:  # a bug in the client must not kill the loop
                    failed = UploadError(f"log upload failed: {type(err).__name__}: {err}")
                else:
                    with self._lock:
                        self._counters["uploads"] += 1
                        self._counters["events_uploaded"] += len(part)
                    continue
            left.extend(part)
        with self._lock:
            if failed is None:
                self._upload_status = {}
                return True
            self._counters["upload_errors"] += 1
            status: dict[str, Any] = {"code": "decision_log_error", "message": str(failed)}
            if failed.http_code is not None:
                status["http_code"] = str(failed.http_code)
            self._upload_status = status
            # Back in front, oldest first: events that came meanwhile stay after them.
            self._buffer.extendleft(reversed(left))
            self._buffer_bytes += sum(len(e) for e in left)
            self._trim()
        log.error("%s.", failed)
        return False

    def _loop(self) -> None:
        """Upload, then wait: min..max delay after a success (or an empty buffer),
        OPA's backoff after a failure; until :meth:`stop` wakes it."""
        cfg = self.config
        retry = 0
        while True:
            with self._lock:
                if self._stopping:
                    return
            try:
                ok = self._upload_once()
            except Exception as exc:  # never let the thread die
                log.error("Decision log upload failed: %s", exc)
                ok = False
            with self._lock:
                self._counters["upload_rounds"] += 1
            if ok is False:
                delay = retry_delay(retry, cfg.max_delay_seconds)
            else:
                delay = cfg.min_delay_seconds + (cfg.max_delay_seconds - cfg.min_delay_seconds) * random.random()
            if self._wake.wait(delay):
                with self._lock:
                    if self._stopping:
                        return
                self._wake.clear()
            else:
                retry = retry + 1 if ok is False else 0

    # -- reporting ----------------------------------------------------------

    def request_context(self, headers: Any) -> dict[str, Any] | None:
        """The event's ``request_context`` for a request's ``headers`` (a mapping
        name -> value or list of values, or anything with ``get_all``/``getlist``,
        matched without regard to case): the headers named in
        ``request_context.http.headers``, as OPA records them; None if none."""
        wanted = self.config.request_headers
        if not wanted or headers is None:
            return None
        found: dict[str, list[str]] = {}
        getter = getattr(headers, "get_all", None) or getattr(headers, "getlist", None)
        lowered = None
        for name in wanted:
            if getter is not None:
                values = list(getter(name) or [])
            else:
                if lowered is None:
                    lowered = {str(k).lower(): v for k, v in dict(headers).items()}
                value = lowered.get(name.lower())
                values = [] if value is None else [value] if isinstance(value, str) else list(value)
            if values:
                found[name] = [str(v) for v in values]
        return {"http": {"headers": found}} if found else None

    def counters(self) -> dict[str, int]:
        """A snapshot of the counters (:data:`COUNTERS`), plus ``buffered`` (events
        waiting) and ``buffered_bytes``."""
        with self._lock:
            out = dict(self._counters)
            out["buffered"] = len(self._buffer)
            out["buffered_bytes"] = self._buffer_bytes
        return out

    def status(self) -> dict[str, Any]:
        """OPA's plugin status: ``{"state": "OK"}`` while started, ``NOT_READY``
        before :meth:`start` and after :meth:`stop`; with a ``message`` when the
        last upload failed (OPA reports that in the status API's
        ``decision_logs`` part: see :meth:`upload_status`)."""
        with self._lock:
            out: dict[str, Any] = {"state": self._state}
            if self._upload_status:
                out["message"] = self._upload_status["message"]
        return out

    def upload_status(self) -> dict[str, Any]:
        """The status API's ``decision_logs`` part: empty after a good upload,
        else ``code`` (``decision_log_error``), ``message`` and ``http_code``."""
        with self._lock:
            return dict(self._upload_status)

    def wake(self) -> None:
        """Ask the upload thread to upload now rather than at its next turn."""
        self._wake.set()
