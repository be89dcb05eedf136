"""A rule head's key or value that is a ref reading a variable its body does
not mention (``result contains all_paths[name]``): OPA evaluates the ref in
the body, so the variable is bound by iterating the ref, not unsafe. Each
case has OPA v1.20.2's answer (checked against OPA when the oracle is
available) and runs in the three execution forms.
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

_M = 'package p\nm := {"a": 1, "b": 2}\n'

CASES = [
    Case("set-member-ref", {"p.rego": _M + "r contains m[k]\n"}, "x := data.p.r", {"x": [1, 2]}),
    Case("set-member-nested-ref", {"p.rego": 'package p\nm := {"a": [1], "b": [2, 3]}\nr contains m[k][_]\n'}, "x := data.p.r", {"x": [1, 2, 3]}),
    Case("set-member-ref-of-input", {"p.rego": "package p\nr contains input.xs[i].name\n"}, "x := data.p.r", {"x": ["u", "v"]}, input={"xs": [{"name": "u"}, {"name": "v"}, {}]}),
    Case("object-value-ref", {"p.rego": _M + "r[k] := m[k]\n"}, "x := data.p.r", {"x": {"a": 1, "b": 2}}),
    Case("complete-value-ref-two-values", {"p.rego": _M + "r := m[k]\n"}, "x := data.p.r", "eval_conflict_error"),
    Case("complete-value-ref-one-value", {"p.rego": 'package p\nm := {"a": 1}\nr := m[k]\n'}, "x := data.p.r", {"x": 1}),
    Case(
        "graph-paths-example",
        {
            "p.rego": (
                'package p\ng := {"a": [], "c": ["a"], "b": ["c"]}\n'
                "all_paths[root] := paths if {\n\tg[root]\n\tpaths := graph.reachable_paths(g, {root})\n}\n"
                "result contains all_paths[name]\n"
            )
        },
        "x := data.p.result",
        {"x": [[["a"]], [["b", "c", "a"]], [["c", "a"]]]},
    ),
    Case("else-branch-ref", {"p.rego": _M + "f(x) := m[k] if x == 1\nelse := 0\n"}, "x := data.p.f(2)", {"x": 0}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
