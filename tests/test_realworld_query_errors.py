"""Errors of queries as OPA words them (found comparing real-world policies with OPA).

A query has no file name in OPA. Its compile errors start ``row:col:``; an
error while evaluating it starts with the text written where it happened:
the failing call (``1 / 0: eval_builtin_error: div: divide by zero``), the
whole expression when the call is one (``not to_number("w")``, whose
location is then the expression's), or the key an object comprehension
made twice.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import pyrego

POLICY = "package p\n\nr := [1, \"a\"]\n\nf(x) := x / 0\n"

QUERIES = [
    "x := 1 / 0",
    "x := [y | y := to_number(\"a\")]",
    "x := data.p.r[_] + 1",
    "y := 2; x := y / 0",
    "x := 1 +\n  to_number(\"b\")",
    "x := 1/0 + 2",
    "x := object.get({}, [1], to_number(\"u\"))",
    "to_number(\"q\")",
    "x := 1\nnot to_number(\"w\")",
    "to_number(input) with input as \"a\"",
    "some x in [\"a\"]; to_number(x)",
    "x := data.p.f(1)",  # in a rule: its file and row
    "every v in [1] { v / 0 }",
    # a comprehension making one key twice: named by the key
    "x := {k: v | some v in [1, 2]; k := \"a\"}",
    "x := {[k, 1]: v | some v in [1, 2]; k := \"a\"}",
    "x := {lower(k): v | some k, v in {\"A\": 1, \"a\": 2}}",
]

_HEADER = re.compile(r"^\d+ errors? occurred:[ \n]")


def _opa(oracle: Any, query: str) -> tuple[str, Any]:
    res = oracle.evaluate({"p.rego": POLICY}, query)
    assert res.is_error, query
    return _HEADER.sub("", res.error_message or ""), res.error_code


@pytest.mark.parametrize("query", QUERIES)
def test_query_evaluation_errors_name_their_place_as_opa(query: str, oracle: Any, execution_form: str) -> None:
    want, code = _opa(oracle, query)
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.add_policy("p.rego", POLICY)
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_query(query)
    assert (str(info.value), info.value.code) == (want, code)


def test_a_call_that_is_an_expression_is_placed_at_the_expression() -> None:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_query("x := 1\nnot to_number(\"w\")")
    assert info.value.to_dict()["location"] == {"file": "", "row": 2, "col": 1}
