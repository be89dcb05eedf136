"""Unification patterns holding refs whose variables the refs themselves bind.

``input.a[c] = {"k": input.a[i]}`` is safe in OPA: iterating ``input.a[i]``
binds ``i``, so the ref inside the object pattern is compared with the
matching part of the other side for each of its values. Each case has the
answer OPA v1.20.2 gives, checked against OPA itself when the oracle is
available, and runs in the three execution forms.
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

INPUT = {"a": {"s1": "v", "o1": {"k": "v"}, "o2": {"k": "w"}, "n": [1, "v"]}, "pick": "o1"}


def rule(body: str, want: Any) -> Case:
    text = "package p\n\nr contains [c, i] if {\n" + "".join(f"  {line}\n" for line in body.split("; ")) + "}\n"
    return Case(body, {"p.rego": text}, "x := data.p.r", {"x": want}, input=INPUT)


CASES = [
    rule('input.a[c] = {"k": input.a[i]}', [["o1", "s1"]]),
    rule('{"k": input.a[i]} = input.a[c]', [["o1", "s1"]]),
    rule('c = input.pick; input.a[c] = {"k": input.a[i]}', [["o1", "s1"]]),
    rule('input.a[c] = [1, input.a[i]]', [["n", "s1"]]),
    rule('input.a[c] = {"k": input.a[i]}; not input.a[i] = "w"', [["o1", "s1"]]),
    rule('input.a[c] = {"k": input.a[i]}; i != "s1"', []),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
