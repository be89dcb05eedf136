"""Definitions of one constant value are tried in OPA's rule-index order.

OPA stops at the first definition of such a document that succeeds, in the
order its rule index returns them (definitions it does not index first); a
definition after it that raises or prints does not, one before it does. Each
case is compared with OPA (tests/opa_oracle.py), in every execution form, by
``eval_rule``, a query and a prepared rule.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from early_exit_programs import INPUTS, generate
from opa_compare import opa_outcome, pyrego_outcome
from pyrego import UNDEFINED

Outcome = tuple[Any, ...]


def _opa(oracle: Any, text: str, input: Any) -> tuple[Outcome, list[str]]:
    prints: list[str] = []
    res = oracle.evaluate({"p.rego": text}, "x = data.p.r", input=input, prints=prints)
    if res.is_error:
        return ("error", res.error_code), prints
    if not res.bindings:
        return ("undefined",), prints
    return ("value", res.bindings[0]["x"]), prints


def _outcome(fn: Any) -> Outcome:
    try:
        v = fn()
    except pyrego.RegoError as exc:
        return ("error", exc.code)
    return ("undefined",) if v is UNDEFINED else ("value", v)


def _query_value(engine: pyrego.Engine, input: Any) -> Any:
    result = engine.eval_query("x = data.p.r", input=input)["result"]
    return result[0]["bindings"]["x"] if result else UNDEFINED


def _check(oracle: Any, text: str, inputs: tuple[Any, ...], strict: bool = True) -> None:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    engine.add_policy("p.rego", text)
    prepared = engine.prepare_rule("data.p.r")
    for input in inputs:
        want, want_prints = _opa(oracle, text, input)
        for how, run in (
            ("eval_rule", lambda input=input: engine.eval_rule("data.p.r", input=input)),
            ("query", lambda input=input: _query_value(engine, input)),
            ("prepared", lambda input=input: prepared(input)),
        ):
            got = _outcome(run)
            prints = engine.take_prints()
            assert got == want, f"{how}, input {input}:\n{text}"
            if want[0] != "error":  # (the oracle reports no lines with an error)
                assert prints == want_prints, f"{how}, input {input}:\n{text}"


CASES = [
    # A function's definitions: OPA's index tests input.n before the argument,
    # so the definition testing only the argument comes first and succeeds.
    (
        'f(x) if { endswith(input.n, "*") }\nf(x) if { x == 1 }\nr if f(1)\n',
        ({"n": 7}, {"n": "a*"}, {}),
    ),
    ('f(x) if { x == 1 }\nf(x) if { endswith(input.n, "*") }\nr if f(1)\n', ({"n": 7},)),
    # A rule: the definition without a test of input.x comes first and raises.
    ('r if { input.x == 1 }\nr if { endswith(input.n, "*") }\n', ({"n": 7, "x": 1}, {"n": "a*", "x": 1}, {"x": 2})),
    # print turns the index off for its definition: it comes first and prints.
    ('r if { input.x == 1 }\nr if { print("second"); input.x == 2 }\n', ({"x": 1}, {"x": 2})),
    # An else branch OPA does not index makes its definition come first.
    ('r if { input.x == 1 }\nr := true if { input.x == 2 } else := true if { print("else") }\n', ({"x": 1}, {"x": 3})),
    # A default does not take part.
    ('default r := false\nr if { input.x == 1 }\nr if { count(input.n) > 0 }\n', ({"x": 1, "n": 7}, {"x": 2, "n": 7}, {})),
    # A function of one constant value stops at the first definition that
    # succeeds (here the index's order is the source order).
    ("f(x) if { x == 1 }\nf(x) if { x == 1; count(input.n) > 0 }\nr if f(input.k)\n", ({"k": 1, "n": 7}, {"k": 2, "n": 7})),
    # ... a definition with print is not indexed: it comes first and prints.
    ('f(x) if { x == 1 }\nf(x) if { x == 1; print("first") }\nr if f(input.k)\n', ({"k": 1}, {"k": 2})),
    # A function of one non-scalar constant value.
    ("f(x) := [1] if { x == 1 }\nf(x) := [1] if { count(input.n) > 0 }\nr := f(input.k)\n", ({"k": 1, "n": 7}, {"k": 2, "n": "ab"})),
    # A rule whose ref is longer than its name and which has no body makes
    # OPA run every definition of its document (and the raising one raises).
    ('o.b := 1\no.b := 1 if to_number("x") == 1\nr := o.b\n', ({},)),
    ('o["b"] := [1, 2]\no["b"] := [1, 2] if to_number(input.s) == 1\nr := o\n', ({"s": "x"}, {"s": "1"})),
    # ... a function's is not: it stops at the first that succeeds.
    ('a.f(y) := 1\na.f(y) := 1 if to_number("x") == 1\nr := a.f(1)\n', ({},)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_cases(oracle: Any, execution_form: str, case: int) -> None:
    body, inputs = CASES[case]
    _check(oracle, "package p\n\n" + body, inputs)


def test_conflict_in_a_rule_read(oracle: Any, execution_form: str) -> None:
    """A rule reading a conflicting document is not indexed: OPA tries it
    first, so the conflict is raised without strict builtin errors too."""
    text = "package p\n\nc := 1\nc := 2 if input.y\n\nr if { input.x == 1 }\nr if { data.p.c }\n"
    _check(oracle, text, ({"x": 1, "y": True}, {"x": 1}), strict=False)


@pytest.mark.parametrize("seed", range(4))
def test_generated_programs(oracle: Any, execution_form: str, seed: int) -> None:
    """Programs whose order OPA's index fixes for every input (see
    early_exit_programs): the same values, errors and printed lines as OPA."""
    rng = random.Random(seed)
    for _ in range(12):
        program = generate(rng, fixed=True)
        _check(oracle, program.text, INPUTS)


@pytest.mark.parametrize("case", [3, 4, 7])
def test_print_order_without_strict_errors(oracle: Any, execution_form: str, case: int) -> None:
    """Without strict builtin errors, in a program where nothing can conflict,
    only print shows the order: it is still OPA's."""
    body, inputs = CASES[case]
    assert "print(" in body
    _check(oracle, "package p\n\n" + body, inputs, strict=False)


# Differences with OPA found by generated programs of several definitions.
INDEX_CASES = [
    # A rule whose ref is longer than its name, with a body, stops early like
    # any other: the definition that raises is not reached (in either order).
    ('o.b := 1 if startswith(input.v, "a")\no.b := 1 if true\nr := o.b\n', ({"v": 1}, {"v": "abc"})),
    ('o.b := 1 if true\no.b := 1 if startswith(input.v, "a")\nr := o.b\n', ({"v": 1},)),
    ('o.b := 1 if true\no.b := 1 if to_number("x") == 1\nr := o\n', ({},)),
    ('o.b := 1 if startswith(input.v, "a")\no.b := 1 if input.x\nr := data.p.o.b\n', ({"v": 1, "x": 1}, {"v": 1})),
    ('o.b := 1 if input.x\no.b := 1 if startswith(input.v, "a")\nr := o.b\n', ({"v": 1, "x": 1},)),
    # ... one without a body does not (every definition runs, and prints).
    ('o.b := 1 if startswith(input.v, "a")\no.b := 1\nr := o.b\n', ({"v": 1},)),
    ('o.b := 1 if print("A")\no.b := 1\no.b := 1 if print("B")\nr := o.b\n', ({},)),
    ('o.b := 1 if print("A")\no.b := 1 if true\no.b := 1 if print("B")\nr := o.b\n', ({},)),
    # OPA's index tries the second definition first for this input (its
    # else branch is found): it succeeds, so the first, which raises, is not run.
    (
        'r := 1 if {\n\tcount(input.l) > 0\n\tstartswith(input.v, "a")\n} else := 9 if {\n\tinput.k == "b"\n}\n\n'
        'r := 1 if {\n\tcount(input.l) > 0\n} else := 1 if {\n\tinput.k == "a"\n}\n',
        ({"k": "a", "l": [1], "v": [1]}, {"k": "b", "l": [1], "v": [1]}, {"l": [1], "v": "abc"}),
    ),
    # Values differ: the first error (or conflict) in the index's order for
    # the input is OPA's, not the first in the definitions' usual order.
    (
        'r := 0 if {\n\tinput.k1 == "a"\n\tstartswith(input.v0, "a")\n} else := 9 if {\n\tinput.k2 == 1\n}\n\n'
        'r := 1 if {\n\tinput.k3 == 1\n} else := 9 if {\n\tinput.k2 == 1\n}\n\n'
        'r := 2 if {\n\tnot input.k6\n\ty := input.w2 + 1\n} else := 1 if {\n\tinput.k2 == 1\n}\n',
        ({"k1": "a", "k2": 1, "v0": [1], "w2": 2}, {"k1": "b", "k2": 1, "v0": [1], "w2": 2}, {"k1": "b", "k2": 2, "k3": 1, "w2": 2}),
    ),
    # One value: which definition OPA's index meets first depends on the
    # input (input.k3 defined: the second's else branch), so it is looked up.
    (
        'o.b := 1 if {\n\tinput.k2\n\tstartswith(input.v0, "a")\n} else := 1 if {\n\tinput.k1 == "b"\n}\n\n'
        'o.b := 1 if {\n\tinput.k2\n\tinput.k3\n\tstartswith(input.v1, "a")\n} else := 1 if {\n\titem := input.k3\n}\n\nr := o.b\n',
        ({"k1": 1, "k2": 1, "k3": 1, "v0": [], "v1": None}, {"k1": 1, "k2": 1, "v0": [], "v1": None}, {"k2": 1, "k3": 1, "v0": "a", "v1": "a"}),
    ),
    # ... a definition met at the root of the index (no indexed test) is met
    # first whatever the input, though its else branch is indexed.
    (
        'f(z) := 1 if {\n\t"x" == input.k4\n\tstartswith(input.v0, "a")\n} else := 1 if {\n\tinput.k2\n}\n\n'
        'f(z) := 1 if {\n\tinput.k1 == "a"\n\t"x" == input.k4\n\tinput.k5[_] == "a"\n\ty := input.w1 + 1\n} else := 1 if {\n\tinput.k1 == "b"\n}\n\n'
        'f(z) := 1 if {\n\tstartswith(input.v2, "a")\n} else := 1 if {\n\tinput.k1 == "a"\n}\n\nr := f(1)\n',
        ({"k1": "c", "k2": 2, "k4": "y", "v0": [1], "w1": 2, "v2": 1}, {"k1": "a", "k2": 2, "k4": "y", "v0": [1], "v2": "abc"}),
    ),
]


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("case", range(len(INDEX_CASES)))
def test_index_cases(oracle: Any, execution_form: str, case: int, strict: bool) -> None:
    body, inputs = INDEX_CASES[case]
    text = "package p\n\n" + body
    if not strict:  # (OPA's errors are strict ones: compare where it answers)
        inputs = tuple(i for i in inputs if _opa(oracle, text, i)[0][0] != "error")
    _check(oracle, text, inputs, strict=strict)


# A conflict with a definition that has else branches is reported at the
# branch whose value differs, as OPA does (not at the definition's first line).
ELSE_CONFLICTS = [
    ("r := 3 if {\n\ttrue\n}\n\nr := 1 if {\n\tinput.a == 1\n} else := 2 if {\n\ttrue\n}\n", ({"a": 2}, {"a": 1})),
    ("r := 1 if {\n\tinput.a == 1\n} else := 2 if {\n\ttrue\n}\n\nr := 3 if {\n\ttrue\n}\n", ({"a": 2}, {"a": 1})),
    ("r := 3 if {\n\tinput.b\n}\n\nr := 1 if {\n\tinput.a == 1\n} else := 2 if {\n\tinput.c\n} else := 4\n", ({"a": 2, "b": 1}, {"a": 2, "b": 1, "c": 1})),
    ("f(x) := 3 if {\n\ttrue\n}\n\nf(x) := 1 if {\n\tx == 1\n} else := 2 if {\n\ttrue\n}\n\nr := f(input.a)\n", ({"a": 2}, {"a": 1})),
    (
        'r := 1 if {\n\tinput.x == 1\n} else := 2 if {\n\tstartswith(input.v, "a")\n}\n\nr := 3 if {\n\tinput.y\n} else := 4\n',
        ({"x": 2, "v": "abc", "y": 1}, {"x": 2, "v": "abc"}, {"x": 1, "v": 1}),
    ),
]


@pytest.mark.parametrize("case", range(len(ELSE_CONFLICTS)))
def test_else_conflict_location(oracle: Any, execution_form: str, case: int) -> None:
    body, inputs = ELSE_CONFLICTS[case]
    text = "package p\n\n" + body
    for input in inputs:
        want = opa_outcome(oracle, text, "data.p.r", input)
        for strict in (True, False):
            if not strict and want[0][0] == "error" and want[0][1] != "eval_conflict_error":
                continue
            got = pyrego_outcome(text, "data.p.r", input, strict)
            # (pyrego's conflict message ends with the rule's name)
            assert got[0] == want[0] and (got[1] == want[1] or got[1].startswith(want[1] + " (")), f"strict={strict}, input {input}:\n{text}"
