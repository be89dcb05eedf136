"""A relation builtin used as a value: one value per solution.

``walk`` is OPA's one relation: ``walk(x)`` as a term yields each
``[path, value]`` pair of ``x`` in turn. In a query each pair is a result;
as a complete rule's or a function's value (``r := walk(input)``,
``f(x) := walk(x)``, an object rule's leaf) each pair is a solution, and two
different ones are OPA's conflict error. Each case is a small program with the
answer OPA v1.20.2 gives (checked against OPA itself when the oracle is
available), run in the three execution forms (closures, compact and fast
generated code).
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

INPUT = {"a": [1, 2]}
PAIRS = [[[], {"a": [1, 2]}], [["a"], [1, 2]], [["a", 0], 1], [["a", 1], 2]]
RULE_CONFLICT = "complete rules must not produce multiple outputs"
FUNCTION_CONFLICT = "functions must not produce multiple outputs for same inputs"


def _case(id: str, policy: str, want: Any, query: str = "x := data.p.r", message: str | None = None, many: bool = False) -> Case:
    return Case(id, {"p.rego": "package p\n" + policy}, query, want, input=INPUT, message=message, many=many)


CONFLICTS = [
    _case("assigned-rule-value", "r := walk(input)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("unified-rule-value", "r = walk(input)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("value-bound-in-body", "r := x if x := walk(input)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("output-argument-in-body", "r := x if walk(input, x)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("with-a-body", "r := walk(input) if input.a", "eval_conflict_error", message=RULE_CONFLICT),
    _case("with-a-default", "default r := 0\nr := walk(input)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("first-branch-of-else", "r := walk(input) if true\nelse := 1", "eval_conflict_error", message=RULE_CONFLICT),
    _case("else-branch", "r := 1 if false\nelse := walk(input)", "eval_conflict_error", message=RULE_CONFLICT),
    _case("inside-an-array", "r := [walk(input)]", "eval_conflict_error", message=RULE_CONFLICT),
    _case("indexed", "r := walk([[1]])[1]", "eval_conflict_error", message=RULE_CONFLICT),
    _case("compared", "r := walk(input)[0] == walk(input)[0]", "eval_conflict_error", message=RULE_CONFLICT),
    _case("object-rule-leaf", "o.a := walk(input)", "eval_conflict_error", query="x := data.p.o", message=RULE_CONFLICT),
    _case("object-rule-key", 'o[k] := walk(input) if k := "a"', "eval_conflict_error", query="x := data.p.o", message="object keys must be unique"),
    _case("whole-package", "r := walk(input)", "eval_conflict_error", query="x := data.p", message=RULE_CONFLICT),
    _case("function-value", "f(x) := walk(x)\nr := f(input)", "eval_conflict_error", message=FUNCTION_CONFLICT),
    _case("function-value-bound-in-body", "f(x) := y if y := walk(x)\nr := f(input)", "eval_conflict_error", message=FUNCTION_CONFLICT),
    _case("function-else-value", "f(x) := 1 if false\nelse := walk(x)\nr := f(input)", "eval_conflict_error", message=FUNCTION_CONFLICT),
    _case("function-called-in-query", "f(x) := walk(x)", "eval_conflict_error", query="x := data.p.f(input)", message=FUNCTION_CONFLICT),
    _case("function-output-in-query", "f(x) := walk(x)", "eval_conflict_error", query="data.p.f(input, x)", message=FUNCTION_CONFLICT),
]

ONE_VALUE = [
    _case("scalar-has-one-pair", "r := walk(1)", {"x": [[], 1]}),
    _case("function-on-a-scalar", "f(x) := walk(x)\nr := f(1)", {"x": [[], 1]}),
    _case("every-pair-agrees", "r := count(walk(input))", {"x": 2}),
    _case("one-pair-matches", 'r := v if walk(input, [["a", 0], v])', {"x": 1}),
    _case("set-rule-collects", "s contains walk(input)", {"x": PAIRS}, query="x := data.p.s"),
    _case("comprehension-collects", "r := [x | x := walk(input)]", {"x": PAIRS}),
    _case("not-a-relation", 'r := graph.reachable({"a": ["b"], "b": []}, ["a"])', {"x": ["a", "b"]}),
]

QUERIES = [
    _case("query-assigns-each-pair", "", [{"x": p} for p in PAIRS], query="x := walk(input)", many=True),
    _case("query-unifies-each-pair", "", [{"x": p} for p in PAIRS], query="x = walk(input)", many=True),
    _case("query-output-argument", "", [{"x": p} for p in PAIRS], query="walk(input, x)", many=True),
]

CASES = CONFLICTS + ONE_VALUE + QUERIES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
