"""``with`` values that are evaluated first: iterating refs, calls, comprehensions.

OPA binds a ``with`` value that holds a ref, a call or a comprehension to a
variable in an expression of its own before the expression it modifies
(its compiler's ``RewriteWithValues``), so ``with input.asset as assets[_]``
evaluates the expression once per element, and ``input.xs[i]`` binds ``i``.
Each case is a small program with the answer OPA v1.20.2 gives (checked
against OPA itself when the oracle is available), run in the three execution
forms (closures, compact and fast generated code).
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

BASE = "package p\nq := input.a\nf(x) := x + 1\ng(x) := x * 10\n"
INPUT = {"xs": [1, 2, 3], "b": [1, 2]}


def _case(id: str, policy: str, want: Any, query: str = "x := data.p.r", message: str | None = None, many: bool = False) -> Case:
    return Case(id, {"p.rego": BASE + policy}, query, want, input=INPUT, message=message, many=many)


# -- the shared test helper of a policy repository, written exactly so
TEMPLATES = {
    "templates.rego": 'package templates.t1\ndeny contains n if { n := input.asset.name; startswith(n, "bad") }\n',
    "lib.rego": "package lib.test\n"
    "run(t, assets) := {v | some asset in assets; v := data.templates[t].deny with input.asset as asset}\n"
    "run_each(t, assets) := {v | v := data.templates[t].deny with input.asset as assets[_]}\n",
}
ASSETS = [{"name": "bad1"}, {"name": "ok"}, {"name": "bad2"}]

HELPERS = [
    Case("helper-binds-each-asset", TEMPLATES, f"x := data.lib.test.run(\"t1\", {ASSETS!r})".replace("'", '"'), {"x": [[], ["bad1"], ["bad2"]]}),
    Case("helper-iterates-in-the-with-value", TEMPLATES, f"x := data.lib.test.run_each(\"t1\", {ASSETS!r})".replace("'", '"'), {"x": [[], ["bad1"], ["bad2"]]}),
    Case(
        "query-iterates-in-the-with-value",
        TEMPLATES,
        "v := data.templates.t1.deny with input.asset as input.assets[_]",
        [{"v": ["bad1"]}, {"v": []}, {"v": ["bad2"]}],
        input={"assets": ASSETS},
        many=True,
    ),
]

ITERATING = [
    _case("wildcard-in-a-set-rule", "r contains y if y := q with input.a as input.xs[_]", {"x": [1, 2, 3]}),
    _case("index-var-is-bound", "r contains [i, y] if y := q with input.a as input.xs[i]", {"x": [[0, 1], [1, 2], [2, 3]]}),
    _case("two-iterating-modifiers", "r contains [y, z] if { y := q with input.a as input.xs[_] with input.b as input.b[_]; z := 0 }", {"x": [[1, 0], [2, 0], [3, 0]]}),
    _case("later-modifier-of-same-target-wins", "r contains y if { y := q with input.a as input.xs[_] with input.a as 7 }", {"x": [7]}),
    _case("function-replaced-by-each-element", "r contains y if { y := f(1) with f as input.xs[_] }", {"x": [1, 2, 3]}),
    _case("negated-expression-iterates", "r contains k if { not q == 2 with input.a as input.xs[k] }", {"x": [0, 2]}),
    _case("negated-with-nested-call-binds-once", "r := count([1 | not is_string(count(input.b)) with input.a as input.xs[_]])", {"x": 3}),
    _case("call-split-off-binds-once", "r := count([y | y := count(input.b) with input.a as input.xs[_]])", {"x": 3}),
    _case("some-in-under-iterating-with", "r contains y if { some y in [q] with input.a as input.xs[_] }", {"x": [1, 2, 3]}),
    _case("every-under-iterating-with", "r if { every v in [1] { q > v } with input.a as input.xs[_] }", {"x": True}),
    _case("every-over-each-replacement", "r contains y if { every x in input.xs { x > 1 } with input.xs as [input.b, [5]][_]; y := 1 }", {"x": [1]}),
    _case("inside-a-comprehension", "r := [y | y := q with input.a as input.xs[_]]", {"x": [1, 2, 3]}),
    _case("object-value-iterates", 'r contains y if { y := q with input.a as {"k": input.xs[_]} }', {"x": [{"k": 1}, {"k": 2}, {"k": 3}]}),
    _case("in-a-function-with-bound-key", "h(k) := y if y := q with input.a as input.xs[k]\nr := h(1)", {"x": 2}),
    _case(
        "in-a-function-conflicts",
        "h(k) := y if y := q with input.a as input.xs[_]\nr := h(1)",
        "eval_conflict_error",
        message="functions must not produce multiple outputs for same inputs",
    ),
    _case("under-an-outer-with", "s := v if { v := q with input.a as input.xs[_] }\nr := x if x := s with input.xs as [9]", {"x": 9}),
    _case(
        "under-an-outer-with-conflicts",
        "s := v if { v := q with input.a as input.xs[_] }\nr := x if x := s with input.xs as [9, 8]",
        "eval_conflict_error",
        message="complete rules must not produce multiple outputs",
    ),
    _case("nested-chain-in-function", "s(x) := v if { v := q with input.a as input.xs[x] }\nt(y) := v if { v := s(y) with input.xs as [y, input.b[_]] }\nr := {t(0), t(1)}", "eval_conflict_error"),
    _case("value-needs-a-later-binding", "r contains y if { y := q with input.a as input.xs[k]; k = 1 }", {"x": [2]}),
]

VALUES = [
    _case("undefined-value-fails", "r := y if y := q with input.a as input.missing", "undefined"),
    _case("undefined-value-fails-negation", "r if not q with input.a as input.missing", "undefined"),
    _case("call-value", "r := y if y := q with input.a as f(1)", {"x": 2}),
    _case("call-inside-a-value", 'r := y if y := q with input as {"a": f(input.b[0])}', {"x": 2}),
    _case("comprehension-value-does-not-iterate", "r := y if y := q with input.a as [z | z := input.xs[_]]", {"x": [1, 2, 3]}),
    _case("input-as-a-value", "r := y if y := q with input.a as input.b", {"x": [1, 2]}),
    _case("function-by-function", "r contains y if { y := f(1) with f as g }", {"x": [10]}),
    _case("function-by-rule", "s := 5\nr := y if { y := f(1) with f as s }", {"x": 5}),
    _case("function-by-value", "r contains y if { y := f(1) with f as 7 }", {"x": [7]}),
    _case("query-iterates", "", [{"y": 1}, {"y": 2}, {"y": 3}], query="y := data.p.q with input.a as input.xs[_]", many=True),
    _case(
        "query-binds-index",
        "",
        [{"i": 0, "y": 1}, {"i": 1, "y": 2}, {"i": 2, "y": 3}],
        query="y := data.p.q with input.a as input.xs[i]",
        many=True,
    ),
    _case("query-negation-iterates", "", [{}, {}], query="not data.p.q == 2 with input.a as input.xs[_]", many=True),
]

REFUSED = [
    _case("unbound-var-in-a-call", "r contains y if { y := q with input.a as f(u) }", "rego_unsafe_var_error", message="var u is unsafe"),
    _case("unbound-var-in-a-comprehension", "r contains y if { y := q with input.a as [u | true] }", "rego_unsafe_var_error", message="var u is unsafe"),
    _case("unbound-var-as-value", "r contains y if { y := q with input.a as u }", "rego_unsafe_var_error", message="var u is unsafe"),
    _case("builtin-as-a-value", "r contains y if { y := q with input.a as count }", "rego_unsafe_var_error", message="var count is unsafe"),
    _case("function-as-a-value", "r contains y if { y := q with input.a as data.p.f }", "rego_type_error", message="function data.p.f used as reference, not called"),
    _case("assigned-after-use", "r contains y if { y := q with input.a as input.xs[k]; k := 1 }", "rego_compile_error", message="var k referenced above"),
]

CASES = HELPERS + ITERATING + VALUES + REFUSED


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
