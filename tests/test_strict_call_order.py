"""Calls nested in an expression run before its refs, with strict builtin errors.

OPA's compiler moves each call nested in an expression's operands into an
expression of its own placed before it (``RewriteExprTerms``): the collection
of ``some ... in``, the domain of ``every``, array, object and set literals
(object keys too), ref keys, an expression with ``with``; a comprehension's
term has its calls placed at the end of its body. So with strict builtin
errors such a call raises even where a ref of the expression read before it
is undefined (``some v in [input.m[input.s], 1 % input.m.a]``). Generated
programs of those forms are compared with OPA (tests/opa_oracle.py) in every
execution form; without strict errors the answers are OPA's wherever OPA
raised nothing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from policy_cases import strict_answers
from pyrego.conformance import canonical

#: Refs that may be undefined, and calls that may fail, on the inputs below.
REFS = ("input.m[input.s]", "input.m.a", "data.d.m[input.s]", "input.xs[input.i]")
CALLS = ("(1 % input.m.a)", "to_number(input.z)", "abs(input.s)", "count(input.n)", "(1 / input.n)")

#: Expression forms: ``{a}``, ``{b}`` are the operands (a ref and a call, in either order).
BODIES = (
    'some v in [{a}, {b}]; v != "zz"',
    "some k, v in [{a}, {b}]; k != 9",
    'some k, v in {{"a": {a}, "b": {b}}}; k != "zz"',
    'some v in {{{a}, {b}}}; v != "zz"',
    'some v in [[{a}], [{b}]][0]; v != "zz"',
    'every v in [{a}, {b}] {{ v != "zz" }}',
    'every k, v in {{"k": {a}, "j": {b}}} {{ v != "zz" }}',
    'every k, v in {{{a}: 1, "j": {b}}} {{ v != "zz" }}',
    "x := [{a}, {b}]",
    "[{a}, {b}] == [1, 2]",
    "[{a}, {b}] != 7",
    '{{"a": p, "b": q}} = {{"a": {a}, "b": {b}}}',
    'x := {{{a}: 1, "k": {b}}}',
    "x := {{{a}, {b}}}",
    "x := [{a}, {b}] with input.w as 1",
    "x := [[{a}, {b}] | true]",
    "x := {{[{a}, {b}] | true}}",
    "x := {{{a}: {b} | true}}",
    'x := {{"k": [{a}, {b}] | true}}',
    "x := [v | some v in [{a}, {b}]]",
    "x := {{v | v := [{a}, {b}][_]}}",
    "{a}[{b}]",
    "count([{a}, {b}]) > 0",
    "f([{a}, {b}])",
    'every v in [1] {{ x := [{a}, {b}]; v != "zz" }}',
)
#: Query forms (OPA's query compiler moves nested calls out too).
QUERIES = (
    "x := [{a}, {b}]",
    "some v in [{a}, {b}]",
    "every v in [{a}, {b}] {{ v }}",
    "x := [[{a}, {b}] | true]",
    "[{a}, {b}] == [1, 2]",
    "{a}[{b}]",
)
HEADS = (
    "r{n} := [{a}, {b}]",
    "r{n} := {{{a}: {b} | true}}",
    "r{n} := [v | some v in [{a}, {b}]]",
    "r{n} contains [{a}, {b}]",
)
INPUTS = (
    {"s": "", "m": {"a": False}, "z": "q", "n": 0, "xs": [], "i": 0},
    {"s": "a", "m": {"a": 2}, "z": "1", "n": 1, "xs": [1], "i": 0},
    {"s": "a", "m": {"a": False, "b": 1}, "n": 3, "xs": [1, 2], "i": 5},
    {"s": 1, "m": {"a": 3}, "z": 2, "n": [1], "xs": [1], "i": 0},
    {"m": {}, "s": "b", "n": "ab", "i": "x"},
)
DATA = {"d": {"m": {"a": 1, "b": [2]}}}


def _operands(rng: random.Random) -> dict[str, str]:
    ref, call = rng.choice(REFS), rng.choice(CALLS)
    a, b = (ref, call) if rng.random() < 0.75 else (call, ref)
    return {"a": a, "b": b}


def _program(rng: random.Random) -> tuple[dict[str, str], list[str], set[str]]:
    """A program of three rules, the queries of their values and one more, and the forms they take."""
    lines = ["package t", "f(_) := 1"]
    forms: set[str] = set()
    for n in range(3):
        if rng.random() < 0.2:
            form = rng.choice(HEADS)
            lines.append(form.format(n=n, **_operands(rng)))
        else:
            form = rng.choice(BODIES)
            head = rng.choice((f"r{n} if", f"r{n} contains 1 if", f"r{n} := 2 if"))
            lines.append(f"{head} {{ {form.format(**_operands(rng))} }}")
        forms.add(form)
    query = rng.choice(QUERIES)
    forms.add(query)
    return {"t.rego": "\n".join(lines) + "\n"}, [f"x := data.t.r{n}" for n in range(3)] + [query.format(**_operands(rng))], forms


def _differences(oracle: Any, seeds: range) -> list[str]:
    failures = []
    for seed in seeds:
        rng = random.Random(seed)
        modules, queries, _ = _program(rng)
        inputs = rng.sample(INPUTS, 2)
        for query in queries:
            for input in inputs:
                want = oracle.evaluate(modules, query, input=input, data=DATA)
                expected = want.error_code if want.is_error else sorted([canonical(b) for b in want.bindings], key=repr)
                for form in EXECUTION_FORMS:
                    with in_form(form):
                        got = strict_answers(modules, query, input, data=DATA)
                        # (without strict errors: OPA's answers where it raised nothing)
                        loose = strict_answers(modules, query, input, strict=False, data=DATA) if not want.is_error else [expected]
                    if any(g != expected for g in got + loose):
                        failures.append(f"seed {seed} ({form}) {query} input={input}\n{modules['t.rego']}OPA: {expected}\npyrego: {got}, non-strict {loose}")
    return failures


@pytest.mark.parametrize("block", range(4))
def test_generated_programs_agree_with_opa(block: int, oracle: Any) -> None:
    """160 generated programs (40 per block, fixed seeds), three rules and
    four queries each, two inputs, every execution form, compared with OPA."""
    failures = _differences(oracle, range(block * 40, block * 40 + 40))
    assert not failures, f"{len(failures)} differ:\n\n" + "\n\n".join(failures[:4])


def test_every_form_is_generated() -> None:
    """Each body and head form above comes in the programs the test runs."""
    seen: set[str] = set()
    for seed in range(160):
        seen |= _program(random.Random(seed))[2]
    assert seen == set(BODIES + HEADS + QUERIES)


@pytest.mark.parametrize("strict", [False, True])
def test_strict_code_only_in_strict_programs(strict: bool) -> None:
    """The calls run first are in the code of an engine with strict builtin
    errors alone (in a block such evaluations take): without them the code
    is as it was."""
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    engine.add_policy("t.rego", "package t\nr if { some v in [input.m[input.s], 1 % input.m.a]; v }\ns := [[input.m[input.s], 1 % input.m.a] | true]\n")
    engine.eval_rule("data.t.r", input={})
    assert ("cfg.strict" in engine.compiled_source) is strict
