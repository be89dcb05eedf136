"""Decision logs (OPA's ``decision_logs`` plugin): events, drop and mask
policies, console output, and uploads to a real HTTP collector on 127.0.0.1
that decompresses and records every batch it is sent."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pyrego import Engine
from pyrego.errors import EvalConflictError
from pyrego.plugins.logs import (
    DecisionLogConfigError,
    DecisionLogger,
    MaskError,
    apply_mask,
    logged_eval,
    make_decision_event,
    parse_config,
    parse_mask_rules,
    rfc3339_nano,
)
from pyrego.plugins.logs.encode import FIELD_ORDER, ChunkBuilder
from pyrego.plugins.logs.upload import retry_delay

# -- the collector ---------------------------------------------------------------


class Collector:
    """An HTTP service that takes decision log uploads: each POST's path, headers,
    compressed size and events are recorded. ``script``: the statuses of the first
    POSTs (then 200); ``fail_every``: every n-th POST answers 500; ``delay``:
    seconds before each answer."""

    def __init__(
        self, port: int = 0, script: list[int] | None = None, fail_every: int | None = None, delay: float = 0.0
    ) -> None:
        self.port = port
        self.delay = delay
        self.script = list(script or [])
        self.fail_every = fail_every
        self.lock = threading.Lock()
        self.batches: list[dict[str, Any]] = []
        self.attempts: list[tuple[float, int]] = []  # (monotonic time, status) of every POST
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> Collector:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(collector.delay)
                with collector.lock:
                    n = len(collector.attempts) + 1
                    if collector.script:
                        status = collector.script.pop(0)
                    elif collector.fail_every and n % collector.fail_every == 0:
                        status = 500
                    else:
                        status = 200
                    collector.attempts.append((time.monotonic(), status))
                    if status == 200:
                        collector.batches.append(
                            {
                                "path": self.path,
                                "headers": {k.lower(): v for k, v in self.headers.items()},
                                "size": len(body),
                                "events": json.loads(gzip.decompress(body)),
                            }
                        )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [e for b in self.batches for e in b["events"]]


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector().start()
    yield c
    c.stop()


def wait_for(cond: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_logger(
    url: str,
    *,
    reporting: dict[str, Any] | None = None,
    engine: Engine | None = None,
    **extra: Any,
) -> DecisionLogger:
    rep = {"min_delay_seconds": 0.05, "max_delay_seconds": 0.2}
    rep.update(reporting or {})
    cfg = {"service": "collector", "resource": "/logs/test", "reporting": rep, **extra}
    services = {"collector": {"url": url, "credentials": {"bearer": {"token": "s3cret"}}}}
    logger = DecisionLogger.from_config(
        cfg, services, engine_provider=lambda: engine, labels={"app": "tests", "id": "instance-1"}
    )
    assert logger is not None
    return logger


AUTHZ = """package authz
default allow := false
allow if input.user == "bob"
roles contains r if some r in input.roles
"""

# -- the event -------------------------------------------------------------------

RFC3339_NANO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")


def test_event_shape_as_uploaded(collector: Collector) -> None:
    logger = make_logger(collector.url)
    event = make_decision_event(
        "authz/allow",
        {"user": "bob"},
        True,
        decision_id="d-1",
        metrics={"timer_rego_query_eval_ns": 1200},
        bundles={"authz": "rev-7", "other": {"revision": "r2"}},
        requested_by="127.0.0.1:5555",
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        req_id=4,
    )
    logger.log(event)
    logger.log(make_decision_event(query="x := data.authz.allow", input=None, result=[{"x": True}]))
    assert logger.flush() is True
    [batch] = collector.batches
    assert batch["path"] == "/logs/test"
    assert batch["headers"]["content-encoding"] == "gzip"
    assert batch["headers"]["content-type"] == "application/json"
    assert batch["headers"]["authorization"] == "Bearer s3cret"
    first, second = batch["events"]
    assert list(first) == [
        "labels",
        "decision_id",
        "trace_id",
        "span_id",
        "bundles",
        "path",
        "input",
        "result",
        "requested_by",
        "timestamp",
        "metrics",
        "req_id",
    ]
    assert list(first) == [k for k in FIELD_ORDER if k in first]
    assert first["labels"] == {"id": "instance-1", "version": first["labels"]["version"], "app": "tests"}
    assert first["decision_id"] == "d-1"
    assert first["bundles"] == {"authz": {"revision": "rev-7"}, "other": {"revision": "r2"}}
    assert (first["path"], first["input"], first["result"]) == ("authz/allow", {"user": "bob"}, True)
    assert first["metrics"] == {"timer_rego_query_eval_ns": 1200}
    assert RFC3339_NANO.match(first["timestamp"]), first["timestamp"]
    assert second["query"] == "x := data.authz.allow" and "path" not in second and "input" not in second
    assert second["result"] == [{"x": True}]
    assert re.fullmatch(r"[0-9a-f-]{36}", second["decision_id"])
    counters = logger.counters()
    assert counters["events_logged"] == 2 and counters["events_uploaded"] == 2 and counters["uploads"] == 1


def test_timestamps_as_opa_writes_them(oracle: Any) -> None:
    """RFC 3339 with nanoseconds, trailing zeros dropped, as OPA's time.format writes it."""
    for ns in (1559592436939402185, 1559592436000000000, 1559592436100000000, 1559592436000000001, 0):
        r = oracle.evaluate({}, f"x := time.format({ns})")
        assert rfc3339_nano(ns) == r.bindings[0]["x"], ns
    assert RFC3339_NANO.match(rfc3339_nano())


def test_undefined_result_and_null_input() -> None:
    event = make_decision_event("a/b", None, None, has_input=True, has_result=False)
    assert event["input"] is None and "result" not in event


# -- masking ---------------------------------------------------------------------

DOC_INPUT = {"resource": "user", "name": "bob", "password": "passw0rd"}

DOC_ERASE = """package system.log

mask contains "/input/password" if {
	input.input.resource == "user"
}

mask contains "/input/ssn"
"""

DOC_UPSERT = """package system.log

mask contains {"op": "upsert", "path": "/input/password", "value": "**REDACTED**"} if {
	input.input.password
}

mask contains "/input/ssn"
"""


def console_logger(engine: Engine | None, **cfg: Any) -> tuple[DecisionLogger, io.StringIO]:
    stream = io.StringIO()
    logger = DecisionLogger.from_config(
        {"console": True, **cfg}, None, engine_provider=lambda: engine, console_stream=stream
    )
    assert logger is not None
    return logger, stream


def logged_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def masked(policy: str, event: dict[str, Any]) -> dict[str, Any]:
    engine = Engine()
    engine.add_policy("log.rego", policy)
    logger, stream = console_logger(engine)
    logger.log(event)
    [line] = logged_lines(stream)
    return line


def test_documented_erase_example() -> None:
    """OPA's docs: the password is erased and recorded; a pointer to undefined data
    (``/input/ssn``, no ssn in the input) is skipped and, as OPA's code does, not recorded."""
    line = masked(DOC_ERASE, make_decision_event("system/main", DOC_INPUT, True))
    assert line["input"] == {"name": "bob", "resource": "user"}
    assert line["erased"] == ["/input/password"]
    assert "masked" not in line
    with_ssn = masked(DOC_ERASE, make_decision_event("system/main", {**DOC_INPUT, "ssn": "1"}, True))
    assert with_ssn["erased"] == ["/input/password", "/input/ssn"]
    assert with_ssn["input"] == {"name": "bob", "resource": "user"}
    other = masked(DOC_ERASE, make_decision_event("system/main", {**DOC_INPUT, "resource": "car"}, True))
    assert other["input"]["password"] == "passw0rd" and "erased" not in other


def test_documented_upsert_example() -> None:
    line = masked(DOC_UPSERT, make_decision_event("system/main", {**DOC_INPUT, "ssn": "1"}, True))
    assert line["erased"] == ["/input/ssn"]
    assert line["masked"] == ["/input/password"]
    assert line["input"] == {"name": "bob", "resource": "user", "password": "**REDACTED**"}


def test_mask_rule_set_order_is_opas(oracle: Any) -> None:
    """The erased/masked lists follow the rule set's order: the value OPA gives the set."""
    policy = """package system.log
mask contains "/input/z"
mask contains "/input/a"
mask contains {"op": "upsert", "path": "/input/m", "value": 1}
mask contains {"op": "upsert", "path": "/input/b", "value": 2}
mask contains "/result/x"
"""
    event = make_decision_event("p/q", {"z": 1, "a": 2}, {"x": 1, "y": 2})
    engine = Engine()
    engine.add_policy("log.rego", policy)
    ours = engine.eval_query("data.system.log.mask", input=event)["result"][0]["expressions"][0]["value"]
    theirs = oracle.evaluate({"log.rego": policy}, "x := data.system.log.mask", input=event).bindings[0]["x"]
    assert ours == theirs
    line = masked(policy, event)
    assert line["erased"] == ["/input/a", "/input/z", "/result/x"]
    assert line["masked"] == ["/input/b", "/input/m"]
    assert line["input"] == {"b": 2, "m": 1} and line["result"] == {"y": 2}


def test_string_mask_rules_in_opas_order(oracle: Any) -> None:
    policy = 'package system.log\nmask contains x if some x in ["/input/é", "/input/b", "/input/B", "/input/a~", "/input/a"]\n'
    event = make_decision_event("p/q", {"é": 1, "b": 2, "B": 3, "a~": 4, "a": 5, "keep": 6}, True)
    theirs = oracle.evaluate({"log.rego": policy}, "x := data.system.log.mask", input=event).bindings[0]["x"]
    line = masked(policy, event)
    # (é is path-escaped before the lookup, as OPA does: not erased, not recorded.)
    assert line["erased"] == [p for p in theirs if p != "/input/é"]
    assert line["input"] == {"é": 1, "keep": 6}


def test_engine_values_are_logged_as_json() -> None:
    engine = Engine()
    engine.add_policy("a.rego", 'package a\ns contains {"x": {1, 2}}\ns contains [2, "b"]\ns contains "a"\n')
    value = engine.eval_rule("a.s")
    logger, stream = console_logger(None)
    logger.log(make_decision_event("a/s", {"k": (1, 2)}, value))
    [line] = logged_lines(stream)
    assert line["input"] == {"k": [1, 2]}
    assert sorted(map(json.dumps, line["result"])) == sorted(map(json.dumps, ["a", [2, "b"], {"x": [1, 2]}]))


def mask(rules: list[Any], event: dict[str, Any]) -> dict[str, Any]:
    ev = json.loads(json.dumps(event))
    apply_mask(parse_mask_rules(rules), ev)
    return ev


def test_mask_nested_and_array_indexes() -> None:
    ev = {
        "input": {"users": [{"name": "a", "pw": 1}, {"name": "b", "pw": 2}], "deep": {"x": {"y": 1, "z": 2}}},
        "result": [1, 2, 3],
    }
    out = mask(["/input/users/0/pw", "/input/users/1", "/input/deep/x/y"], ev)
    assert out["input"] == {"users": [{"name": "a"}], "deep": {"x": {"z": 2}}}
    assert out["erased"] == ["/input/users/0/pw", "/input/users/1", "/input/deep/x/y"]
    # Out of range, not a number, through a scalar, missing: skipped, not recorded.
    out = mask(["/input/users/5", "/input/users/x", "/input/deep/x/y/q", "/input/nope/a"], ev)
    assert out["input"] == ev["input"] and "erased" not in out
    # An element of an array at the root of the masked part: OPA leaves it.
    out = mask(["/result/0"], ev)
    assert out["result"] == [1, 2, 3] and "erased" not in out
    # A whole part.
    out = mask(["/result", {"op": "remove", "path": "/input/deep"}], ev)
    assert "result" not in out and out["input"] == {"users": ev["input"]["users"]}
    assert out["erased"] == ["/result", "/input/deep"]


def test_mask_upsert() -> None:
    ev = {"input": {"a": {"b": 1}, "xs": [0, 1], "s": "text"}, "result": True}
    rules = [
        {"op": "upsert", "path": "/input/a/b", "value": "X"},
        {"op": "upsert", "path": "/input/new/deeper/c", "value": [1]},
        {"op": "upsert", "path": "/input/xs/1", "value": "one"},
        {"op": "upsert", "path": "/input/xs/5", "value": "past the end"},
        {"op": "upsert", "path": "/input/s/t", "value": 0},
        {"op": "upsert", "path": "/result/x", "value": 0},
    ]
    out = mask(rules, ev)
    assert out["input"] == {"a": {"b": "X"}, "xs": [0, "one"], "s": "text", "new": {"deeper": {"c": [1]}}}
    assert out["result"] is True
    assert out["masked"] == ["/input/a/b", "/input/new/deeper/c", "/input/xs/1"]
    whole = mask([{"op": "upsert", "path": "/input", "value": {"replaced": True}}], ev)
    assert whole["input"] == {"replaced": True} and whole["masked"] == ["/input"]
    # A part the event does not have is left alone (no input: nothing to upsert into).
    none = mask([{"op": "upsert", "path": "/input/a", "value": 1}], {"result": 1})
    assert "input" not in none and "masked" not in none


def test_mask_pointers_are_path_escaped_as_opa() -> None:
    """OPA escapes each key as a URL path segment before looking it up: a key with
    a space cannot be matched, ``~1`` is not a slash, ``:@$&+=`` stay as they are."""
    ev = {"input": {"a b": 1, "a~1b": 2, "k:@$&+=": 3, "ü": 4}}
    out = mask(["/input/a b", "/input/a~1b", "/input/k:@$&+=", "/input/ü"], ev)
    assert out["input"] == {"a b": 1, "ü": 4}
    assert out["erased"] == ["/input/a~1b", "/input/k:@$&+="]


def test_malformed_mask_rules() -> None:
    for rules, message in [
        ("/input/x", "unexpected rule format"),
        (["/data/x"], "mask prefix not allowed: data"),
        (["input/x"], "mask must be slash-prefixed"),
        ([""], "mask must be non-empty"),
        ([5], "invalid mask rule format encountered"),
        ([{"path": "/input/x"}], "mask op is not supported: "),
        ([{"op": "drop", "path": "/input/x"}], "mask op is not supported: drop"),
        ([{"op": 1, "path": "/input/x"}], 'invalid "op" value'),
        ([{"op": "remove"}], "mask must be non-empty"),
        (["/input/a%zz"], "invalid URL escape"),
    ]:
        with pytest.raises(MaskError, match=re.escape(message)):
            parse_mask_rules(rules)


def test_malformed_mask_decision_loses_the_event_as_opa() -> None:
    engine = Engine()
    engine.add_policy("log.rego", 'package system.log\nmask contains "/data/secret"\n')
    logger, stream = console_logger(engine)
    logger.log(make_decision_event("a/b", {"x": 1}, True))
    assert stream.getvalue() == ""
    c = logger.counters()
    assert c["mask_errors"] == 1 and c["events_logged"] == 0


def test_mask_does_not_change_the_callers_values() -> None:
    engine = Engine()
    engine.add_policy("log.rego", DOC_UPSERT)
    logger, stream = console_logger(engine)
    inp = {**DOC_INPUT}
    event = make_decision_event("a/b", inp, {"k": "v"})
    logger.log(event)
    assert inp == DOC_INPUT and event["input"] == DOC_INPUT
    assert logged_lines(stream)[0]["input"]["password"] == "**REDACTED**"


def test_policies_see_the_event_without_metrics() -> None:
    engine = Engine()
    engine.add_policy(
        "log.rego",
        'package system.log\ndrop if input.metrics\nmask contains "/input/seen_labels" if input.labels.app == "t"\n',
    )
    stream = io.StringIO()
    logger = DecisionLogger.from_config(
        {"console": True}, None, engine_provider=lambda: engine, labels={"app": "t"}, console_stream=stream
    )
    assert logger is not None
    logger.log(make_decision_event("a/b", {"seen_labels": 1}, True, metrics={"timer_x_ns": 1}))
    [line] = logged_lines(stream)
    assert line["metrics"] == {"timer_x_ns": 1} and line["erased"] == ["/input/seen_labels"]


# -- dropping --------------------------------------------------------------------


def test_drop_policy() -> None:
    engine = Engine()
    engine.add_policy(
        "log.rego", 'package system.log\ndrop if {\n  input.path == "kafka/allow"\n  input.result == true\n}\n'
    )
    logger, stream = console_logger(engine)
    logger.log(make_decision_event("kafka/allow", {}, True))
    logger.log(make_decision_event("kafka/allow", {}, False))
    logger.log(make_decision_event("other/allow", {}, True))
    assert [(e["path"], e["result"]) for e in logged_lines(stream)] == [("kafka/allow", False), ("other/allow", True)]
    assert logger.counters()["events_dropped_by_policy"] == 1


def test_drop_only_on_true_and_errors_lose_the_event() -> None:
    engine = Engine()
    engine.add_policy(
        "log.rego",
        "package system.log\n"
        'drop := "yes" if input.path == "a/yes"\n'
        'drop := x if { input.path == "a/err"; some x in [true, false] }\n',
    )
    logger, stream = console_logger(engine)
    logger.log(make_decision_event("a/yes", {}, 1))
    logger.log(make_decision_event("a/err", {}, 2))
    assert [e["path"] for e in logged_lines(stream)] == ["a/yes"]
    assert logger.counters()["drop_errors"] == 1


def test_configured_decision_paths() -> None:
    engine = Engine()
    engine.add_policy(
        "log.rego",
        'package custom\nmymask contains "/input/pw"\ndrop_it if input.input.skip\n',
    )
    logger, stream = console_logger(engine, mask_decision="custom/mymask", drop_decision="/custom/drop_it")
    logger.log(make_decision_event("a/b", {"pw": 1, "x": 2}, True))
    logger.log(make_decision_event("a/b", {"skip": True}, True))
    [line] = logged_lines(stream)
    assert line["input"] == {"x": 2} and line["erased"] == ["/input/pw"]


# -- console ---------------------------------------------------------------------


def test_console_lines(capsys: pytest.CaptureFixture[str]) -> None:
    logger = DecisionLogger.from_config({"console": True}, None, labels={"app": "c"})
    assert logger is not None
    logger.start()
    for i in range(3):
        logger.log(make_decision_event("a/b", {"i": i}, i % 2 == 0, decision_id=f"id-{i}"))
    logger.stop()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3
    records = [json.loads(line) for line in lines]
    for i, r in enumerate(records):
        assert r["type"] == "openpolicyagent.org/decision_logs" and r["msg"] == "Decision Log" and r["level"] == "info"
        assert (r["decision_id"], r["input"], r["result"], r["labels"]["app"]) == (f"id-{i}", {"i": i}, i % 2 == 0, "c")
        assert list(r) == sorted(r)


# -- batching --------------------------------------------------------------------


def noisy(i: int, size: int = 120) -> dict[str, Any]:
    return {"i": i, "blob": base64.b64encode(os.urandom(size)).decode()}


def test_batches_stay_under_the_upload_limit(collector: Collector) -> None:
    limit = 2048
    logger = make_logger(collector.url, reporting={"upload_size_limit_bytes": limit})
    for i in range(300):
        logger.log(make_decision_event("a/b", noisy(i), True, decision_id=f"d{i}"))
    assert logger.flush() is True
    assert len(collector.batches) > 10
    assert all(b["size"] <= limit for b in collector.batches)
    assert [e["decision_id"] for e in collector.events()] == [f"d{i}" for i in range(300)]
    # Packed well: the batches are not much smaller than the limit (the last aside).
    sizes = [b["size"] for b in collector.batches[:-1]]
    assert sum(sizes) / len(sizes) > limit * 0.6


def test_chunk_builder_halves_batches_until_they_fit() -> None:
    events = [json.dumps(noisy(i, 300)).encode() for i in range(50)]
    builder = ChunkBuilder(3000)
    builder.ratio = 50.0  # a wild guess: the first batch is far too big
    batches, oversized = builder.chunks(events)
    assert not oversized
    assert all(len(data) <= 3000 for data, _ in batches)
    assert [e for _, part in batches for e in part] == events
    assert [json.loads(gzip.decompress(d)) for d, _ in batches] == [[json.loads(e) for e in p] for _, p in batches]


def test_oversized_event_is_dropped_as_opa(collector: Collector) -> None:
    logger = make_logger(collector.url, reporting={"upload_size_limit_bytes": 1000})
    logger.log(make_decision_event("a/b", noisy(0, 3000), True, decision_id="big"))
    logger.log(make_decision_event("a/b", {"small": 1}, True, decision_id="small"))
    assert logger.flush() is True
    assert [e["decision_id"] for e in collector.events()] == ["small"]
    c = logger.counters()
    assert c["decision_logs_encoding_failure"] == 1 and c["dropped"] == 1


def test_oversized_nd_builtin_cache_is_dropped_first(collector: Collector) -> None:
    logger = make_logger(collector.url, reporting={"upload_size_limit_bytes": 1000}, nd_builtin_cache=True)
    cache = {"http.send": [[{"url": "x"}, noisy(0, 3000)]]}
    logger.log(make_decision_event("a/b", {"x": 1}, True, decision_id="nd", nd_builtin_cache=cache))
    logger.log(
        make_decision_event("a/b", {"x": 2}, True, decision_id="nd-small", nd_builtin_cache={"time.now_ns": [[[], 1]]})
    )
    assert logger.flush() is True
    first, second = collector.events()
    assert first["decision_id"] == "nd" and "nd_builtin_cache" not in first and first["input"] == {"x": 1}
    assert second["nd_builtin_cache"] == {"time.now_ns": [[[], 1]]}
    assert logger.counters()["decision_logs_nd_builtin_cache_dropped"] == 1


def test_nd_builtin_cache_left_out_unless_configured(collector: Collector) -> None:
    logger = make_logger(collector.url)
    logger.log(make_decision_event("a/b", {}, True, nd_builtin_cache={"time.now_ns": [[[], 1]]}))
    logger.flush()
    assert "nd_builtin_cache" not in collector.events()[0]


# -- failures, retries, buffer ---------------------------------------------------


def test_retry_delay_is_opas_backoff() -> None:
    assert retry_delay(0, 600) == 0.1
    for retries, base in [(1, 0.16), (2, 0.256), (5, 0.1 * 1.6**5)]:
        for _ in range(50):
            assert base * 0.8 <= retry_delay(retries, 600) <= base * 1.2
    for _ in range(50):
        assert 0.8 * 2 <= retry_delay(40, 2) <= 2 * 1.2


def test_retries_with_backoff_until_the_collector_recovers() -> None:
    collector = Collector(script=[500, 500, 500, 503]).start()
    try:
        logger = make_logger(collector.url, reporting={"min_delay_seconds": 0.05, "max_delay_seconds": 5})
        for i in range(20):
            logger.log(make_decision_event("a/b", {"i": i}, True, decision_id=f"d{i}"))
        logger.start()
        wait_for(lambda: len(collector.events()) == 20)
        assert sorted(e["decision_id"] for e in collector.events()) == sorted(f"d{i}" for i in range(20))
        statuses = [s for _, s in collector.attempts]
        assert statuses[:5] == [500, 500, 500, 503, 200]
        # Waits between failed attempts follow OPA's backoff (lower bounds: a wait is never shorter).
        times = [t for t, _ in collector.attempts[:5]]
        gaps = [b - a for a, b in zip(times, times[1:])]
        for gap, least in zip(gaps, [0.1, 0.16 * 0.8, 0.256 * 0.8, 0.4096 * 0.8]):
            assert gap >= least * 0.95, gaps
        c = logger.counters()
        assert c["upload_errors"] == 4 and c["events_uploaded"] == 20 and c["buffered"] == 0
        assert logger.upload_status() == {}
        logger.stop()
    finally:
        collector.stop()


def test_upload_status_reports_the_failure(collector: Collector) -> None:
    collector.script = [500]
    logger = make_logger(collector.url, reporting={"min_delay_seconds": 300, "max_delay_seconds": 600})
    logger.start()
    wait_for(lambda: logger.counters()["upload_rounds"] == 1)  # (its first turn, with nothing to upload)
    logger.log(make_decision_event("a/b", {}, True))
    assert logger.flush() is False
    assert logger.upload_status() == {
        "code": "decision_log_error",
        "message": "log upload failed, server replied with HTTP 500 Internal Server Error",
        "http_code": "500",
    }
    assert logger.status()["state"] == "OK" and "500" in logger.status()["message"]
    assert logger.counters()["buffered"] == 1
    assert logger.flush() is True and logger.upload_status() == {}
    logger.stop()
    assert logger.status() == {"state": "NOT_READY"}


def test_collector_down_then_up() -> None:
    port = free_port()
    logger = make_logger(f"http://127.0.0.1:{port}", reporting={"min_delay_seconds": 0.05, "max_delay_seconds": 0.3})
    logger.start()
    for i in range(30):
        logger.log(make_decision_event("a/b", {"i": i}, True, decision_id=f"d{i}"))
    wait_for(lambda: logger.counters()["upload_errors"] >= 3)
    assert logger.upload_status()["code"] == "decision_log_error" and "http_code" not in logger.upload_status()
    collector = Collector(port=port).start()
    try:
        for i in range(30, 40):
            logger.log(make_decision_event("a/b", {"i": i}, True, decision_id=f"d{i}"))
        wait_for(lambda: len(collector.events()) == 40)
        assert sorted(e["decision_id"] for e in collector.events()) == sorted(f"d{i}" for i in range(40))
        assert logger.stop(timeout=5) is True
    finally:
        collector.stop()


def test_event_buffer_drops_the_oldest(collector: Collector) -> None:
    logger = make_logger(collector.url, reporting={"buffer_type": "event", "buffer_size_limit_events": 10})
    for i in range(25):
        logger.log(make_decision_event("a/b", {"i": i}, True, decision_id=f"d{i}"))
    c = logger.counters()
    assert c["buffered"] == 10 and c["dropped"] == 15
    assert c["decision_logs_dropped_buffer_size_limit_exceeded"] == 15
    assert logger.flush() is True
    assert [e["decision_id"] for e in collector.events()] == [f"d{i}" for i in range(15, 25)]


def test_size_buffer_drops_the_oldest(collector: Collector) -> None:
    one = len(json.dumps(make_decision_event("a/b", {"i": 10}, True, decision_id="d10")))
    logger = make_logger(collector.url, reporting={"buffer_size_limit_bytes": one * 5 + 200})
    for i in range(10, 30):
        logger.log(make_decision_event("a/b", {"i": i}, True, decision_id=f"d{i}"))
    c = logger.counters()
    assert c["buffered_bytes"] <= one * 5 + 200
    assert c["decision_logs_dropped_buffer_size_limit_bytes_exceeded"] == c["dropped"] == 20 - c["buffered"]
    assert logger.flush() is True
    assert [e["decision_id"] for e in collector.events()] == [f"d{i}" for i in range(30 - c["buffered"], 30)]


def test_failed_batches_go_back_in_front_and_count_against_the_buffer(collector: Collector) -> None:
    collector.script = [500]
    logger = make_logger(collector.url, reporting={"buffer_type": "event", "buffer_size_limit_events": 6})
    for i in range(4):
        logger.log(make_decision_event("a/b", {}, True, decision_id=f"old{i}"))
    assert logger.flush() is False
    for i in range(4):
        logger.log(make_decision_event("a/b", {}, True, decision_id=f"new{i}"))
    assert logger.counters()["dropped"] == 2
    assert logger.flush() is True
    assert [e["decision_id"] for e in collector.events()] == ["old2", "old3", "new0", "new1", "new2", "new3"]


def test_rate_limit() -> None:
    logger = make_logger("http://127.0.0.1:1", reporting={"max_decisions_per_second": 1})
    for _ in range(10):
        logger.log(make_decision_event("a/b", {}, True))
    c = logger.counters()
    assert c["buffered"] + c["decision_logs_dropped_rate_limit_exceeded"] == 10
    assert c["decision_logs_dropped_rate_limit_exceeded"] >= 8


def test_many_threads_no_event_lost_or_duplicated() -> None:
    collector = Collector(fail_every=3).start()
    engine = Engine()
    engine.add_policy("log.rego", 'package system.log\nmask contains "/input/secret"\n')
    try:
        logger = make_logger(
            collector.url,
            engine=engine,
            reporting={"upload_size_limit_bytes": 4096, "min_delay_seconds": 0.01, "max_delay_seconds": 0.05},
        )
        logger.start()
        n_threads, per_thread = 8, 250

        def work(t: int) -> None:
            for i in range(per_thread):
                logger.log(make_decision_event("a/b", {"t": t, "i": i, "secret": i}, True, decision_id=f"{t}-{i}"))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert logger.stop(timeout=20) is True
        ids = [e["decision_id"] for e in collector.events()]
        assert len(ids) == len(set(ids)) == n_threads * per_thread
        assert any(s == 500 for _, s in collector.attempts)
        assert all(e["input"] == {"t": e["input"]["t"], "i": e["input"]["i"]} for e in collector.events())
        c = logger.counters()
        assert c["events_logged"] == c["events_uploaded"] == n_threads * per_thread and c["dropped"] == 0
        # Each thread's events arrive in the order it logged them.
        for t in range(n_threads):
            mine = [int(i.split("-")[1]) for i in ids if i.startswith(f"{t}-")]
            assert mine == sorted(mine)
    finally:
        collector.stop()


def test_stop_uploads_what_is_left(collector: Collector) -> None:
    logger = make_logger(collector.url, reporting={"min_delay_seconds": 300, "max_delay_seconds": 600})
    logger.start()
    wait_for(lambda: logger.counters()["upload_rounds"] == 1)  # (its first turn, with nothing to upload)
    for i in range(5):
        logger.log(make_decision_event("a/b", {}, True, decision_id=f"d{i}"))
    assert collector.events() == []
    assert logger.stop(timeout=5) is True
    assert [e["decision_id"] for e in collector.events()] == [f"d{i}" for i in range(5)]
    assert logger.status() == {"state": "NOT_READY"}


def test_stop_gives_up_at_its_deadline(collector: Collector) -> None:
    collector.script = [500] * 1000
    logger = make_logger(collector.url, reporting={"min_delay_seconds": 300, "max_delay_seconds": 600})
    logger.start()
    logger.log(make_decision_event("a/b", {}, True))
    t0 = time.monotonic()
    assert logger.stop(timeout=1.5) is False
    assert time.monotonic() - t0 < 10
    assert logger.counters()["buffered"] == 1


def test_stop_does_not_wait_for_a_slow_service() -> None:
    collector = Collector(delay=4).start()
    try:
        logger = make_logger(collector.url, reporting={"min_delay_seconds": 0.01, "max_delay_seconds": 0.02})
        logger.start()
        logger.log(make_decision_event("a/b", {}, True))
        wait_for(lambda: len(collector.attempts) >= 1 or logger.counters()["buffered"] == 0)
        t0 = time.monotonic()
        logger.stop(timeout=1)
        assert time.monotonic() - t0 < 3
    finally:
        collector.stop()


def test_request_context_headers(collector: Collector) -> None:
    logger = make_logger(
        collector.url, request_context={"http": {"headers": ["X-Tenant", "Authorization", "X-Absent"]}}
    )
    headers = {"x-tenant": "acme", "authorization": "Bearer t", "other": "no"}
    rctx = logger.request_context(headers)
    assert rctx == {"http": {"headers": {"X-Tenant": ["acme"], "Authorization": ["Bearer t"]}}}
    logger.log(make_decision_event("a/b", {}, True, request_context=rctx))
    logger.log(make_decision_event("a/b", {}, True, request_context=logger.request_context({"other": "x"})))
    assert logger.flush() is True
    first, second = collector.events()
    assert first["request_context"] == rctx and list(first)[-1] == "request_context"
    assert "request_context" not in second


def test_bearer_token_path(collector: Collector, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("from-file\n")
    services = {
        "collector": {"url": collector.url, "credentials": {"bearer": {"token_path": str(token), "scheme": "Token"}}}
    }
    logger = DecisionLogger.from_config({"service": "collector"}, services)
    assert logger is not None
    logger.log(make_decision_event("a/b", {}, True))
    assert logger.flush() is True
    assert collector.batches[0]["headers"]["authorization"] == "Token from-file"
    assert collector.batches[0]["path"] == "/logs"


# -- never in the caller's way ---------------------------------------------------


def test_log_never_raises() -> None:
    def broken() -> Engine:
        raise RuntimeError("no engine today")

    stream = io.StringIO()
    logger = DecisionLogger.from_config({"console": True}, None, engine_provider=broken, console_stream=stream)
    assert logger is not None
    logger.log(make_decision_event("a/b", {}, True))
    logger.log({"input": object()})  # not JSON
    assert logger.counters()["log_errors"] == 2 and stream.getvalue() == ""


# -- configuration ---------------------------------------------------------------


def test_configuration_as_opa() -> None:
    svcs = {"one": {"url": "http://127.0.0.1:1"}, "two": {"url": "http://127.0.0.1:2"}}
    assert parse_config({}, None) is None
    assert DecisionLogger.from_config({}, None) is None
    first = parse_config({}, svcs)
    assert first is not None and first.service is not None and first.service.name == "one"
    console_only = parse_config({"console": True}, svcs)
    assert console_only is not None and console_only.service is None
    d = parse_config({"service": "two", "partition_name": "p"}, svcs)
    assert d is not None and d.resource == "/logs/p" and d.min_delay_seconds == 300 and d.max_delay_seconds == 600
    assert d.upload_size_limit_bytes == 32768 and d.buffer_type == "size" and d.buffer_size_limit_bytes == 0
    assert d.mask_query == 'data["system"]["log"]["mask"]' and d.drop_query == 'data["system"]["log"]["drop"]'
    listed = parse_config({"service": "x"}, [{"name": "x", "url": "https://h"}])
    assert listed is not None and listed.service is not None and listed.service.url == "https://h"
    for cfg, message in [
        ({"service": "three"}, 'invalid service name "three" in decision_logs'),
        ({"reporting": {"min_delay_seconds": 5}}, "reporting configuration missing 'max_delay_seconds'"),
        ({"reporting": {"max_delay_seconds": 5}}, "reporting configuration missing 'min_delay_seconds'"),
        ({"reporting": {"min_delay_seconds": 5, "max_delay_seconds": 1}}, "max reporting delay must be >= min"),
        ({"reporting": {"buffer_type": "disk"}}, 'invalid buffer type "disk"'),
        (
            {"reporting": {"buffer_type": "event", "buffer_size_limit_bytes": 5}},
            "'buffer_size_limit_bytes' isn't supported",
        ),
        ({"reporting": {"buffer_size_limit_events": 5}}, "'buffer_size_limit_events' isn't supported"),
        ({"reporting": {"buffer_size_limit_bytes": 0}}, "must be higher than 0"),
        (
            {"reporting": {"buffer_size_limit_bytes": 10, "max_decisions_per_second": 1}},
            "specify either 'buffer_size_limit_bytes' or 'max_decisions_per_second'",
        ),
    ]:
        with pytest.raises(DecisionLogConfigError, match=re.escape(message)):
            parse_config(cfg, svcs)


# -- in-process use --------------------------------------------------------------


def test_logged_eval(collector: Collector) -> None:
    engine = Engine()
    engine.add_policy("authz.rego", AUTHZ)
    engine.add_policy("log.rego", 'package system.log\nmask contains "/input/token"\n')
    logger = make_logger(collector.url, engine=engine)
    with logger:
        ok = logged_eval(engine, logger, "authz/allow", {"user": "bob", "token": "t"}, requested_by="cli")
        assert ok["result"] is True and re.fullmatch(r"[0-9a-f-]{36}", ok["decision_id"])
        roles = logged_eval(engine, logger, "authz.roles", {"roles": ["b", "a", "b"]})
        assert roles["result"] == ["a", "b"]
        missing = logged_eval(engine, logger, "data.authz.nothing", {})
        assert "result" not in missing
        engine.add_policy("bad.rego", 'package bad\nx[k] := 1 if some k in input.keys\nx["a"] := 2\n')
        with pytest.raises(EvalConflictError, match="object keys must be unique"):
            logged_eval(engine, logger, "bad/x", {"keys": ["a"]}, decision_id="bad-1")
    events = {e["decision_id"]: e for e in collector.events()}
    first = events[ok["decision_id"]]
    assert first["path"] == "authz/allow" and first["input"] == {"user": "bob"} and first["erased"] == ["/input/token"]
    assert first["requested_by"] == "cli" and first["metrics"]["timer_rego_query_eval_ns"] > 0
    assert (
        events[roles["decision_id"]]["result"] == ["a", "b"] and events[roles["decision_id"]]["path"] == "authz/roles"
    )
    assert "result" not in events[missing["decision_id"]]
    assert events["bad-1"]["error"] == {"code": "eval_conflict_error", "message": "object keys must be unique"}
    assert events["bad-1"]["input"] == {"keys": ["a"]} and "result" not in events["bad-1"]
