"""The policy server's request hot path: cheap evaluations inline on the event loop (and the
rest, and every evaluation with ``inline_limit=0``, on the pool), the time limit inline,
decision IDs, the quick test for numbers orjson would round, gzip only for gzip clients."""

from __future__ import annotations

import re
import threading
import uuid
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from pyrego.server import ServerOptions, ServerRuntime, create_app
from pyrego.server.common import Worker, decision_id
from pyrego.server.jsonio import _EXACT_NEEDED, exact_needed, loads
from server_helpers import serving

AUTHZ = """package authz

default allow := false

allow if {
	input.user.role == "admin"
	input.action in ["read", "write"]
}

# Slow for a large input.n (n * n steps), quick for a small one.
spin if {
	some i in numbers.range(1, input.n)
	some j in numbers.range(1, input.n)
	i * j == -1
}

default spin_done := false

spin_done if not spin
"""


class ThreadRecorder:
    """A decision logger: the name of the thread each decision was made on (it logs there)."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.lock = threading.Lock()

    def log(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.threads.append(threading.current_thread().name)


def _pool(name: str) -> bool:
    return name.startswith("pyrego-eval")


def test_cheap_decisions_move_inline_and_stay_right() -> None:
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, decision_logger=logger)
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=60) as c:
        answers = []
        for i in range(30):
            doc = {"user": {"role": "admin" if i % 2 else "guest"}, "action": "read"}
            r = c.post("/v1/data/authz/allow", json={"input": doc})
            assert r.status_code == 200, r.text
            answers.append(r.json()["result"])
    assert answers == [bool(i % 2) for i in range(30)]
    assert len(logger.threads) == 30
    assert _pool(logger.threads[0])  # the first evaluation of a document: on the pool
    assert not any(_pool(t) for t in logger.threads[-10:])  # then inline, on the loop's thread


def test_inline_limit_zero_keeps_every_evaluation_on_the_pool() -> None:
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, decision_logger=logger)
    with serving(create_app(runtime, options=ServerOptions(inline_limit=0))) as url, httpx.Client(base_url=url, timeout=60) as c:
        for _ in range(15):
            assert c.post("/v1/data/authz/allow", json={"input": {}}).json()["result"] is False
    assert len(logger.threads) == 15 and all(_pool(t) for t in logger.threads)


def test_slow_evaluations_stay_on_the_pool() -> None:
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, decision_logger=logger)
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(6):
            r = c.post("/v1/data/authz/spin_done", json={"input": {"n": 150}})  # 22,500 steps: milliseconds
            assert r.json()["result"] is True
    assert len(logger.threads) == 6 and all(_pool(t) for t in logger.threads)


def test_time_limit_ends_an_inline_evaluation() -> None:
    """A document that was quick (so inline) asked with an input that makes it slow: the
    evaluation time limit still ends it, with OPA's cancel error, and the server goes on."""
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, eval_timeout=0.3, decision_logger=logger)
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(8):
            assert c.post("/v1/data/authz/spin_done", json={"input": {"n": 3}}).json()["result"] is True
        assert not _pool(logger.threads[-1])
        r = c.post("/v1/data/authz/spin_done", json={"input": {"n": 10**6}})
        assert r.status_code == 500
        body = r.json()
        assert body["code"] == "internal_error"
        assert body["errors"][0]["code"] == "eval_cancel_error"
        # Stopped inline at the inline cap, then evaluated again on the pool, where the
        # server's own limit ended it.
        assert _pool(logger.threads[-1])
        assert c.post("/v1/data/authz/spin_done", json={"input": {"n": 3}}).json()["result"] is True


def test_an_input_that_makes_an_inline_document_slow_is_answered_from_the_pool() -> None:
    """No server time limit: a document that was quick (so inline) asked with an input that
    makes it slow is stopped on the event loop at the inline cap, evaluated again on the
    pool, and answered right; the document then stays on the pool until it is cheap there."""
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, decision_logger=logger)
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(8):
            assert c.post("/v1/data/authz/spin_done", json={"input": {"n": 3}}).json()["result"] is True
        assert not _pool(logger.threads[-1])
        r = c.post("/v1/data/authz/spin_done", json={"input": {"n": 700}})  # 490,000 steps: well past the cap
        assert r.status_code == 200, r.text
        assert r.json()["result"] is True
        assert _pool(logger.threads[-1])
        assert c.post("/v1/data/authz/spin_done", json={"input": {"n": 3}}).json()["result"] is True
        assert _pool(logger.threads[-1])  # (its last two costs include the cap: on the pool)


def test_large_inputs_always_go_to_the_pool() -> None:
    logger = ThreadRecorder()
    runtime = ServerRuntime({"authz.rego": AUTHZ}, decision_logger=logger)
    big = {"user": {"role": "admin"}, "action": "read", "pad": "x" * 70_000}
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=60) as c:
        for _ in range(8):
            assert c.post("/v1/data/authz/allow", json={"input": big}).json()["result"] is True
    assert all(_pool(t) for t in logger.threads)


def test_worker_costs_one_slow_call_is_not_enough_to_leave_the_loop() -> None:
    w = Worker(1, inline_limit=0.001)
    try:
        assert not w.inline("k")  # never seen: the pool
        w.record("k", 0.050)  # the first call (compiling, say)
        assert not w.inline("k")
        w.record("k", 0.00001)
        assert w.inline("k")
        w.record("k", 0.009)  # one pause
        assert w.inline("k")
        w.record("k", 0.009)  # two slow calls in a row: back to the pool
        assert not w.inline("k")
        w.record("k", 0.00001)  # (a quick call on the pool)
        assert w.inline("k")
    finally:
        w.close()


def test_decision_ids_are_version_4_uuids_and_distinct() -> None:
    ids = [decision_id() for _ in range(2000)]  # past several refills of the random bytes
    assert len(set(ids)) == len(ids)
    for text in ids:
        u = uuid.UUID(text)
        assert str(u) == text and u.version == 4 and u.variant == uuid.RFC_4122


def test_decision_ids_in_answers() -> None:
    runtime = ServerRuntime({"authz.rego": AUTHZ})
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=60) as c:
        seen = {c.post("/v1/data/authz/allow", json={"input": {}}).json()["decision_id"] for _ in range(20)}
    assert len(seen) == 20 and all(uuid.UUID(s).version == 4 for s in seen)


_NUMBERISH = st.text(alphabet="0123456789.eE+-x \",:{}[]", max_size=60)


@settings(max_examples=400, deadline=None)
@given(_NUMBERISH)
def test_exact_needed_covers_every_match_of_the_expression(text: str) -> None:
    raw = text.encode()
    if _EXACT_NEEDED.search(raw) is not None:
        assert exact_needed(raw)


def test_exact_needed_examples() -> None:
    assert exact_needed(b'{"n": 12345678901234567890}')
    assert exact_needed(b'{"n": 1.0000000000000001}')
    assert exact_needed(b'{"n": 1e400}') and exact_needed(b'{"n": 1E-300}')
    assert not exact_needed(b'{"n": 1700000000000, "x": 1.5e10, "s": "release"}')
    assert re.search(r"\d{16}", str(loads(b'{"n": 123456789012345678901234567890}')))  # exact, all digits kept
    assert loads(b'{"n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890


def test_gzip_only_for_clients_that_accept_it() -> None:
    runtime = ServerRuntime({"authz.rego": AUTHZ}, {"blob": ["x" * 40] * 100})
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=60) as c:
        zipped = c.get("/v1/data/blob", headers={"Accept-Encoding": "gzip, deflate"})
        plain = c.get("/v1/data/blob", headers={"Accept-Encoding": "identity"})
    assert zipped.headers.get("content-encoding") == "gzip"
    assert "content-encoding" not in plain.headers
    assert zipped.json()["result"] == plain.json()["result"] == ["x" * 40] * 100


def test_duration_histogram_counts_every_request() -> None:
    runtime = ServerRuntime({"authz.rego": AUTHZ})
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=60) as c:
        for _ in range(5):
            c.post("/v1/data/authz/allow", json={"input": {}})
        c.post("/v1/data/authz/allow?pretty", json={"input": {}})
        c.get("/v1/data/authz")
        c.put("/v1/data/x", json=1)
        text = c.get("/metrics").text
    lines = dict(line.rsplit(" ", 1) for line in text.splitlines() if line.startswith("http_request_duration_seconds"))
    assert float(lines['http_request_duration_seconds_count{code="200",handler="v1/data",method="POST"}']) == 6
    assert float(lines['http_request_duration_seconds_count{code="200",handler="v1/data",method="GET"}']) == 1
    assert float(lines['http_request_duration_seconds_count{code="204",handler="v1/data",method="PUT"}']) == 1
    assert float(lines['http_request_duration_seconds_sum{code="200",handler="v1/data",method="POST"}']) > 0
    les = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0", "+Inf"]
    counts = [float(lines[f'http_request_duration_seconds_bucket{{code="200",handler="v1/data",le="{le}",method="POST"}}']) for le in les]
    assert counts == sorted(counts) and counts[-1] == 6
