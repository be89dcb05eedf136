"""``rego.parse_module`` against OPA v1.20.2 (skipped when the oracle cannot be had).

OPA's builtin marshals the parsed module to JSON and reads it back as a
term, so its answer is the JSON ``opa parse`` writes: wildcards named ``$0``,
``$1``, ...; set elements and object items in OPA's sort order (an object
term is a list of pairs, so the order shows); the ``key`` of a ``p[x]`` head.
Each case parses one small module in both engines and compares the terms.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import pyrego
from opa_oracle import Oracle, plain_numbers

MODULES = {
    "wildcards": "package p\n\nq if input.xs[_] == 1\n\nf(_, y) := y\n",
    "set_order": 'package p\n\ns := {"pwsh", "cmd", "bash"}\n',
    "object_order": 'package p\n\no := {"title": "t", "id": "x", "custom": {"severity": "LOW"}}\n',
    "partial_object_head": "package p\n\nview[id] := r if {\n\tsome id, r in input.resources\n}\n",
    "partial_set_head": "package p\n\nnames contains n if n := input.items[_].name\n",
    "comprehensions": 'package p\n\nx := {k: v | some k, v in {"b": 1, "a": _}}\n\ny := [z | z := {"b", "a"}[_]]\n',
    "with_and_else": (
        "package p\n\n"
        "r := 1 if {\n\tinput.a[_] with input as {\"b\": 2, \"a\": [1]}\n} else := 2\n"
    ),
}


def _pyrego_ast(text: str) -> Any:
    engine = pyrego.Engine()
    result = engine.eval_query("x := rego.parse_module(input.f, input.t)", input={"f": "m.rego", "t": text})
    return result["result"][0]["bindings"]["x"]


def _opa_ast(oracle: Oracle, text: str) -> Any:
    res = oracle.evaluate({}, "x := rego.parse_module(input.f, input.t)", input={"f": "m.rego", "t": text})
    assert not res.is_error, res.error_message
    return plain_numbers(res.bindings[0]["x"])


@pytest.mark.parametrize("name", sorted(MODULES))
def test_parse_module_matches_opa(name: str, oracle: Oracle) -> None:
    text = MODULES[name]
    assert json.dumps(_pyrego_ast(text)) == json.dumps(_opa_ast(oracle, text))


def test_wildcards_are_named_as_opa_names_them(oracle: Oracle) -> None:
    # A policy that reads its own AST (as linters do) sees OPA's names.
    text = MODULES["wildcards"]
    query = "x := [v | walk(rego.parse_module(input.f, input.t), [_, v]); v.type == \"var\"; startswith(v.value, \"$\")]"
    ours = pyrego.Engine().eval_query(query, input={"f": "m.rego", "t": text})["result"][0]["bindings"]["x"]
    theirs = oracle.evaluate({}, query, input={"f": "m.rego", "t": text}).bindings[0]["x"]
    assert ours == theirs
    assert {v["value"] for v in ours} == {"$0", "$1"}
