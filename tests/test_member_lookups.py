"""Lookups of one member of a partial set run only the rules that can add it.

OPA reads ``data.p.s[k]`` for a known ``k`` by evaluating only the rules
whose head key can unify with ``k``: a rule whose key is a constant other
than ``k`` (or an array or object of another shape) is never evaluated, so
an error in its body (a strict builtin error, a call of a conflicting
function) does not reach the lookup. ``k in data.p.s``, ``count`` and
every other read of the whole set evaluate all of its rules. (Keys of
partial objects: each constant key is its own document already.)

Written cases hold OPA v1.20.2's answers (checked against OPA itself when
the oracle is available); generated programs are compared with OPA
directly. Both run in the three execution forms.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS
from policy_cases import Case, check_oracle, check_pyrego, generated_differences

ZERO = {"zero": 0, "k": 2, "xs": [5]}
CONST = "package p\nreport contains 2\nreport contains 3 if 1 / input.zero\n"
CONFLICT = "package p\nf(_) := 1\nf(_) := 2\nreport contains 2\nreport contains 3 if f(1)\n"
SHAPES = "package p\nreport contains [1, x] if x := 2\nreport contains [2, 1] if 1 / input.zero\nreport contains {\"a\": 1} if 1 / input.zero\n"

CASES = [
    Case("constant-key", {"p.rego": CONST}, "x := data.p.report[2]", {"x": 2}, input=ZERO),
    Case("computed-key", {"p.rego": CONST}, "x := data.p.report[input.k]", {"x": 2}, input=ZERO),
    Case("bare", {"p.rego": CONST}, "data.p.report[2]", {}, input=ZERO),
    Case("in-a-rule", {"p.rego": CONST + "ok if report[input.k]\n"}, "x := data.p.ok", {"x": True}, input=ZERO),
    Case("bound-variable-key", {"p.rego": CONST}, "x := [k | some k in [1, 2]; data.p.report[k]]", {"x": [2]}, input=ZERO),
    Case("missing-member", {"p.rego": CONST}, "x := data.p.report[4]", "undefined", input=ZERO),
    Case("matching-rule-raises", {"p.rego": CONST}, "x := data.p.report[3]", "eval_builtin_error", input=ZERO),
    Case("float-key", {"p.rego": CONST}, "x := data.p.report[2.0]", {"x": 2}, input=ZERO),
    Case("membership-is-whole", {"p.rego": CONST}, "x := 2 in data.p.report", "eval_builtin_error", input=ZERO),
    Case("count-is-whole", {"p.rego": CONST}, "x := count(data.p.report)", "eval_builtin_error", input=ZERO),
    Case("conflicting-call", {"p.rego": CONFLICT}, "x := data.p.report[2]", {"x": 2}),
    Case("conflicting-call-whole", {"p.rego": CONFLICT}, "x := data.p.report", "eval_conflict_error"),
    Case(
        "variable-key-runs",
        {"p.rego": CONST + "report contains x if { 1 / input.zero; x := 2 }\n"},
        "x := data.p.report[2]",
        "eval_builtin_error",
        input=ZERO,
    ),
    Case("array-shape", {"p.rego": SHAPES}, "x := data.p.report[[1, 2]]", {"x": [1, 2]}, input=ZERO),
    Case("array-shape-computed", {"p.rego": SHAPES}, "x := data.p.report[[input.k, 1]]", "eval_builtin_error", input={"zero": 0, "k": 2}),
    Case("array-shape-number", {"p.rego": SHAPES}, "x := data.p.report[input.k]", "undefined", input=ZERO),
    Case(
        "with-replacement",
        {"p.rego": CONST + "ok if report[3] with report as {3}\n"},
        "x := data.p.ok",
        {"x": True},
        input=ZERO,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)


# ---------------------------------------------------------------- generated programs

_KEYS = ("1", "2", '"a"', '"b"', "[1, 2]", "true")
_RAISE = ("1 / input.zero == 1", "f(1) == 1", 'to_number("x") == 1')


def _program(rng: random.Random) -> tuple[dict[str, str], Any, list[str]]:
    """A partial set and a partial object with constant and variable keys,
    some bodies raising (strict builtin errors, a conflicting function),
    and lookups by constant and computed keys."""
    lines = ["package p", "f(_) := 1", "f(_) := 2"]
    # One kind of error per program: where a conflict and a builtin error
    # both arise in one document, OPA reports the conflict (not the subject here).
    fail = rng.choice(_RAISE)
    for _ in range(rng.randint(1, 4)):
        key, cond = rng.choice(_KEYS), rng.choice(("", " if input.on", " if " + fail))
        lines.append(f"s contains {key}{cond}")
    if rng.random() < 0.5:
        # (a raising statement first: OPA binds the key before the body, so
        # a body binding it first could fail early there)
        first = rng.choice(("", fail + "; "))
        lines.append(f"s contains x if {{ {first}some x in input.xs }}")
    objects = rng.randint(0, 3)
    for _ in range(objects):
        key, cond = rng.choice(('"a"', '"b"', '"c"')), rng.choice(("", " if input.on", " if " + fail))
        lines.append(f"o[{key}] := {rng.choice(_KEYS)}{cond}")
    readers = ["in_s if s[input.k]", "got := s[input.k]", "first := s[1]"]
    if objects:  # (no reads of an object no rule defines: a compile error)
        readers += ["oa := o.a", "ok := o[input.ok]"]
    lines += rng.sample(readers, 2)
    inputs = [
        {"zero": 0, "k": 1, "on": True, "xs": [1], "ok": "a"},
        {"zero": 0, "k": "a", "on": False, "xs": [], "ok": "b"},
        {"zero": 0, "k": [1, 2], "on": True, "xs": ["b"], "ok": "c"},
        {"zero": 1, "k": 2, "on": True, "xs": [2], "ok": "a"},
    ]
    keys = ["1", "2", '"a"', "[1, 2]", "input.k", "true", "2.0"]
    queries = [f"x := data.p.s[{rng.choice(keys)}]", f"x := data.p.s[{rng.choice(keys)}]", "x := data.p"]
    queries += [f"x := data.p.{reader.split()[0]}" for reader in readers]
    if objects:
        queries += ["x := data.p.o.a", "x := data.p.o[input.ok]"]
    return {"p.rego": "\n".join(lines) + "\n"}, rng.choice(inputs), rng.sample(queries, 3)


@pytest.mark.parametrize("block", range(4))
def test_generated_programs_agree_with_opa(block: int, oracle: Any) -> None:
    """200 generated programs (50 per block, fixed seeds), each in one of the
    three execution forms in turn, three queries each, compared with OPA
    (strict builtin errors, as OPA's oracle has them)."""
    failures = generated_differences(oracle, range(block * 50, block * 50 + 50), _program, EXECUTION_FORMS)
    assert not failures, f"{len(failures)} differ:\n\n" + "\n\n".join(failures[:4])


def test_prepared_rule() -> None:
    """A prepared rule reading one member stays one function of the input,
    and gives the answers above: where the whole set raises, the call runs
    again with a context, which skips the rules as OPA does."""
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.add_policy("p.rego", 'package p\nroles contains "admin"\nroles contains "dev" if 1 / input.z\nallow if roles[input.role]\n')
    rule = engine.prepare_rule("data.p.allow")
    assert rule.__code__.co_filename == "<pyrego prepared rule>"
    assert rule({"role": "admin", "z": 0}) is True
    assert rule({"role": "dev", "z": 1}) is True
    assert rule({"role": "other", "z": 1}) is pyrego.UNDEFINED
    with pytest.raises(pyrego.RegoError) as err:
        rule({"role": "dev", "z": 0})
    assert err.value.code == "eval_builtin_error"


def test_prepared_rule_answers_are_opa_answers(oracle: Any) -> None:
    policy = {"p.rego": 'package p\nroles contains "admin"\nroles contains "dev" if 1 / input.z\nallow if roles[input.role]\n'}
    assert oracle.evaluate(policy, "x := data.p.allow", input={"role": "admin", "z": 0}).bindings == [{"x": True}]
    assert oracle.evaluate(policy, "x := data.p.allow", input={"role": "dev", "z": 0}).error_code == "eval_builtin_error"


def test_artifact(tmp_path: Any) -> None:
    """An artifact's code reads one member as the engine does (OPA's answers: the cases above)."""
    from pyrego.artifact import load_artifact, write_artifact

    engine = pyrego.Engine()
    engine.add_policies({"p.rego": CONFLICT + SHAPES.replace("package p\n", "").replace("report", "shaped") + "one := report[input.k]\ntwo := shaped[[1, input.k]]\n"})
    write_artifact(engine, tmp_path / "a.py")
    loaded = load_artifact(tmp_path / "a.py")
    loaded.set_strict_builtin_errors(True)
    assert loaded.eval_rule("data.p.one", input={"k": 2, "zero": 0}) == 2
    assert loaded.eval_rule("data.p.two", input={"k": 2, "zero": 0}) == [1, 2]
    with pytest.raises(pyrego.RegoError) as err:
        loaded.eval_rule("data.p.one", input={"k": 3, "zero": 0})
    assert err.value.code == "eval_conflict_error"
