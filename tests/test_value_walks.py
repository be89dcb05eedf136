"""Values with shared parts: small in memory, millions of nodes when walked.

``a1 := [a0, a0]``, ..., ``a22 := [a21, a21]`` is 23 lists but 2**22 leaves.
Equality, set membership and object keys compare or build each shared part
once (OPA answers these in milliseconds); walks that must visit every node
(ordering two copies, YAML output, ``walk``) end at the evaluation's time
limit with ``EvalCancelError``. Results agree with OPA on smaller chains.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import pyrego
from quiet_collector import earlier_objects_set_aside

DEPTH = 22
LIMIT = 1.0


def _chain(name: str, depth: int) -> str:
    return f"{name}0 := [1]\n" + "".join(f"{name}{i} := [{name}{i - 1}, {name}{i - 1}]\n" for i in range(1, depth + 1))


POLICY = "package p\n" + _chain("a", DEPTH) + _chain("b", DEPTH)


@pytest.fixture(scope="module")
def engine() -> pyrego.Engine:
    eng = pyrego.Engine()
    eng.set_type_check(False)
    eng.add_policy("p.rego", POLICY)
    eng.eval_query("x := count(json.marshal([1]))")  # compiled, builtins loaded
    eng.set_eval_timeout(LIMIT)
    return eng


def _timed(engine: pyrego.Engine, query: str) -> tuple[Any, float]:
    with earlier_objects_set_aside():
        start = time.monotonic()
        try:
            result: Any = engine.eval_query(query)["result"][0]["bindings"]["x"]
        except pyrego.EvalCancelError as err:
            result = err
        elapsed = time.monotonic() - start
    return result, elapsed


@pytest.mark.parametrize(
    "query, want",
    [
        ("x := data.p.a22 == data.p.a22", True),
        ("x := data.p.a22 == data.p.b22", True),  # two copies: each pair of shared parts compared once
        ("x := data.p.a22 == [data.p.a21, data.p.b21]", True),
        ("x := data.p.a22 == [data.p.a21, [data.p.a20, [1]]]", False),
        ("x := count({data.p.a22})", 1),
        ("x := count({data.p.a22, data.p.b22})", 1),
        ("x := {data.p.a22: 1}[data.p.b22]", 1),
        ("x := data.p.a22 in {data.p.b22}", True),
        ("x := data.p.a22 < data.p.a22", False),
        ("x := count(sort([data.p.a22, data.p.a22]))", 2),
        ("x := count(json.marshal(data.p.a22))", 2**22 + 2 * (2**23 - 1) + (2**22 - 1)),
        ("x := count(sprintf(\"%v\", [data.p.a22]))", None),
    ],
)
def test_shared_parts_are_walked_once(engine: pyrego.Engine, query: str, want: Any) -> None:
    result, elapsed = _timed(engine, query)
    assert not isinstance(result, pyrego.EvalCancelError), query
    if want is not None:
        assert result == want
    assert elapsed < 5 * LIMIT


def test_the_json_text_of_shared_parts_is_the_whole_text(engine: pyrego.Engine) -> None:
    text = engine.eval_query("x := json.marshal(data.p.a22)")["result"][0]["bindings"]["x"]
    # 2**22 leaves, 2**23 - 1 arrays, one comma in each of the 2**22 - 1 arrays of two.
    assert text.count("1") == 2**22 and text.count("[") == 2**23 - 1 and text.count(",") == 2**22 - 1
    assert text.startswith("[[[[") and text.endswith("]]]]") and "[[1],[1]]" in text


@pytest.mark.parametrize(
    "query",
    [
        "x := data.p.a22 < data.p.b22",  # ordering two copies visits every node
        "x := sort([data.p.a22, data.p.b22])",
        "x := count(yaml.marshal(data.p.a22))",
        "x := count([p | walk(data.p.a22, p)])",
    ],
)
def test_full_walks_end_at_the_time_limit(engine: pyrego.Engine, query: str) -> None:
    result, elapsed = _timed(engine, query)
    assert isinstance(result, pyrego.EvalCancelError), query
    assert result.code == "eval_cancel_error"
    assert elapsed < 5 * LIMIT
    if "yaml" in query or "sort" in query:
        # Stopped inside a builtin: the error names it and where it was called.
        assert result.message.endswith(": evaluation timed out") and result.location is not None
        assert result.message.startswith("yaml.marshal" if "yaml" in query else "sort")


def test_walks_outside_an_evaluation_are_not_cancelled(engine: pyrego.Engine) -> None:
    # The deadline of an evaluation that has ended does not reach later walks.
    value = engine.eval_rule("data.p.a12")
    time.sleep(LIMIT * 1.2)
    from pyrego.runtime.convert import dumps
    from pyrego.runtime.values import equal, freeze

    assert freeze(value) == freeze(engine.eval_rule("data.p.b12"))
    assert equal(value, engine.eval_rule("data.p.b12"))
    assert len(dumps(value)) > 2**12


@pytest.mark.parametrize(
    "query",
    [
        "x := json.marshal(data.p.a4)",
        'x := json.marshal_with_options(data.p.a3, {"indent": "  ", "prefix": "> "})',
        'x := sprintf("%v", [{data.p.a4: data.p.a3}])',
        "x := yaml.marshal(data.p.a3)",
        "x := {data.p.a4, data.p.b4, data.p.a3}",
        "x := [data.p.a4 == data.p.b4, data.p.a4 < data.p.b4, data.p.a4 == data.p.b3]",
        'x := {"k": data.p.a3, "l": {data.p.a2: data.p.a3}}',
    ],
)
def test_shared_parts_print_as_in_opa(query: str, oracle: Any) -> None:
    policy = "package p\n" + _chain("a", 4) + _chain("b", 4)
    want = oracle.evaluate({"p.rego": policy}, query)
    assert not want.is_error, want.error_message
    eng = pyrego.Engine()
    eng.add_policy("p.rego", policy)
    got = eng.eval_query(query)["result"][0]["bindings"]
    assert got == want.bindings[0]


def test_a_shared_result_comes_back_to_python_at_once(engine: pyrego.Engine) -> None:
    start = time.monotonic()
    value = engine.eval_rule("data.p.a22")
    assert time.monotonic() - start < LIMIT
    for _ in range(22):
        assert len(value) == 2 and value[0] == value[1]
        value = value[0]
    assert value == [1]
    assert engine.eval_rule("data.p.a2") == [[[1], [1]], [[1], [1]]]
    assert engine.eval_query("x := {data.p.a1}")["result"][0]["bindings"]["x"] == [[[1], [1]]]


def test_query_results_with_shared_parts_convert_at_once(engine: pyrego.Engine) -> None:
    start = time.monotonic()
    value = engine.eval_query("x := data.p.a22")["result"][0]["bindings"]["x"]
    assert time.monotonic() - start < LIMIT
    assert pyrego.json_ready(engine.eval_rule("data.p.a2")) == [[[1], [1]], [[1], [1]]]
    for _ in range(22):
        value = value[1]
    assert value == [1]
