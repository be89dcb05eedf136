"""``pyrego.json_ready``: what ``eval_rule`` and ``eval_query`` return, as plain
JSON-compatible Python, equal to OPA's JSON for the same value."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

import pyrego
from opa_oracle import plain_numbers

POLICY = """package p

third := 1 / 3
exact := 0.1234567890123456789
big := 100000000000000000000000000000 * 3
sum := 0.1 + 0.2
s := {1, "a", [1, 2], {"k": {2, 1}}, {3, 4}, null, false}
o := {[1]: 2, 1: "x", "s": {1, 2}, {"a": 1}: 3, {2, 1}: 4, null: 5, 1.5: 6, false: 7}
nested := [{"xs": {third, 2}}, {[1, {"b": 1}]}]
"""
RULES = ("third", "exact", "big", "sum", "s", "o", "nested")


@pytest.fixture(scope="module")
def engine() -> pyrego.Engine:
    e = pyrego.Engine()
    e.add_policy("p.rego", POLICY)
    return e


@pytest.mark.parametrize("rule", RULES)
def test_eval_rule_values_dump_as_opas_json(engine: pyrego.Engine, rule: str, oracle: Any) -> None:
    value = engine.eval_rule(f"data.p.{rule}")
    if rule in ("third", "exact", "s", "o", "nested"):
        with pytest.raises(TypeError):
            json.dumps(value)  # what a first-time user tries
    text = json.dumps(pyrego.json_ready(value))
    result = oracle.evaluate({"p.rego": POLICY}, f"x := data.p.{rule}")
    assert json.loads(text) == plain_numbers(result.bindings[0]["x"])
    # Key order too: Go writes a map's keys sorted.
    assert text == json.dumps(plain_numbers(result.bindings[0]["x"]))


def test_eval_query_values_and_plain_values(engine: pyrego.Engine) -> None:
    bindings = engine.eval_query("x := data.p.third; y := data.p.s")["result"][0]["bindings"]
    assert pyrego.json_ready(bindings) == {"x": 1 / 3, "y": [None, False, 1, "a", [1, 2], {"k": [1, 2]}, [3, 4]]}
    assert pyrego.json_ready({"a": [1, 2.5, "s", None, True]}) == {"a": [1, 2.5, "s", None, True]}
    assert pyrego.json_ready(Decimal("1E+3")) == 1000 and type(pyrego.json_ready(Decimal("1E+3"))) is int


def test_objects_in_sets_are_told_from_sets_of_pairs(engine: pyrego.Engine) -> None:
    """An object where Python needs a hashable value is a frozenset of its pairs, of a type
    of its own (equal to the plain frozenset), so it comes back as an object."""
    e = pyrego.Engine()
    e.add_policy("q.rego", 'package q\n\nobjects := {{"k": 1}}\nsets := {{["k", 1]}}\n')
    objects, sets = e.eval_rule("data.q.objects"), e.eval_rule("data.q.sets")
    assert objects == sets == {frozenset({("k", 1)})}  # as documented: frozensets of (key, value) pairs
    assert pyrego.json_ready(objects) == [{"k": 1}]
    assert pyrego.json_ready(sets) == [[["k", 1]]]


def test_undefined_is_not_a_json_value(engine: pyrego.Engine) -> None:
    with pytest.raises(pyrego.DataError):
        pyrego.json_ready(engine.eval_rule("data.p.nothing"))
