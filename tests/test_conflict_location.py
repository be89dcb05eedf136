"""Where a conflict between a document's definitions is reported.

When two definitions of a complete rule or a function give different values,
OPA's ``eval_conflict_error`` points at the definition whose value differs
from the one found first (the later one), not at the rule's first
definition: with definitions on lines 2, 3 and 4 and the third disagreeing,
the error is at line 4. "Later" is in the order OPA's rule index gives the
definitions, which is not always the source order (generated programs
below). Each case has the location OPA v1.20.2 reports
(checked against OPA itself when the oracle is available) and runs in the
three execution forms. A key's two values in an object comprehension are
reported at the comprehension's key term.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

import pyrego
from policy_cases import Case, check_oracle, check_pyrego


def _case(id: str, modules: dict[str, str], query: str, where: str) -> Case:
    return Case(id, modules, query, "eval_conflict_error", input={"on": True}, message=f"{where}: eval_conflict_error")


CASES = [
    _case("third-rule-differs", {"p.rego": "package p\nr := 1 if input.on\nr := 1 if input.on\nr := 2 if input.on\n"}, "x := data.p.r", "p.rego:4"),
    _case("first-rule-undefined", {"p.rego": "package p\nr := 2 if false\nr := 1 if input.on\nr := 2 if input.on\n"}, "x := data.p.r", "p.rego:4"),
    _case("else-then-rule", {"p.rego": "package p\nr := 1 if false\nelse := 2\n\nr := 3 if input.on\n"}, "x := data.p.r", "p.rego:5"),
    _case("function-definitions", {"p.rego": "package p\nf(x) := 1\nf(x) := 1 if x\nf(x) := 2 if x\n"}, "x := data.p.f(true)", "p.rego:4"),
    _case(
        "definitions-in-two-files",
        {"a.rego": "package p\nr := 1 if input.on\n", "b.rego": "package p\n\nr := 2 if input.on\n"},
        "x := data.p.r",
        "b.rego:3",
    ),
    # One definition with several values: that definition.
    _case("one-definition-iterating", {"p.rego": "package p\nr := 0\n\nr := x if some x in [1, 2]\n"}, "x := data.p.r", "p.rego:4"),
    # Two values for one key of an object comprehension: at the key term, not
    # at the comprehension's brace (a Terraform-plan helper laid out so).
    _case("object-comprehension-key-line", {"p.rego": 'package p\nr := {\n\tk: v |\n\tv := [1, 2][_]\n\tk := "a"\n}\n'}, "x := data.p.r", "p.rego:3"),
    _case(
        "object-comprehension-in-function",
        {"p.rego": 'package p\nf(xs) := out if {\n\tout := {\n\t\tk: v |\n\t\tv := xs[_]\n\t\tk := "a"\n\t}\n}\n'},
        "x := data.p.f([1, 2])",
        "p.rego:4",
    ),
    _case("object-comprehension-value-below-key", {"p.rego": 'package p\nr := {\n\n  k:\n  v | v := [1, 2][_]; k := "a"}\n'}, "x := data.p.r", "p.rego:4"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)


_CONDITIONS = ("input.a", "input.b", "input.a == 1", "input.b == 2", "input.c[_] == 1", "input.a > 0", "count(input.c) > 0", "input.b == input.a", "true")
_INPUT = {"a": 1, "b": 2, "c": [1]}


def _program(rnd: random.Random) -> tuple[str, str]:
    function = rnd.random() < 0.3
    lines = ["package x"]
    for _ in range(rnd.randint(2, 4)):
        cond, value = rnd.choice(_CONDITIONS), rnd.choice((1, 2, 3))
        lines.append(f"f(y) := {value} if {{ {cond}; y }}" if function else f"p := {value} if {{ {cond} }}")
    return "\n".join(lines) + "\n", "x := data.x.f(true)" if function else "x := data.x.p"


def _pyrego_error(text: str, query: str) -> str | None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", text)
    engine.set_input(_INPUT)
    try:
        engine.eval_query(query)
    except pyrego.RegoError as err:
        return f"{err.code} {err.location.row if err.location else None}"
    return None


@pytest.mark.parametrize("seed", range(3))
def test_generated_conflicts_are_where_opa_reports_them(seed: int, oracle: Any, execution_form: str) -> None:
    """Definitions of different values tested on different refs: the conflict
    is at the definition OPA's index order reaches second."""
    rnd = random.Random(seed)
    for _ in range(60):
        text, query = _program(rnd)
        want = oracle.evaluate({"x.rego": text}, query, input=_INPUT)
        row = re.search(r"x\.rego:(\d+)", want.error_message or "")
        expected = f"{want.error_code} {row.group(1) if row else None}" if want.error_code else None
        assert _pyrego_error(text, query) == expected, text
