"""The policy server writes a decision's value within the request's time limit.

A value with shared parts is small in memory and huge written out
(``a1 := [a0, a0]``, ..., ``a30 := [a29, a29]``: 2^30 arrays in JSON). Its
evaluation is quick; writing it used to run past the time limit without end
(the conversion and the JSON encoder were not counted against it, and the
encoder ran on the event loop, stalling every other request). Now the request
ends with OPA's ``eval_cancel_error`` body, as an evaluation past its limit
does, and the server goes on answering. Through real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import time

import httpx

from pyrego.server import ServerOptions, ServerRuntime, create_app
from server_helpers import serving

DOUBLINGS = 40
POLICY = (
    "package big\n\n"
    "a0 := [1, 2, 3, 4]\n"
    + "".join(f"a{i + 1} := [a{i}, a{i}]\n" for i in range(DOUBLINGS))
    + f"huge := a{DOUBLINGS}\n"
    + 'b0 := {"s": {1, 2}, 3: "three"}\n'
    + "".join(f"b{i + 1} := [b{i}, b{i}]\n" for i in range(DOUBLINGS))
    + f"huge_sets := b{DOUBLINGS}\n"
    + 'small := {"x": a2, "y": a2, "s": {1, 2}}\n'
    + "allow := true\n"
)


def _cancelled(r: httpx.Response) -> None:
    assert r.status_code == 500, r.text[:300]
    body = r.json()
    assert body["code"] == "internal_error"
    assert body["message"] == "error(s) occurred while evaluating query"
    assert [e["code"] for e in body["errors"]] == ["eval_cancel_error"], body


def test_a_huge_result_ends_at_the_time_limit_with_the_cancel_error() -> None:
    runtime = ServerRuntime({"big.rego": POLICY}, eval_timeout=0.5)
    with serving(create_app(runtime)) as url, httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(2):  # (the second time the document is known: it may be tried inline first)
            began = time.monotonic()
            _cancelled(c.post("/v1/data/big/huge", json={"input": {}}))
            assert time.monotonic() - began < 10
        began = time.monotonic()
        _cancelled(c.get("/v1/data/big/huge"))
        _cancelled(c.post("/v1/query", json={"query": "x := data.big.huge"}))
        _cancelled(c.post("/v1/data/big/huge_sets", json={"input": {}}))
        assert time.monotonic() - began < 20
        # The server goes on, and values with shared parts that fit are written whole.
        assert c.post("/v1/data/big/allow", json={"input": {}}).json()["result"] is True
        small = c.post("/v1/data/big/small", json={"input": {}}).json()["result"]
        a2 = [[[1, 2, 3, 4], [1, 2, 3, 4]], [[1, 2, 3, 4], [1, 2, 3, 4]]]
        assert small == {"s": [1, 2], "x": a2, "y": a2}
        rows = c.post("/v1/query", json={"query": "x := data.big.a3"}).json()["result"]
        assert rows == [{"x": [a2, a2]}]
        b0 = {"3": "three", "s": [1, 2]}
        assert c.post("/v1/data/big/b1", json={"input": {}}).json()["result"] == [b0, b0]


def test_a_huge_result_inline_is_also_ended() -> None:
    """Evaluated on the event loop's thread (a cheap document): the inline cap applies to the writing too."""
    runtime = ServerRuntime({"big.rego": POLICY}, eval_timeout=0.5)
    with serving(create_app(runtime, options=ServerOptions(inline_limit=1.0))) as url, httpx.Client(base_url=url, timeout=120) as c:
        for _ in range(5):
            began = time.monotonic()
            _cancelled(c.post("/v1/data/big/huge", json={"input": {}}))
            assert time.monotonic() - began < 10
        assert c.post("/v1/data/big/allow", json={"input": {}}).json()["result"] is True
