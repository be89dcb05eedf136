"""Set members and object keys that are arrays or objects (frozen keys) keep
the list or dict they were frozen from, and give it back when a loop reads
them (``some c in containers``), instead of rebuilding it from the key.

The values read back must be exactly those a rebuild gives: equal members in
different Python forms (``1`` and ``1.0``, keys in another order), booleans
next to numbers, nested sets and arrays, tuples (read as arrays, given back
as lists), and keys equal and hashed alike however they were made. The
policy results are compared with OPA's.
"""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from opa_oracle import plain_numbers
from pyrego.runtime.values import TRUE_KEY, ArrayKey, ObjectKey, SetKey, freeze, thaw

POLICY = """package p

import rego.v1

members contains m if some m in input.docs

names := {m.name | some m in members}

tag_sets := {t | some m in members; some t in m.tags}

pairs := {[k, v] | some m in members; is_object(m); some k, v in m}

keyed := {m: count(m) | some m in members}

keys_back := {k | some k, _ in keyed}

nested := {[m, {m}] | some m in members}

nested_back := {[a, b] | some [a, b] in nested}

twice := {m | some m in members; some n in members; m == n}

sizes := {count(members), count(keyed), count(nested), count(twice)}
"""

DOCS: list[Any] = [
    {"name": "a", "n": 1, "tags": ["x", "y"]},
    {"tags": ["x", "y"], "n": 1.0, "name": "a"},  # the same object as the first in OPA
    {"name": "b", "flag": True, "tags": []},
    {"name": "c", "flag": 1, "tags": [[1], {"k": False}, {"k": 0}]},
    [1, 2],
    [1.0, 2.0],
    [[True], [1]],
    {"name": "d", "deep": {"a": [{"b": [None, "s"]}]}},
]
RULES = ("members", "names", "tag_sets", "pairs", "keys_back", "nested_back", "twice", "sizes")


@pytest.mark.parametrize("rule", RULES)
def test_members_read_back_as_opa_reads_them(rule: str, oracle: Any) -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", POLICY)
    # (eval_query's values: eval_rule's Python form of a set cannot tell {"k": false} from {"k": 0}.)
    result = engine.eval_query(f"x := data.p.{rule}", input={"docs": DOCS})
    got = pyrego.json_ready(result["result"][0]["bindings"]["x"])
    want = oracle.evaluate({"p.rego": POLICY}, f"x := data.p.{rule}", input={"docs": DOCS})
    assert got == plain_numbers(want.bindings[0]["x"])


def test_thaw_gives_back_the_frozen_list_or_dict() -> None:
    doc = {"a": [1, {"b": True}], "c": None}
    key = freeze(doc)
    assert thaw(key) is doc
    members = freeze([doc, [doc]])
    assert thaw(members) == [doc, [doc]]
    assert thaw(members.items[0]) is doc


def test_a_tuple_inside_is_rebuilt_as_a_list() -> None:
    value = {"a": (1, [2]), "b": [3]}
    back = thaw(freeze(value))
    assert back == {"a": [1, [2]], "b": [3]} and type(back["a"]) is list
    assert thaw(freeze((1, 2))) == [1, 2] and type(thaw(freeze((1, 2)))) is list
    assert thaw(freeze([(1,)])) == [[1]]


def test_keys_made_by_freeze_are_the_keys_made_by_their_classes() -> None:
    doc = {"k": [1, "s", True, None, {"x": 2.5}], "s": frozenset({"m"})}
    by_class = ObjectKey(
        frozenset(
            {
                ("k", ArrayKey((1, "s", TRUE_KEY, None, ObjectKey(frozenset({("x", 2.5)}))))),
                ("s", SetKey(frozenset({"m"}))),
            }
        )
    )
    key = freeze(doc)
    assert key == by_class and hash(key) == hash(by_class)
    assert freeze([1, 2]) == ArrayKey((1, 2)) and hash(freeze([1, 2])) == hash(ArrayKey((1, 2)))
    assert freeze({"n": 1}) == freeze({"n": 1.0}) and freeze([True]) != freeze([1])
    # A key without its source (a copy read back by pickle, say) rebuilds the value.
    assert thaw(by_class) == {"k": [1, "s", True, None, {"x": 2.5}], "s": frozenset({"m"})}
