"""A rule head's key, value or ref part that is a ref (or holds one) reading
a variable its body does not bind (``result contains all_paths[name]``,
``r contains m[k] if k != "a"``): OPA evaluates the ref in the body, placed
by its safety ordering where it binds the variable, so the variable is not
unsafe. Each
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
    # The body reads the variable without binding it: OPA's safety ordering
    # puts the head's ref first, to bind it.
    Case("set-member-ref-filtered", {"p.rego": _M + 'r contains m[k] if k != "a"\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-declared", {"p.rego": _M + 'r contains m[k] if {\n\tsome k\n\tk != "a"\n}\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-assigned-from", {"p.rego": _M + 'r contains m[k] if {\n\tx := k\n\tx != "a"\n}\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-negated", {"p.rego": _M + 'r contains m[k] if not k == "a"\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-every", {"p.rego": _M + 'r contains m[k] if every y in ["a"] { y != k }\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-comprehension", {"p.rego": _M + 'r contains m[k] if count([1 | k != "a"]) > 0\n'}, "x := data.p.r", {"x": [2]}),
    Case("set-member-ref-with", {"p.rego": _M + "r contains m[k] if true with input as k\n"}, "x := data.p.r", {"x": [1, 2]}),
    Case("set-member-array-of-ref", {"p.rego": _M + 'r contains [k, m[k]] if k != "a"\n'}, "x := data.p.r", {"x": [["b", 2]]}),
    Case("set-member-call-of-ref", {"p.rego": _M + 'r contains m[k] + 10 if k != "a"\n'}, "x := data.p.r", {"x": [12]}),
    Case("object-key-ref-filtered", {"p.rego": _M + 'r[m[k]] := k if k != "a"\n'}, "x := data.p.r", {"x": {"2": "b"}}),
    Case("object-value-ref-filtered", {"p.rego": _M + 'r[k] := m[k] if k != "a"\n'}, "x := data.p.r", {"x": {"b": 2}}),
    Case("head-ref-part-ref", {"p.rego": _M + "r[m[k]].y := k\n"}, "x := data.p.r", {"x": {"1": {"y": "a"}, "2": {"y": "b"}}}),
    Case("complete-value-ref-filtered", {"p.rego": _M + 'r := m[k] if k != "a"\n'}, "x := data.p.r", {"x": 2}),
    Case("function-value-ref-filtered", {"p.rego": _M + 'f(y) := m[k] if {\n\tk != "a"\n\ty == 1\n}\n'}, "x := data.p.f(1)", {"x": 2}),
    Case(
        "function-else-ref-filtered",
        {"p.rego": _M + 'f(y) := m[k] if {\n\tk != "a"\n\ty == 2\n} else := m[j] if j != "b"\n'},
        "x := data.p.f(1)",
        {"x": 1},
    ),
    # Still errors, as in OPA.
    Case("unsafe-other-var", {"p.rego": _M + 'r contains m[k] if {\n\tk != x\n}\n'}, "x := data.p.r", "rego_unsafe_var_error",
         message="p.rego:4: rego_unsafe_var_error: var x is unsafe"),
    Case("unsafe-head-var-not-in-ref", {"p.rego": _M + 'r contains [k, m[j]] if k != "a"\n'}, "x := data.p.r", "rego_unsafe_var_error",
         message="p.rego:3: rego_unsafe_var_error: var k is unsafe"),
    Case("unsafe-comprehension-capture", {"p.rego": _M + 'r contains [v | v := m[k]] if k != "a"\n'}, "x := data.p.r", "rego_unsafe_var_error",
         message="var k is unsafe"),
    Case("print-before-head-ref", {"p.rego": _M + "r contains m[k] if print(k)\n"}, "x := data.p.r", "rego_compile_error",
         message="p.rego:3: rego_compile_error: var k is undeclared"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
