"""``not E`` where part of ``E`` is undefined.

OPA evaluates some parts of a negated expression before the negation: calls
nested in its operands, and (after ordering) refs among a call's operands or
nested in composites; ``a == b`` in a rule or function body is unification,
whose own operands are not evaluated first, while in a query ``==`` stays a
call. When such a part is undefined the body fails, so ``not E`` is
undefined, not true (see ``pyrego.compile.rewrite``). ``import future.keywords.not``
keeps all of ``E`` inside the negation.

Each case has the answer OPA v1.20.2 gives, written down and checked against
OPA itself when the oracle is available; every case runs in the three
execution forms (closures, compact and fast generated code).
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

HELPERS = "f(x) := 1 if x == 2\nh(c) := c.x\ng(x) := true\nqq := input.missing\nq := 1 if false\n"
INPUT = {"s": "a", "n": 1, "xs": [1], "o": {}}
TRUE = {"x": True}


def in_rule(expr: str, want: Any, **kw: Any) -> Case:
    """``expr`` as the last expression of ``r`` (after ``x := input.o``)."""
    text = f"package p\n{HELPERS}r if {{\n  x := input.o\n  {expr}\n}}\n"
    return Case(f"rule: {expr}", {"p.rego": text}, "x := data.p.r", want, input=kw.pop("input", INPUT), **kw)


def program(id: str, rules: str, want: Any, query: str = "x := data.p.r", **kw: Any) -> Case:
    return Case(id, {"p.rego": f"package p\n{HELPERS}{rules}\n"}, query, want, input=kw.pop("input", INPUT), **kw)


def query(text: str, want: Any, **kw: Any) -> Case:
    """``text`` as an ad-hoc query (with the helpers in package ``p``)."""
    return Case(f"query: {text}", {"p.rego": f"package p\n{HELPERS}"}, text, want, input=kw.pop("input", INPUT), **kw)


# Undefined in OPA: a part evaluated before the negation is undefined.
UNDEFINED_IN_RULE = [
    "not is_string(input.missing)",
    "not count(input.missing) == 0",
    "not f(input.missing)",
    'not startswith(input.missing, "a")',
    'not upper(input.missing) == "A"',
    "not h({}) == 1",
    "not g(input.missing)",
    "not input.missing != 1",
    "not input.missing < 1",
    "not neq(input.missing, 1)",
    "not plus(input.missing, 1) == 2",
    "not input.missing + 1 == 2",
    "not is_string(data.missing)",
    "not is_string(input.o.missing)",
    "not is_string(input.xs[5])",
    "not is_string(x.missing)",
    "not is_string(q)",
    "not is_string(qq)",
    "not is_string([input.missing])",
    'not is_string({"a": input.missing})',
    "not startswith(input.s, input.missing)",
    'not input.missing in ["a"]',
    'not "a" in input.missing',
    'not contains(input.missing, "a")',
    "not [input.missing] == [1]",
    "not lower(input.missing)",
    "not count(input.missing)",
    "not h(input.o) == 1",
    "not [h(input.o)] == [1]",
    'not {"a": h(input.o)}.a == 1',
    # found while checking the rules above
    "not h(input.o).y",
    "not h({}).y == 1",
    "not f(input.missing) == 1",
    "not g(input.o.missing) == true",
    "not count(input.missing, 5)",
    "not input.xs[count(input.missing)] == 1",
    "not input.xs[x.missing] == 1",
    "not [1, 2][input.missing] == 1",
    "not [input.missing][0] == 1",
    'not {"a": input.missing}.a == 1',
    'not {"a": 1}[input.missing] == 1',
    "not input.o[input.missing]",
    "not [input.missing]",
    "not {input.missing} == {1}",
    'not {"a": input.missing} == {"a": 1}',
    "not input.xs == [input.missing]",
    "not x.a.b in input.xs",
    "not is_set({input.missing})",
    "not {input.missing: 1} == {}",
    "not [1, input.missing] = [1, 2]",
    'not object.get(input.missing, "a", 0) == 2',
    'not startswith(input.missing, "a") with input.s as "b"',
    "not g(input.missing) with g as f",
    'not is_string(input.missing) with input.missing as "x"',
    "not is_string(1) with input as input.missing",
]

# True in OPA: nothing undefined is evaluated before the negation.
TRUE_IN_RULE = [
    "not input.missing == true",
    "not 1 == input.missing",
    "not input.missing = 1",
    "not equal(input.missing, 1)",
    "not x.missing == 1",
    "not input.missing",
    "not is_number(input.s)",
    "not input.missing.a",
    "not input.missing[0] == 1",
    "not input.s == input.missing",
    "not input.xs[0] == input.missing",
    "not data.missing == 1",
    "not data.p.q == 1",
    "not h(input.o)",
    "not count(input.xs, 5)",
    "not [y | y := input.missing] == [1]",
    "not count([y | y := input.missing]) == 1",
    'not $"a{input.missing}" == "a"',
    "not count([1 | not is_string(input.missing)]) == 1",
    "not input.o[input.s] == 2",
    "not input.xs[input.n] == 1",
    "not is_string(input.missing) with input.missing as 1",
    'not is_string(input.missing) with input as {"missing": 1}',
    'not startswith(input.missing, "b") with input.missing as "a"',
    "not is_string(q) with data.p.q as 1",
]

CASES = [in_rule(e, "undefined") for e in UNDEFINED_IN_RULE]
CASES += [in_rule(e, TRUE) for e in TRUE_IN_RULE]

# Variables: every variable of a negated expression must be bound before it,
# wildcards too, unless it sits in a call nested in it (bound there, by iteration).
CASES += [
    in_rule("not input.xs[_]", "rego_unsafe_var_error", message="var _ is unsafe"),
    in_rule("not input.xs[_] == 1", "rego_unsafe_var_error", message="var _ is unsafe"),
    in_rule("not is_string(input.xs[_])", "rego_unsafe_var_error", message="var _ is unsafe"),
    in_rule("not count(input.xs, _)", "rego_unsafe_var_error", message="var _ is unsafe"),
    in_rule("not is_string(input.xs[i])", "rego_unsafe_var_error", message="var i is unsafe"),
    in_rule("not input.xs[i] == 1", "rego_unsafe_var_error", message="var i is unsafe"),
    in_rule("not f(_)", "rego_unsafe_var_error"),
    in_rule("not y := 1", "rego_compile_error", message="cannot assign vars inside negated expression"),
    in_rule("not is_string(count(input.xs[i]))", "eval_type_error"),
    program(
        "iteration-in-nested-call",
        "r contains i if { not is_string(count(input.m[i])) }",
        {"x": ["a", "b", "c"]},
        input={"m": {"a": [1], "b": "xy", "c": {}}},
    ),
    program(
        "iteration-in-nested-call-then-test",
        'r contains i if { not is_string(count(input.m[i])); i != "a" }',
        {"x": ["b"]},
        input={"m": {"a": [1], "b": "xy"}},
    ),
    program(
        "negation-after-iteration",
        "r contains i if { input.m[i]; not is_string(input.m[i]) }",
        {"x": ["a", "c"]},
        input={"m": {"a": [1], "b": "xy", "c": 5}},
    ),
    # Expressions that are not negated are not changed: iteration still iterates.
    program(
        "iteration-not-negated",
        "r contains v if { v := input.xs[_]; is_number(v) }",
        {"x": [1, 2]},
        input={"xs": [1, 2, "a"]},
    ),
    program(
        "iteration-in-call-not-negated",
        "r contains i if { is_number(input.xs[i]) }",
        {"x": [0, 1]},
        input={"xs": [1, 2, "a"]},
    ),
]

# Every kind of body: functions, else, comprehensions, every, partial rules, defaults.
CASES += [
    program("function-body", "fn(a) := 1 if { not is_string(a.missing) }\nr := fn({})", "undefined"),
    program("function-body-defined", 'fn(a) := 1 if { not is_string(a.k) }\nr := fn({"k": 2})', {"x": 1}),
    program("function-arg-undefined", "fn(a) := 1 if { not is_string(a) }\nr := fn(input.missing)", "undefined"),
    program("function-unification", "fn(a) if { not a.k == 1 }\nr := fn({})", TRUE),
    program("function-undefined-arg-unification", "fn(a) if { not a.k == 1 }\nr if fn(input.missing)", "undefined"),
    program("else-branch", "r := 1 if { false } else := 2 if { not is_string(input.missing) } else := 3", {"x": 3}),
    program("else-branch-true", "r := 1 if { false } else := 2 if { not is_string(input.s.x) } else := 3", {"x": 3}),
    program("else-branch-defined", "r := 1 if { false } else := 2 if { not is_string(input.n) } else := 3", {"x": 2}),
    program("array-comprehension", "r := [1 | not is_string(input.missing)]", {"x": []}),
    program("array-comprehension-unification", "r := [1 | not input.missing == 1]", {"x": [1]}),
    program("set-comprehension-iterating", "r := {y | y := input.xs[_]; not y == input.missing}", {"x": [1]}),
    program("every-body", "r if { every y in input.xs { y; not is_string(input.missing) } }", "undefined"),
    program("every-body-unification", "r if { every y in input.xs { not y == input.missing } }", TRUE),
    program("every-body-defined", "r if { every y in input.xs { y; not is_string(input.n) } }", TRUE),
    program("partial-set", "r contains 1 if { not is_string(input.missing) }", {"x": []}),
    program("partial-object", 'r[k] := 1 if { some k in ["a"]; not startswith(k, input.missing) }', {"x": {}}),
    program("default", "default r := 9\nr := 1 if { not is_string(input.missing) }", {"x": 9}),
    program("with-on-negation", "r if { not is_string(input.s) with input.s as 1 }", TRUE),
    program("with-replacing-input", 'r if { not startswith(input.s, "b") with input as {} }', "undefined"),
    program("no-input-call", "r if { not is_object(input) }", "undefined", input=None),
    program("no-input-term", "r if { not input }", TRUE, input=None),
    program("no-input-ref", "r if { not input.x }", TRUE, input=None),
    program("no-input-ref-in-call", "r if { not is_string(input.x) }", "undefined", input=None),
]

# Queries keep `==` a call: its operands are evaluated first there.
CASES += [
    query("not is_string(input.missing)", "undefined"),
    query("not input.missing == 1", "undefined"),
    query("not equal(input.missing, 1)", "undefined"),
    query("not input.missing = 1", {}),
    query("not input.missing", {}),
    query("not count(input.missing) == 0", "undefined"),
    query("not input.missing != 1", "undefined"),
    query("not [input.missing] == [1]", "undefined"),
    query("not [input.missing] = [1]", "undefined"),
    query('not input.missing in ["a"]', "undefined"),
    query("x := input.o; not x.a == 1", "undefined"),
    query("y := 1; not y == input.missing", "undefined"),
    query('not is_string(input.missing) with input.s as "b"', "undefined"),
    query("not is_number(input.s)", {}),
    query("x := [1 | not input.missing == 1]", {"x": []}),
    query("x := [1 | not input.missing = 1]", {"x": [1]}),
    query("x := [1 | not is_string(input.missing)]", {"x": []}),
    query("x := [y | y := input.xs[_]; not y == input.missing]", {"x": []}),
    query("x := [y | y := input.xs[_]; not y = input.missing]", {"x": [1]}),
    query("every y in input.xs { not y == input.missing }", "undefined"),
    query("not is_string(input.xs[i])", "rego_unsafe_var_error"),
    query("not input.xs[_] == 2", "rego_unsafe_var_error"),
    query("not is_string(count(input.xs[i]))", "eval_type_error"),
]

# `import future.keywords.not`: all of a negated expression is evaluated inside the negation.
NOT_BODY = "package p\nimport future.keywords.not\nf(_) := true\n"
CASES += [
    Case("not-body: call", {"p.rego": NOT_BODY + "r if { not f(input.missing) }"}, "x := data.p.r", TRUE, input=INPUT),
    Case(
        "not-body: builtin",
        {"p.rego": NOT_BODY + "r if { not is_string(input.missing) }"},
        "x := data.p.r",
        TRUE,
        input=INPUT,
    ),
    Case(
        "not-body: nested call",
        {"p.rego": NOT_BODY + "r if { not input.missing + 1 == 2 }"},
        "x := data.p.r",
        TRUE,
        input=INPUT,
    ),
    Case(
        "not-body: comprehension",
        {"p.rego": NOT_BODY + 'r := [x | x := "a"; not f(input.x)]'},
        "x := data.p.r",
        {"x": ["a"]},
    ),
    Case(
        "not-body: defined", {"p.rego": NOT_BODY + "r if { not f(input.s) }"}, "x := data.p.r", "undefined", input=INPUT
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
