"""Input a Python caller can pass but JSON cannot hold: a value that contains
itself, and a ``Decimal`` NaN.

``input`` is read by reference, so such values reach the evaluation. Where
an evaluation goes through a cycle (``walk``, equality of two cyclic values,
``json.marshal``, a result that holds it) or orders a ``Decimal`` NaN, it
must end with a clear ``EvalTypeError`` naming the fault: never a hang (a
``walk`` used to run until the time limit, and with none, forever), never
``eval_recursion_error`` or ``eval_internal_error``. Each case runs in every
execution form and through ``eval_rule``, a prepared rule, ``eval_many`` and
``eval_query``.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Callable

import pytest

import pyrego
from pyrego.errors import DataError, EvalTypeError
from pyrego.runtime.input_faults import find_cycle, find_nan

POLICY = """package f
import rego.v1

walked := count([x | walk(input, x)])
walk_deep if {
    walk(input, [path, _])
    count(path) > 1000
}
marshalled := json.marshal(input)
same if input.a == input.b
ordered if input.a < input.b
sorted := sort([input.a, input.b])
merged := object.union(input.a, input.b)
whole := input.a
printed := sprintf("%v", [input.a])
as_set := {input.a, input.b}
schema := json.match_schema(input.a, {})
n := count(input.a)
typed := type_name(input.a)
is_one if input.x == 1
small if input.x < 5
largest := max([input.x, 1])
ordered_x := sort([input.x, 2])
x_is_one if input.x == 1
"""


class Hang(Exception):
    pass


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the run) where the block takes longer."""

    def stop(*_: Any) -> None:
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def cyclic_pair() -> dict[str, Any]:
    """``input.a`` and ``input.b``: two separate values that contain themselves."""
    a: dict[str, Any] = {"k": 1}
    a["self"] = a
    b: dict[str, Any] = {"k": 1}
    b["self"] = b
    return {"a": a, "b": b, "x": 1}


def cyclic_through_list() -> dict[str, Any]:
    """Cycles through an array: ``input.a.l[1].up`` is ``input.a.l`` (``input.b`` likewise)."""

    def one() -> dict[str, Any]:
        inner: list[Any] = [1]
        inner.append({"up": inner})
        return {"l": inner}

    return {"a": one(), "b": one(), "x": 1}


def nan_input(kind: str = "NaN") -> dict[str, Any]:
    return {"x": Decimal(kind), "a": {}, "b": {}}


def _api_runs(engine: pyrego.Engine) -> dict[str, Callable[[str, Any], Any]]:
    def query(rule: str, value: Any) -> Any:
        result = engine.eval_query(f"x := data.f.{rule}", input=value)["result"]
        return result[0]["bindings"]["x"] if result else pyrego.UNDEFINED

    def many(rule: str, value: Any) -> Any:
        (result,) = engine.eval_many(f"data.f.{rule}", [value])
        if result.error is not None:
            raise result.error
        return result.value

    return {
        "eval_rule": lambda rule, value: engine.eval_rule(f"data.f.{rule}", input=value),
        "prepared": lambda rule, value: engine.prepare_rule(f"data.f.{rule}")(value),
        "eval_many": many,
        "eval_query": query,
    }


def _engine() -> pyrego.Engine:
    e = pyrego.Engine()
    e.add_policy("f.rego", POLICY)
    return e


CYCLE_RULES = ["walked", "walk_deep", "marshalled", "same", "ordered", "sorted", "merged", "whole", "printed", "as_set", "schema"]


@pytest.mark.parametrize("rule", CYCLE_RULES)
def test_going_through_a_cycle_is_an_error_naming_it(rule: str, execution_form: str) -> None:
    e = _engine()
    for api, run in _api_runs(e).items():
        for make, where in ((cyclic_pair, "input.a.self is input.a"), (cyclic_through_list, "input.a.l[1].up is input.a.l")):
            with at_most(20), pytest.raises(EvalTypeError) as caught:
                run(rule, make())
            message = str(caught.value)
            assert f"input contains itself ({where})" in message, (api, message)
            assert "not a Rego value" in message


@pytest.mark.parametrize("rule", CYCLE_RULES)
def test_going_through_a_cycle_is_an_error_with_a_time_limit(rule: str) -> None:
    e = _engine()
    e.set_eval_timeout(30)
    with at_most(20), pytest.raises(EvalTypeError, match=r"input contains itself \(input\.a\.self is input\.a\)"):
        e.eval_rule(f"data.f.{rule}", input=cyclic_pair())


def test_a_cycle_the_evaluation_does_not_go_through_is_read_as_usual(execution_form: str) -> None:
    e = _engine()
    for api, run in _api_runs(e).items():
        with at_most(20):
            assert run("n", cyclic_pair()) == 2, api
            assert run("typed", cyclic_pair()) == "object", api
            assert run("is_one", cyclic_pair()) is True, api


def test_data_that_contains_itself_is_refused_with_its_cycle() -> None:
    doc: dict[str, Any] = {"x": [1]}
    doc["x"].append(doc)
    with pytest.raises(DataError, match=r"data contains itself \(data\.x\[1\] is data\)"):
        pyrego.Engine().add_data(doc)


def test_walk_of_a_deep_value_without_cycles_still_walks_it(execution_form: str) -> None:
    deep: list[Any] = []
    cur = deep
    for _ in range(1500):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    e = _engine()
    with at_most(60):
        assert e.eval_rule("data.f.walk_deep", input=deep) is True


NAN_RULES = ["small", "largest", "ordered_x"]


@pytest.mark.parametrize("kind", ["NaN", "sNaN", "-NaN"])
@pytest.mark.parametrize("rule", NAN_RULES)
def test_ordering_a_decimal_nan_is_an_error_naming_it(rule: str, kind: str, execution_form: str) -> None:
    e = _engine()
    for api, run in _api_runs(e).items():
        with pytest.raises(EvalTypeError) as caught:
            run(rule, nan_input(kind))
        assert "input.x is a Decimal NaN, which is not a Rego value" in str(caught.value), (api, caught.value)


def test_a_signalling_nan_is_an_error_where_compared_and_a_quiet_one_is_unequal(execution_form: str) -> None:
    e = _engine()
    for api, run in _api_runs(e).items():
        assert run("x_is_one", nan_input("NaN")) is pyrego.UNDEFINED, api
        with pytest.raises(EvalTypeError, match="input.x is a Decimal NaN"):
            run("x_is_one", nan_input("sNaN"))


def test_the_searches_visit_shared_parts_once() -> None:
    # 2**60 paths, 61 objects: no cycle, found without walking every path.
    node: Any = [1]
    for _ in range(60):
        node = [node, node]
    with at_most(5):
        assert find_cycle(node) is None
        assert find_nan(node) is None
    assert find_cycle({"a": [{"b": 1}]}) is None
    looped: dict[str, Any] = {"a": [{"b": 1}]}
    looped["a"][0]["c"] = looped["a"]
    assert find_cycle(looped) == (["a", 0, "c"], ["a"])
    assert find_nan({"a": [1, {"b": Decimal("NaN")}]}) == ["a", 1, "b"]


def test_partial_evaluation_through_a_cycle_is_an_error_naming_it() -> None:
    e = pyrego.Engine()
    e.add_policy("f.rego", "package f\nsame if input.a == input.b\nrows contains x if { input.a == input.b; x := data.t[_] }\n")
    with at_most(20), pytest.raises(EvalTypeError, match=r"input contains itself \(input\.a\.self is input\.a\)"):
        e.eval_partial("data.f.same", unknowns=["data.t"], input=cyclic_pair())
    with at_most(20), pytest.raises(EvalTypeError, match=r"input contains itself \(input\.a\.self is input\.a\)"):
        e.compile_filters("data.f.rows", cyclic_pair(), unknowns=["data.t"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), Decimal("NaN"), Decimal("Infinity")])
def test_json_and_yaml_text_of_a_number_json_cannot_hold_is_a_builtin_error(value: Any, execution_form: str) -> None:
    # (It used to be written as the text "nan" or "inf": not JSON; yaml.marshal failed inside.)
    e = pyrego.Engine()
    e.add_policy("m.rego", "package m\nj := json.marshal([input.x])\ny := yaml.marshal({\"a\": input.x})\nok := json.marshal([2.5])\n")
    expected = "NaN" if value != value else ("-Inf" if value < 0 else "+Inf")
    assert e.eval_rule("data.m.j", input={"x": value}) is pyrego.UNDEFINED
    assert e.eval_rule("data.m.y", input={"x": value}) is pyrego.UNDEFINED
    assert e.eval_rule("data.m.ok", input={"x": value}) == "[2.5]"
    e.set_strict_builtin_errors(True)
    for rule, name in (("j", "json.marshal"), ("y", "yaml.marshal")):
        with pytest.raises(pyrego.EvalBuiltinError, match=rf"{name}: json: unsupported value: {re.escape(expected)}"):
            e.eval_rule(f"data.m.{rule}", input={"x": value})
