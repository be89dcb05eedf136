"""Differences with OPA found on a large query library of infrastructure
checks (Rego v0 policies building result objects from helper functions over
parsed configuration files). Each case is a minimal program written here,
evaluated by OPA v1.20.2 and by pyrego in every execution form, with strict
builtin errors on and off (off: only where OPA raised no error), comparing
the value, undefined, or the error's code and message."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import agree as _agree
from opa_compare import opa_outcome

_P = "package p\n\nimport rego.v1\n\n"

# A function that raises for a number (a builtin's type error inside it).
_F = 'f(x) := y if {\n\tcontains(x, "a")\n\ty := x\n}\n\n'

# OPA's compiler moves the calls nested in an expression (and in a rule's
# head, or a comprehension's term) out before it, walking a set's elements
# and an object's entries in its own sorted order of their terms, not the
# text's. Where a call there is undefined (a ref among its operands is),
# the calls OPA moves after it are never evaluated: pyrego evaluated them
# in the text's order, raising an error OPA never reaches, or missing one
# OPA raises first (a result object whose first key in the text builds a
# search key with a helper that raises, while a later key reads a set that
# is empty).
CALL_ORDER_CASES = {
    "object value: a later key's call undefined first": (
        _F + 'r contains v if {\n\ts := {k | some k in input.ks}\n\tv := {"z": f(input.n), "a": sprintf("%s", [s[a]])}\n}\n',
        {"n": 1, "ks": []},
    ),
    "object value: an earlier key's call raises first": (
        _F + 'r contains v if {\n\ts := {k | some k in input.ks}\n\tv := {"b": sprintf("%s", [s[a]]), "a": sprintf("%s %s", [f(input.n), s[a]])}\n}\n',
        {"n": 1, "ks": []},
    ),
    "object value: in key order already": (
        _F + 'r contains v if {\n\ts := {k | some k in input.ks}\n\tv := {"a": f(input.n), "z": sprintf("%s", [s[a]])}\n}\n',
        {"n": 1, "ks": []},
    ),
    "object value: a builtin raising, strict only": (
        'r contains v if {\n\tv := {"z": to_number(input.t), "a": sprintf("%s", [input.s])}\n}\n',
        {"t": "x"},
    ),
    "object in a comprehension's body": (
        'r := [x | x := {"b": to_number("x"), "a": sprintf("%s", [input.s])}]\n',
        {"n": 1},
    ),
    "object as a comprehension's term": (
        'r := [{"b": to_number("x"), "a": sprintf("%s", [input.s])} | true]\n',
        {"n": 1},
    ),
    "set value in a body": (
        'r contains x if {\n\tx := {sprintf("%s", [to_number("x")]), sprintf("%s", [input.s])}\n}\n',
        {"n": 1},
    ),
    "set in a rule's head": (
        _F + 'r := {sprintf("%s", [f(input.n)]), sprintf("%s", [input.s])}\n',
        {"n": 1},
    ),
    "object in a rule's head": (
        _F + 'r := {"z": f(input.n), "a": sprintf("%s", [input.s])} if input.n\n',
        {"n": 1},
    ),
    "object in a rule's head, both defined": (
        _F + 'r := {"z": f(input.n), "a": sprintf("%s", [input.s])} if input.n\n',
        {"n": 1, "s": "s"},
    ),
    "nested objects": (
        _F + 'r contains v if {\n\tv := {"k": {"z": f(input.n), "a": upper(input.s)}, "b": 1}\n}\n',
        {"n": 1},
    ),
}


@pytest.mark.parametrize("name", list(CALL_ORDER_CASES))
def test_nested_calls_in_opa_sorted_order(oracle: Any, name: str) -> None:
    body, input = CALL_ORDER_CASES[name]
    _agree(oracle, _P + body, "data.p.r", input)


# The walk over a parsed document gives paths with array indexes (numbers):
# a helper resolving each path item raises on a number, but OPA reaches it
# only after the set read by a key it sorts first (keyActualValue before
# searchKey), and that set is empty for such a path.
_WALK_CASE = (
    _F
    + "r contains v if {\n\t[path, value] := walk(input)\n\tvalue.t == \"o\"\n"
    + "\tbad := {k | value[k]; k != \"t\"}\n"
    + '\tv := {"searchKey": sprintf("%s %s", [concat(".", [f(p) | some p in path]), bad[a]]), "keyActualValue": upper(bad[a])}\n}\n'
)


def test_walk_paths_with_indexes_reach_no_helper(oracle: Any) -> None:
    _agree(oracle, _P + _WALK_CASE, "data.p.r", {"a": "x", "l": [{"t": "o"}]})
    _agree(oracle, _P + _WALK_CASE, "data.p.r", {"a": "x", "l": [{"t": "o", "n": 1}]})


# OPA iterates an object's keys and a set's members in sorted order; pyrego
# iterates them in the order it holds them, which gives the same values.
# Where values of several keys would each raise (strict builtin errors), the
# error is the one OPA meets first: pyrego runs such an evaluation again
# iterating as OPA does (found on a query over a compose file's services,
# where a service sorted first held a number the other an object). In that
# order a rule can also succeed and stop before any value raising.
ITERATION_ORDER_CASES = {
    "object key sorted first raises first": (
        'r contains x if {\n\ts := input.s[name]\n\tstartswith(s.v, "a")\n\tx := name\n}\n',
        {"s": {"web": {"v": {}}, "db": {"v": 1}}},
    ),
    "nested iteration, inner object": (
        'r contains x if {\n\t_ := input.vols[v1]\n\tsvc := input.s[name]\n\tv := svc.v[k]\n'
        '\tstartswith(v, sprintf("%s:", [v1]))\n\tx := 1\n}\n',
        {"s": {"web": {"v": ["x", {}]}, "db": {"v": {"a": 1}}}, "vols": {"shared": {}, "dev": {}}},
    ),
    "an early exit OPA takes first": (
        'r if {\n\tstartswith(input.s[_], "a")\n}\n',
        {"s": {"z": 1, "a": "abc"}},
    ),
    "an early exit in a function's caller": (
        'f(x) if startswith(x, "a")\n\nr if {\n\tsome v in input.s\n\tf(v)\n}\n',
        {"s": {"z": 1, "a": "abc"}},
    ),
    "through a query": (
        'r contains x if {\n\tsome x in input.s\n\tstartswith(x, "a")\n}\n',
        {"s": {"z": 1, "y": {}}},
    ),
}


@pytest.mark.parametrize("name", list(ITERATION_ORDER_CASES))
def test_first_error_in_opa_iteration_order(oracle: Any, name: str) -> None:
    body, input = ITERATION_ORDER_CASES[name]
    _agree(oracle, _P + body, "data.p.r", input)


def test_first_error_in_opa_order_through_eval_query(oracle: Any) -> None:
    body, input = ITERATION_ORDER_CASES["object key sorted first raises first"]
    want, want_msg = opa_outcome(oracle, _P + body, "data.p.r", input)
    for form in EXECUTION_FORMS:
        with in_form(form):
            engine = pyrego.Engine()
            engine.set_strict_builtin_errors(True)
            engine.add_policy("p.rego", _P + body)
            with pytest.raises(pyrego.RegoError) as caught:
                engine.eval_query("x := data.p.r", input=input)
        assert ((want[0], caught.value.code), str(caught.value).split("\n")[0]) == (want, want_msg), form


# A comprehension among an expression's operands stays in the expression:
# OPA evaluates it after the calls it moves out of that expression, so a
# call there that is undefined (or raises) comes before anything the
# comprehension raises (a helper of the policies called in it; a builtin,
# with strict builtin errors).
COMPREHENSION_ORDER_CASES = {
    "function in a comprehension, a later key's call undefined": (
        _F + 'r contains v if {\n\ts := {k | some k in input.ks}\n\tv := {"z": [f(p) | p := input.n], "a": upper(s[a])}\n}\n',
        {"n": 1, "ks": []},
    ),
    "function in a comprehension in a call": (
        _F + 'r contains v if {\n\ts := {k | some k in input.ks}\n\tv := {"z": concat(".", [f(p) | p := input.n]), "a": upper(s[a])}\n}\n',
        {"n": 1, "ks": []},
    ),
    "builtin in a comprehension, a later key's call raising": (
        'r contains v if {\n\tv := {"z": [to_number(p) | p := "x"], "a": upper(input.n)}\n}\n',
        {"n": 1},
    ),
    "builtin in a comprehension, an array": (
        'r contains v if {\n\tv := [[to_number(p) | p := "x"], upper(input.n)]\n}\n',
        {"n": 1},
    ),
    "builtin in a comprehension, a call's operands": (
        'r contains v if {\n\tv := sprintf("%v %v", [[to_number(p) | p := "x"], upper(input.n)])\n}\n',
        {"n": 1},
    ),
}


@pytest.mark.parametrize("name", list(COMPREHENSION_ORDER_CASES))
def test_comprehension_after_calls_moved_out(oracle: Any, name: str) -> None:
    body, input = COMPREHENSION_ORDER_CASES[name]
    _agree(oracle, _P + body, "data.p.r", input)


def test_first_error_in_opa_order_through_a_prepared_rule(oracle: Any) -> None:
    body, input = ITERATION_ORDER_CASES["object key sorted first raises first"]
    want, want_msg = opa_outcome(oracle, _P + body, "data.p.r", input)
    for form in EXECUTION_FORMS:
        with in_form(form):
            engine = pyrego.Engine()
            engine.set_strict_builtin_errors(True)
            engine.add_policy("p.rego", _P + body)
            rule = engine.prepare_rule("data.p.r")
            rule({"s": {}})  # (a call that succeeds: the next ones do not go through eval_rule)
            for _ in range(3):
                with pytest.raises(pyrego.RegoError) as caught:
                    rule(input)
                assert ((want[0], caught.value.code), str(caught.value).split("\n")[0]) == (want, want_msg), form


# A whole number followed by more text: Go's decoder reads the number, then
# fails on the next token ("1.5.3" reads 1.5, then "."), unlike a number
# broken off in the middle ("1.", "1e"), whose error is the end of input.
JSON_NUMBER_TAIL_TEXTS = ["0.0.0.0/0", "1.5.3", "1.5e3.2", "-1.5.", "1e5e", "1 2.3.4", "[1] 2.5.", "1.", "1e", "1 2.", "1 2.x", "1.x"]


@pytest.mark.parametrize("text", JSON_NUMBER_TAIL_TEXTS)
def test_json_unmarshal_text_after_a_number(oracle: Any, text: str) -> None:
    _agree(oracle, _P + "r := json.unmarshal(input.s)\n", "data.p.r", {"s": text})
