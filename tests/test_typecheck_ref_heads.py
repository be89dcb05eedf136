"""Types of rule documents that rules with variables in their head's ref share
with rules at deeper, literal paths, against OPA v1.20.2.

``a[k] contains 1`` and ``a.x contains true`` both make the document at
``data.p.a.x``. OPA's checker puts a rule with variables in its ref (of any
kind: ``r[k] := v``, ``r[k] contains v``, ``r[k].y contains v``) at the ref's
ground prefix, as an object keyed by the variables' types (one level per term
after the prefix), and merges the deeper rules' types into that object as they
are inserted. A lookup ``a.x[1]`` then reads ``a.x``'s own type where the tree
has it, and the object's values where it checks the ref (so it is accepted);
``a.y == 1`` reads the object's values (a type error when none is a number).

Hand-written programs and generated ones (fixed seeds) are compiled by OPA
(:mod:`opa_oracle`) and by pyrego: the errors must be the same (location,
code and OPA's full message), and the whole-program screen must agree with the
full check (the ``screened`` fixture of :mod:`test_typecheck_fast`). Where both
accept the hand-written ones, both evaluate them to the same result.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
from test_typecheck_fast import Passed, screened  # noqa: E402,F401 - the fixture
from test_typecheck_opa import opa_outcome, pyrego_outcome  # noqa: E402

INPUTS: list[Any] = [{"ks": ["x"]}, {"ks": []}, {"ks": ["x", "y"], "js": ["z"]}]

SET_HEADS = "a[k] contains 1 if some k in input.ks\na.x contains true\n"

# (module body after ``package p``, query); each one OPA and pyrego must judge alike.
PROGRAMS: list[tuple[str, str]] = [
    # The document at a.x is made by both rules: a lookup of a member of either is fine.
    (SET_HEADS + "allow if not a.x[1]\n", "data.p.allow"),
    (SET_HEADS + "allow if a.x[1]\n", "data.p.allow"),
    (SET_HEADS + 'allow if a["x"][1]\n', "data.p.allow"),
    (SET_HEADS + "allow if a.x[true]\n", "data.p.allow"),
    ("a.x contains true\na[k] contains 1 if some k in input.ks\nallow if not a.x[1]\n", "data.p.allow"),
    (SET_HEADS + "allow if a.y[1]\n", "data.p.allow"),
    (SET_HEADS + "allow if {\n    some v in a.x\n    v == 1\n}\n", "data.p.allow"),
    (SET_HEADS + "allow if a[_][_] == 1\n", "data.p.allow"),
    (SET_HEADS + "allow if count(a.x) > 0\n", "data.p.allow"),
    # Type errors OPA finds with the joined types.
    (SET_HEADS + "allow if a.x == 1\n", "data.p.allow"),
    (SET_HEADS + "allow if a.y == 1\n", "data.p.allow"),
    (SET_HEADS + "allow if a == 1\n", "data.p.allow"),
    (SET_HEADS + "allow if a.x[1] == 1\n", "data.p.allow"),
    (SET_HEADS + "allow if a.x[true] == 1\n", "data.p.allow"),
    (SET_HEADS + 'allow if a[_][_] == "s"\n', "data.p.allow"),
    ("a[k] contains 1 if some k in input.ks\nallow if a.x == 1\n", "data.p.allow"),
    ("a[k] contains 1 if some k in input.ks\nallow if a == 1\n", "data.p.allow"),
    ('a[k] contains 1 if some k in input.ks\nallow if a.x[_] == "s"\n', "data.p.allow"),
    # Variables deeper in the ref, and static rules below them.
    ("a[k].y contains 1 if some k in input.ks\nallow if a == 1\n", "data.p.allow"),
    ("a[k].y contains 1 if some k in input.ks\na.x.z contains true\nallow if a.x.y[1]\n", "data.p.allow"),
    ("a[k].y contains 1 if some k in input.ks\na.x.z contains true\nallow if a.x.y == 1\n", "data.p.allow"),
    ("a[k].y contains 1 if some k in input.ks\na.x.z contains true\nallow if a.x.z == 1\n", "data.p.allow"),
    ('a.b[k] contains 1 if some k in input.ks\na.b.x contains "s"\nallow if a == 1\n', "data.p.allow"),
    ('a.b[k] contains 1 if some k in input.ks\na.b.x contains "s"\nallow if a.b.x[1]\n', "data.p.allow"),
    ('a.b[k] contains 1 if some k in input.ks\na.b.x contains "s"\nallow if a.b.y == 1\n', "data.p.allow"),
    ('a.b[k] contains 1 if some k in input.ks\na.b.x contains "s"\nallow if a.b.x == {1}\n', "data.p.allow"),
    # Object rules (single values) with the same shapes.
    ("a[k] := 1 if some k in input.ks\na.x := true\nallow if a.x == 1\n", "data.p.allow"),
    ("a[k] := 1 if some k in input.ks\na.x := true\nallow if a.y == 1\n", "data.p.allow"),
    ('a[k] := 1 if some k in input.ks\na.x := true\nallow if a.y == "s"\n', "data.p.allow"),
    ("a[k] := 1 if some k in input.ks\na.x := true\nallow if a == 1\n", "data.p.allow"),
    ("a[k].y := 1 if some k in input.ks\na.x.z := true\nallow if a.x.y == 1\n", "data.p.allow"),
    ('a[k].y := 1 if some k in input.ks\na.x.z := true\nallow if a.x.y == "s"\n', "data.p.allow"),
    # Mixed kinds under one prefix, and queries.
    ("a[k] contains 1 if some k in input.ks\na.x.y := true\nallow if a.x.y == 1\n", "data.p.allow"),
    ("a[k] contains 1 if some k in input.ks\na.x.y := true\nallow if not a.x.z\n", "data.p.allow"),
    ('a[k] := {"f": 1} if some k in input.ks\na.x contains 2\nallow if a.x.f == 1\n', "data.p.allow"),
    (SET_HEADS, "data.p.a.x[1]"),
    (SET_HEADS, "data.p.a.y == 1"),
    (SET_HEADS, "x := data.p.a.x; x == 1"),
]


def _opa_value(oracle: Any, body: str, query: str, inp: Any) -> Any:
    res = oracle.evaluate({"p.rego": "package p\n" + body}, f"x := {query}", input=inp)
    assert not res.is_error, res.error_message
    return [b["x"] for b in res.bindings]


def _pyrego_value(body: str, query: str, inp: Any) -> Any:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.add_policy("p.rego", "package p\n" + body)
    return [r["bindings"]["x"] for r in engine.eval_query(f"x := {query}", input=inp)["result"]]


@pytest.mark.parametrize(("body", "query"), PROGRAMS)
def test_hand_written_programs_agree_with_opa(oracle: Any, screened: Passed, body: str, query: str) -> None:  # noqa: F811
    modules = {"p.rego": "package p\n" + body}
    want = opa_outcome(oracle, modules, query)
    assert pyrego_outcome(modules, query) == want
    if want[0] is None and "==" not in query and ";" not in query:
        for inp in INPUTS:
            assert _pyrego_value(body, query, inp) == _opa_value(oracle, body, query, inp), inp


def test_hand_written_programs_cover_both_outcomes(oracle: Any) -> None:
    """The set holds programs OPA accepts and programs it refuses with type errors."""
    codes = [opa_outcome(oracle, {"p.rego": "package p\n" + b}, q)[0] for b, q in PROGRAMS]
    assert codes.count(None) >= 10 and codes.count("rego_type_error") >= 10, codes


# ---------------------------------------------------------------- generated programs

_VALUES = ["1", "true", '"s"', "null", "[1]", '{"f": 1}', "{1}"]
_VARS = ["k", "j"]


def _value(rng: random.Random) -> str:
    return rng.choice(_VALUES)


def _dynamic_rules(rng: random.Random) -> list[str]:
    """One or two rules with variables in their head's ref (one ref, one kind:
    rules of different kinds or shapes there are conflicts, not types)."""
    k = rng.choice(_VARS)
    ref = rng.choice([f"a[{k}]", f"a.b[{k}]", f"a[{k}].y", f"a.b[{k}].y"])
    op = rng.choice(["contains", ":="])
    return [f"{ref} {op} {_value(rng)} if some {k} in input.{k}s" for _ in range(rng.randint(1, 2))]


_STATIC_REFS = ["a.x", "a.b.x", "a.x.y", "a.x.z", "a.b.x.y", "a.y", "a.b.z"]


def _static_rules(rng: random.Random) -> list[str]:
    """Up to three rules at literal refs under the same prefix, none below
    another (a rule with rules below it is a conflict)."""
    refs: list[str] = []
    for ref in rng.sample(_STATIC_REFS, rng.randint(0, 3)):
        if not any(ref.startswith(r + ".") or r.startswith(ref + ".") for r in refs):
            refs.append(ref)
    return [f"{ref} {rng.choice(['contains', ':='])} {_value(rng)}" for ref in refs]


def _lookup(rng: random.Random) -> str:
    ref = rng.choice(["a", "a.x", "a.y", "a.b", "a.b.x", "a.x.y", "a.x.z", "a.b.x.y", "a.b.y", 'a["x"]', "a.x.f", "a.b.x.f"])
    kind = rng.randrange(6)
    if kind == 0:
        return f"{ref}[{_value(rng)}]"
    if kind == 1:
        member = rng.choice(["1", "true", '"s"'])
        return f"not {ref}[{member}]"
    if kind == 2:
        return f"{ref} == {_value(rng)}"
    if kind == 3:
        return f"{ref}[_] == {_value(rng)}"
    if kind == 4:
        return f"some v in {ref}\n    v == {_value(rng)}"
    return f"count({ref}) > 0"


def generated_program(seed: int) -> str:
    """A module with rules with variables in their refs, rules at literal
    refs under the same prefix, and a rule looking up the shared documents."""
    rng = random.Random(seed)
    rules = _dynamic_rules(rng) + _static_rules(rng)
    rng.shuffle(rules)
    lookups = "\n    ".join(_lookup(rng) for _ in range(rng.randint(1, 2)))
    return "package p\n\n" + "\n".join(rules) + f"\n\nallow if {{\n    {lookups}\n}}\n"


GENERATED = 300


@pytest.mark.parametrize("start", range(0, GENERATED, 100))
def test_generated_programs_agree_with_opa(oracle: Any, screened: Passed, start: int) -> None:  # noqa: F811
    problems = []
    for seed in range(start, start + 100):
        modules = {"p.rego": generated_program(seed)}
        want = opa_outcome(oracle, modules, "data.p.allow")
        got = pyrego_outcome(modules, "data.p.allow")
        if want[0] != got[0] or (want[0] == "rego_type_error" and want != got):
            problems.append(f"--- seed {seed}\n{modules['p.rego']}OPA: {want}\npyrego: {got}")
    assert not problems, "\n".join(problems)


def test_generated_programs_are_mixed(oracle: Any) -> None:
    """OPA accepts some generated programs and refuses others as ill-typed."""
    codes = [opa_outcome(oracle, {"p.rego": generated_program(s)}, "data.p.allow")[0] for s in range(100)]
    assert 15 <= codes.count("rego_type_error") <= 85, codes
    assert codes.count(None) >= 10, codes
