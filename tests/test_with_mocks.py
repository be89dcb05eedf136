"""``with``: replacements that must hold at every depth, and the targets OPA refuses.

Each case is a small program with the answer OPA v1.20.2 gives (written down
here, and checked against OPA itself when the oracle is available); every
case runs in the three execution forms (closures, compact and fast generated
code). Error cases name OPA's error code and a part of its message.
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego


def _case(id: str, policy: str, want: Any, message: str | None = None, query: str = "x := data.p.r", input: Any = None) -> Case:
    return Case(id, {"p.rego": "package p\n" + policy}, query, want, input=input, message=message)


# -- replacements stay in force inside functions, `every` and nested `with`
DEPTH = [
    _case(
        "mocked-rule-survives-nested-with-in-function",
        "now := 1\nf(_) := y if { y := now with input as {} }\nr if { f(1) == 2 with now as 2 }",
        {"x": True},
    ),
    _case(
        "mocked-rule-survives-every-with-own-with",
        'limits := {"cpu": 1}\nok(x) if { every v in [x] { v <= limits.cpu } with input.a as 1 }\nr if { ok(4) with limits as {"cpu": 8} }',
        {"x": True},
    ),
    _case(
        "mocked-ref-head-object-survives-nested-with",
        'tier := "gold"\nlimits.cpu := 4 if tier == "gold"\nlimits.mem := 8\n'
        "show(x) := [limits, x] if { every _ in [1] { limits.cpu > 0 } with input.t as x }\n"
        'r := y if { y := show(1) with data.p.limits as {"cpu": 1} }',
        {"x": [{"cpu": 1}, 1]},
    ),
    _case(
        "mocked-rule-kept-when-nested-with-replaces-input",
        "q := input.v\ns := [q, input.v]\nf(x) := y if { y := s with input.v as x }\nr := y if { y := f(5) with q as 100 }",
        {"x": [100, 5]},
    ),
    _case(
        "mocked-rule-kept-when-nested-with-replaces-base-data",
        "q := data.cfg.x\nf(x) := y if { y := [q, data.cfg.x] with data.cfg.x as x }\nr := y if { y := f(5) with q as 100 }",
        {"x": [100, 5]},
    ),
    _case(
        "nested-with-replaces-mocked-rule-again",
        "q := 1\nf(x) := y if { y := q with data.p.q as x }\nr := y if { y := f(5) with q as 100 }",
        {"x": 5},
    ),
    _case(
        "rule-data-and-function-mocks-three-levels-deep",
        "a := 1\nb := 2\nc(x) := x\nd(x) := x * 100\nf(x) := [a, b, c(x)]\n"
        "g(x) := y if { y := f(x) with input.z as 0 }\nh(x) := y if { y := g(x) with b as 20 }\n"
        "r := y if { y := h(3) with a as 10 with c as d }",
        {"x": [10, 20, 300]},
    ),
    _case(
        "function-mocks-three-levels-deep",
        "c(x) := x\ne(x) := -1\nd(x) := x * 100\nf(x) := [c(x), e(x)]\ng(x) := y if { y := f(x) with e as 5 }\n"
        "h(x) := y if { y := g(x) with input.q as 1 }\nr := y if { y := h(3) with c as d }",
        {"x": [300, 5]},
    ),
    _case(
        "function-replacement-sees-mocked-rule",
        "a := 1\nf(x) := x\ng(x) := [x, a]\nr := y if { y := f(1) with f as g with a as 7 }",
        {"x": [1, 7]},
    ),
    _case(
        "function-replacement-runs-without-function-mocks",
        "f(x) := x\nh(x) := 0\ng(x) := [x, h(x)]\nr := y if { y := f(1) with f as g with h as 9 }",
        {"x": [1, 0]},
    ),
    _case(
        "function-replacement-applies-its-own-with",
        "f(x) := x\nh(x) := 0\ng(x) := y if { y := [x, h(x)] with h as 5 }\nr := y if { y := f(1) with f as g with h as 9 }",
        {"x": [1, 5]},
    ),
    _case(
        "mock-calls-the-function-it-replaces",
        "f(x) := x + 1\ng(x) := f(x) * 10\nr := y if { y := f(1) with f as g }",
        {"x": 20},
    ),
    _case(
        "mock-calls-the-builtin-it-replaces",
        "mock(xs) := count(xs) + 100\nr := y if { y := count([1, 2]) with count as mock }",
        {"x": 102},
    ),
    _case(
        "http-send-mock-reaches-the-real-builtin",
        "mock(req) := http.send(req)\n"
        'r := y if { y := http.send({"method": "get", "url": "http://127.0.0.1:1", "raise_error": false}).status_code with http.send as mock }',
        {"x": 0},
    ),
    Case(
        "query-mock-survives-nested-with",
        {"p.rego": "package p\nnow := 1\nf(_) := y if { y := now with input as {} }"},
        "x := data.p.f(1) with data.p.now as 3",
        {"x": 3},
    ),
    Case(
        "query-function-mock-reaches-function-body",
        {"p.rego": "package p\ng(x) := x + 1\nf(x) := y if { y := g(x) with input.a as 1 }"},
        "x := data.p.f(1) with data.p.g as 7",
        {"x": 7},
    ),
    _case("every-with-input-target", "r if { every x in [1] { x == input.v } with input.v as 1 }", {"x": True}),
    _case("every-with-rule-target", "q := 2\nr if { every x in [1] { x == q } with q as 1 }", {"x": True}),
]

# -- `with` in rule heads and template strings
HEADS = [
    _case("with-in-rule-head", "f(x) := x + 1\ng(x) := 10\nr := [y | y := f(1) with f as g]", {"x": [10]}),
    _case("with-in-else-head", "f(x) := x + 1\ng(x) := 10\nr := 0 if { false } else := [y | y := f(1) with f as g]", {"x": [10]}),
    _case("with-in-template-string", 'f(x) := x + 1\ng(x) := 10\nr := s if { s := $"{f(1) with f as g} {f(1)}" }', {"x": "10 2"}),
    _case("with-in-template-string-head", 'f(x) := x + 1\ng(x) := 10\nr := $"{f(1) with f as g} {f(1)}"', {"x": "10 2"}),
]

# -- comparisons: `==` as a whole expression is unification, which no `with` replaces
COMPARISONS = [
    _case("equal-expression-not-replaced", "f(_, _) := false\nr if { 1 == 1 with equal as f }", {"x": True}),
    _case("equal-call-expression-not-replaced", "f(_, _) := false\nr if { equal(1, 1) with equal as f }", {"x": True}),
    _case("equal-value-replaced", "f(_, _) := false\nr := y if { y := 1 == 1 with equal as f }", {"x": False}),
    _case("equal-in-called-function-not-replaced", "f(_, _) := false\ng(x) if { x == 1 }\nr if { g(1) with equal as f }", {"x": True}),
    _case("neq-replaced", "f(_, _) := false\nr if { 1 != 2 with neq as f }", "undefined"),
    _case("lt-replaced", "f(_, _) := false\nr if { 1 < 2 with lt as f }", "undefined"),
    _case("lt-value-replaced", "f(_, _) := 7\nr := y if { y := 1 < 2 with lt as f }", {"x": 7}),
    _case("lt-in-called-function-replaced", "f(_, _) := false\ng(x) if { x < 2 }\nr if { g(1) with lt as f }", "undefined"),
    _case("gte-replaced-by-value", "r if { 1 >= 2 with gte as true }", {"x": True}),
]

PARTIAL = "with keyword cannot partially replace virtual document(s)"
NOT_A_TARGET = "with keyword target must reference existing input, data, or a function"

# -- targets OPA refuses, and the errors it raises
REFUSED = [
    _case("partial-rule-document", 'q := {"a": 1}\nr := x if { x := q with data.p.q.a as 2 }', "rego_compile_error", PARTIAL),
    _case("partial-rule-document-short-name", 'q := {"a": 1}\nr := x if { x := q with q.a as 2 }', "rego_compile_error", PARTIAL),
    _case("partial-function", "f(x) := x\nr := y if { y := 1 with data.p.f.a as 2 }", "rego_compile_error", PARTIAL),
    Case(
        "partial-rule-document-in-query",
        {"p.rego": 'package p\nq := {"a": 1}'},
        "x := data.p.q with data.p.q.a as 2",
        "rego_compile_error",
        message=PARTIAL,
    ),
    _case("data-replaced-inside-rule", 'q := 1\nr := x if { x := q with data as {"p": {"q": 2}} }', "rego_recursion_error", "rule data.p.r is recursive"),
    _case("own-package-replaced", 'q := 1\nr := x if { x := q with data.p as {"q": 2} }', "rego_recursion_error", "rule data.p.r is recursive: data.p.r -> data.p.r"),
    _case("own-rule-replaced", "q := 1\nr := x if { x := q with data.p.r as 2 }", "rego_recursion_error", "rule data.p.r is recursive: data.p.r -> data.p.r"),
    _case(
        "replaced-rule-reads-the-rule",
        "q := r\ns := 1\nr := x if { x := s with data.p.q as 2 }",
        "rego_recursion_error",
        # (q, which reads r, is on the cycle too: reported first, by location)
        "rule data.p.q is recursive: data.p.q -> data.p.r -> data.p.q",
    ),
    _case("function-replaces-its-package", "f(x) := y if { y := x with data.p as {} }\nr := f(1)", "rego_recursion_error", "rule data.p.f is recursive"),
    _case("other-package-replaced", 'q := data.o.v\nr := x if { x := q with data.o as {"v": 2} }', {"x": 2}),
    _case("metadata-chain", "r if { true with rego.metadata.chain as [] }", "rego_compile_error", 'replacement of "rego.metadata.chain" invalid'),
    _case("metadata-rule", "r if { true with rego.metadata.rule as {} }", "rego_compile_error", 'replacement of "rego.metadata.rule" invalid'),
    _case("unification", "r if { 1 = 2 with eq as true }", "rego_compile_error", 'replacement of "eq" invalid'),
    _case("internal-print", "r if { true with internal.print as 1 }", "rego_compile_error", 'replacement of internal function "internal.print" invalid'),
    _case("internal-member", "f(_, _) := false\nr if { 1 in [1] with internal.member_2 as f }", "rego_compile_error", "replacement of internal function"),
    _case("void-builtin", "r if { true with print as 1 }", "rego_compile_error", "target must not be a void function"),
    _case("relation-builtin", "r if { true with walk as 1 }", "rego_compile_error", "target must not be a relation"),
    _case("local-variable", "r if { x := 1; true with x as 2 }", "rego_type_error", NOT_A_TARGET),
    _case("unknown-function", "r if { true with nope.fn as 1 }", "rego_type_error", NOT_A_TARGET),
    _case("variable-key-in-data-target", "r if { x := data.y with data.x[k] as 1 }", "rego_unsafe_var_error", "var k is unsafe"),
    _case("bound-variable-key-in-data-target", 'r := x if { k := "a"; x := data.x with data.x[k] as 1 }', "rego_unsafe_var_error", "var k is unsafe"),
    _case("bound-variable-key-in-input-target", 'r := x if { k := "a"; x := input.a with input[k] as 1 }', "rego_unsafe_var_error", "var k is unsafe"),
    _case("number-key-in-data-target", "r := x if { x := data.x with data.x[1] as 1 }", "eval_conflict_error", "bad document path"),
    _case("boolean-key-in-data-target", "r := x if { x := 5 with data.x[true] as 1 }", "eval_conflict_error", "bad document path"),
    _case("number-key-in-input-target", "r := x if { x := 5 with input[1] as 1 }", "eval_conflict_error", "bad document path"),
    _case("builtin-as-data-value", "q := 1\nr := y if { y := q with data.p.q as count }", "rego_unsafe_var_error", "var count is unsafe"),
    _case("builtin-as-input-value", "r := y if { y := input.x with input.x as count }", "rego_unsafe_var_error", "var count is unsafe"),
    _case("function-as-input-value", "is_weekend(x) := false\nr := y if { y := 1 with input.x as is_weekend }", "rego_type_error", "function data.p.is_weekend used as reference, not called"),
    _case("function-as-data-value", "q := 1\nf(x) := x\nr := y if { y := q with data.p.q as f }", "undefined"),
    _case("function-replaced-by-itself", "is_weekend(x) := false\nr if { is_weekend(1) with is_weekend as data.p.is_weekend }", "undefined"),
    _case("function-replaced-by-value", "f(x) := x\nr := y if { y := f(3) with data.p.f as 2 }", {"x": 2}),
]

USED = "used as reference, not called"

# -- function replacements on `every`, and arities
FUNCTIONS = [
    _case("every-function-mock", "is_weekend(x) := false\nr if { every x in [1] { is_weekend(x) } with is_weekend as true }", "rego_type_error", f"function data.p.is_weekend {USED}"),
    _case("every-builtin-mock", 'r if { every x in ["a"] { startswith(x, "b") } with startswith as true }', "rego_type_error", f"function startswith {USED}"),
    _case("every-function-mock-by-function", "is_weekend(x) := false\nyes(x) := true\nr if { every x in [1] { is_weekend(x) } with is_weekend as yes }", "rego_type_error", f"function data.p.is_weekend {USED}"),
    _case("every-mock-of-function-called-deeper", "f(x) := false\ng(x) := f(x)\nr if { every x in [1] { g(x) } with f as true }", "rego_type_error", f"function data.p.f {USED}"),
    _case("every-data-replaced-by-function", "f(x) := x\nq := [1]\nr if { every y in q { y } with data.p.q as f }", "rego_type_error", f"function data.p.f {USED}"),
    _case("not-with-function-mock", "f(x) := false\nr if { not f(1) with f as true }", "undefined"),
    _case("function-by-builtin-of-other-arity", "f(x) := x\nr := y if { y := f(1) with f as startswith }", "rego_type_error", "data.p.f: arity mismatch"),
    _case("function-by-function-of-more-args", "f(x) := x\ng(x, y) := x\nr := y if { y := f(1) with f as g }", "rego_type_error", "data.p.f: arity mismatch"),
    _case("function-by-function-of-fewer-args", "f(x, y) := x\ng(x) := x\nr := y if { y := f(1, 2) with f as g }", "rego_type_error", "data.p.f: arity mismatch"),
    _case("builtin-by-function-of-other-arity", "g(x, y) := x\nr := y if { y := count([1]) with count as g }", "rego_type_error", "count: arity mismatch"),
    _case("builtin-by-builtin-of-other-arity", "r := y if { y := count([1]) with count as startswith }", "rego_type_error", "count: arity mismatch"),
    _case("arity-mismatch-without-a-call", "f(x) := x\nr if { true with f as startswith }", "rego_type_error", "data.p.f: arity mismatch"),
    _case("arity-mismatch-for-a-call-deeper", "f(x) := x\ng(x, y) := x\nq := f(1)\nr := y if { y := q with f as g }", "rego_type_error", "data.p.f: arity mismatch"),
    _case("arity-mismatch-for-a-builtin-call-deeper", "q := count([1])\nr := y if { y := q with count as startswith }", "rego_type_error", "count: arity mismatch"),
]

CASES = DEPTH + HEADS + COMPARISONS + REFUSED + FUNCTIONS


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
