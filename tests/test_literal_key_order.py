"""Object literals whose keys are variables, and set literals of variables,
compared with OPA v1.20.2 in every execution form.

OPA builds an object literal entry by entry in the order ``ast.Compare``
sorts its keys (of two keys that turn out equal, the later entry stays), and
iterates a set literal's members in that order. Variables sort by name, and
by then OPA's compiler has renamed each declared one (``:=``, ``some``, a
function's arguments) ``__localN__``: ``{b: "first", a: "second"}`` with
``a`` and ``b`` both ``"x"`` is ``{"x": "first"}`` when ``a`` was declared
first, whatever the order of the text; a variable bound without being
declared keeps its name (``v5`` sorts after ``__local0__``, ``A`` before).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import agree
from opa_oracle import plain_numbers
from pyrego.conformance import canonical

_P = "package p\n\nsrc := {\"x\"}\n\n"

CASES = {
    "declared in the order of the text": 'o := {a: "first", b: "second"} if { a := "x"; b := "x" }',
    "declared in the other order": 'o := {b: "first", a: "second"} if { a := "x"; b := "x" }',
    "a bound variable after a declared one": 'o := {v5: 0, v6: "b"} if { src[v5]; v6 := v5 }',
    "a bound variable before a declared one": 'o := {A: 0, v6: "b"} if { src[A]; v6 := A }',
    "three, two equal": 'o := {c: 3, b: 2, a: 1} if { some c in ["y"]; b := "x"; a := "y" }',
    "function arguments": 'f(b, a) := {a: 1, b: 2}\n\no := f("x", "x")',
    "set iterated": 'o := [y | some y in {b, a, c}] if { b := 2; a := 1; c := 3 }',
    "set of bound and declared": 'o := [y | some y in {Z, k, v5}] if { src[Z]; k := 1; some v5 in [0] }',
    "object in a comprehension": 'o := [{b: 1, a: 2} | a := "x"; b := "x"]',
}


@pytest.mark.parametrize("name", list(CASES))
def test_object_and_set_literals_with_variables(oracle: Any, name: str) -> None:
    agree(oracle, _P + CASES[name] + "\n", "data.p.o")


# OPA puts a call, comprehension or ref among the keys in a variable of its
# own (``__localN__``), which sorts before a variable bound without being
# declared whose name starts with a lowercase letter, after an uppercase one.
MADE_CASES = {
    "a ref and a lowercase name": 'o := {a: 1, input.x: 5} if { a = "y" }',
    "the ref written first": 'o := {input.x: 5, a: 1} if { a = "y" }',
    "a ref and an uppercase name": 'o := {A: 1, input.x: 5} if { A = "y" }',
    "a ref and a declared variable": 'o := {a: 1, input.x: 5} if { a := "y" }',
    "a call and a lowercase name": 'o := {a: 1, lower("Y"): 5} if { a = "y" }',
    "a call and a declared variable": 'o := {a: 1, lower("Y"): 5} if { a := "y" }',
    "a comprehension": 'o := {a: 1, [x | x := "y"][0]: 5} if { a = "y" }',
    "a rule": 'o := {a: 1, data.p.k: 5} if { a = "y" }\n\nk := "y"',
    "a set": 'o := [v | some v in {a, input.x, b}] if { a = "y"; b := 2 }',
}


@pytest.mark.parametrize("name", list(MADE_CASES))
def test_variables_among_calls_and_refs(oracle: Any, name: str) -> None:
    agree(oracle, _P + MADE_CASES[name] + "\n", "data.p.o", {"x": "y"})


_NAMES = ["a", "b", "A", "Z", "v5", "x1", "k", "B2"]


def _generated(rng: random.Random) -> str:
    names = rng.sample(_NAMES, rng.randint(2, 4))
    binds = []
    for name in names:
        value = rng.choice(['"x"', '"y"', "1"])
        binds.append(
            rng.choice(
                [f"{name} := {value}", f"some {name}; {name} = {value}", f"{name} = {value}", f"src[{name}]", f"some {name} in [{value}]"]
            )
        )
    rng.shuffle(binds)
    if rng.random() < 0.5:
        items = [f"{name}: {i}" for i, name in enumerate(names)]
        rng.shuffle(items)
        head = "o := {" + ", ".join(items) + "}"
    else:
        head = "o := [y | some y in {" + ", ".join(names) + "}]"
    return _P + head + " if {\n\t" + "\n\t".join(binds) + "\n}\n"


@pytest.mark.parametrize("seed", range(6))
def test_generated_literals(oracle: Any, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(8):
        agree(oracle, _generated(rng), "data.p.o")


QUERIES = [
    'a := "x"; b := "x"; o := {b: 1, a: 2}',
    'b := "x"; a := "x"; o := {b: 1, a: 2}',
    'b = "x"; a := "x"; o := {b: 1, a: 2}',
    'b := 2; a := 1; o := [y | some y in {b, a}]',
]


@pytest.mark.parametrize("query", QUERIES)
def test_queries(oracle: Any, query: str) -> None:
    # A query's declared variables are OPA's __localqN__.
    res = oracle.evaluate({}, query)
    want = canonical([plain_numbers(b)["o"] for b in res.bindings])
    for form in EXECUTION_FORMS:
        with in_form(form):
            got = pyrego.Engine().eval_query(query)["result"]
        assert canonical([pyrego.json_ready(r["bindings"]["o"]) for r in got]) == want, form
