"""Rule definitions run as closures until a program is hot (pyrego.codegen.closures).

Every case is evaluated three ways, each in a program of its own: with the
closures (the default), with generated code from the start, and with the fast
form from the first rule computation on. Values, and errors with their codes,
messages and locations, must be the same. Hypothesis then mutates these
policies and the fuzz corpus (tests/test_fuzz_engine.py): whatever a mutant
does, it must do the same with and without closures.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pyrego
from pyrego.codegen import closures
from pyrego.codegen import tiers as codegen_tiers
from pyrego.conformance import CaseTimeout, run_with_timeout
from test_fuzz_engine import CORPUS, FUZZ_SETTINGS, HARD_LIMIT_S, JSON_VALUES, QUERIES, mutated

POLICIES: dict[str, str] = {
    "iterate_ref": """package t
allow if {
    input.users[i].name == "alice"
    input.users[i].admin == true
}
names contains n if { n := input.users[_].name }
first := input.users[0].name
""",
    "some_in": """package t
p if { some x in input.xs; x > 2 }
q if { some k, v in input.m; k == "b"; v == 2 }
r if { some "b", v in input.m; v > 1 }
s := v if { some k, v in input.m; k == input.key }
""",
    "negation": """package t
deny if input.x == 1
allow if { not deny; not input.y == "no" }
none if { not 3 in input.xs }
""",
    "conflict": """package t
v := x if { some x in input.xs }
w := true if { some x in input.xs; x > 0 }
""",
    "data_refs": """package t
one := data.nums[1]
two := data.nums["2"]
deep := data.cfg.a.b
missing := data.nope.x
via_rule := data.t.first_name
first_name := input.users[0].name
fn_as_data := data.t.f
f(x) := x + 1
""",
    "functions_and_builtins": """package t
f(x) := x + 1
g(x) := y if { y := x * 2; y > 2 }
p := f(input.n)
q := g(input.n)
u := upper(input.s)
n := to_number(input.s)
c := count(input.xs)
sl := sprintf("%v-%v", [input.s, input.n])
""",
    "members": """package t
in_mixed if input.v in [1, "a", true]
in_str if input.v in ["a", "b"]
in_set if input.v in {1, 2}
in_input if input.v in input.xs
pair if 0, input.v in input.xs
not_in if not input.v in ["z"]
""",
    "compare": """package t
is_lt if input.a < input.b
is_le if input.a <= input.b
is_gt if input.a > input.b
is_ge if input.a >= input.b
is_eq if input.a == input.b
is_ne if input.a != input.b
eq_val := input.a == input.b
lit_ne if input.a != 1
""",
    "composites": """package t
obj := {"a": input.a, "b": [input.b, 1], "c": {input.a}}
dyn := {input.a: 1, input.b: 1}
dup := {input.a: 1, input.b: 2}
arr := [input.xs[_]]
sum := input.a + input.b * 2
neg := -input.a
""",
    "unify": """package t
p := x if { input.a = x }
q if { 1 = input.a }
r if { input.a = input.b }
s := y if { y = input.xs[_]; y > 1 }
""",
    "partial_rules": """package t
names contains n if { some u in input.users; n := u.name }
by_name[u.name] := u.admin if { some u in input.users }
deep.a[k] := 1 if { some k, _ in input.m }
msgs contains sprintf("bad %v", [x]) if { some x in input.xs; x > 1 }
e := x if { some x in input.xs; x > 2 } else := "none" if { input.a } else := 0
f := x if { x := input.xs[_] } else := 0
""",
    "comprehensions": """package t
arr := [x | some x in input.xs; x > 1]
st := {x | x := input.xs[_]}
ob := {k: v | some k, v in input.m}
keys := [k | some k, _ in input.m]
nested := [[y | some y in input.xs; y > x] | some x in input.xs]
captured := [u | some u in input.users; u.name == input.key]
n := count([x | x := input.xs[_]; x == 2])
dup := {k: v | some v in input.xs; k := "same"}
""",
    "functions": """package t
double(x) := x * 2
pick(x, x) := "same"
pick(x, y) := "diff" if x != y
first_big(xs) := x if { some x in xs; x > 2 }
size(1) := "one"
size(n) := "many" if n > 1
else := "few"
label(x) := concat("-", [x, upper(x)]) if is_string(x)
d := double(input.a)
p := pick(input.a, input.b)
f := first_big(input.xs)
s := size(input.a)
l := label(input.a)
""",
    "every": """package t
all_pos if { every x in input.xs { x > 0 } }
all_keys if { every k, v in input.m { is_string(k); v != 0 } }
nested if { every x in input.xs { every y in input.xs { x >= 0; y >= 0 } } }
shadow := x if { x := input.a; every x in input.xs { x != 99 } }
count_pos := n if { n := count([x | some x in input.xs; x > 0]); every x in input.xs { is_number(x) } }
""",
    "defaults_and_else": """package t
default allow := false
allow if input.role == "admin"
default v := {"k": 1}
v := input.v if input.v
e := 1 if input.a > 1
else := 2 if input.a > 0
else := 3
admin if input.role == "admin"
""",
}

INPUTS: list[Any] = [
    {},
    {"users": [{"name": "bob", "admin": True}, {"name": "alice", "admin": True}], "xs": [1, 2, 3], "m": {"a": 1, "b": 2}, "key": "a"},
    {"users": [{"name": "alice", "admin": False}], "xs": [3, 3], "m": {"b": 1}, "key": "b"},
    {"x": 1, "y": "no", "xs": [1, 2]},
    {"x": 2, "xs": [2, 2]},
    {"n": 3, "s": "12", "xs": [1, 2]},
    {"n": 1, "s": "abc", "xs": "notalist"},
    {"v": 1, "xs": [1.0, 2]},
    {"v": 1.0, "xs": [True]},
    {"v": True, "xs": [1]},
    {"v": "a", "xs": ["a"]},
    {"a": 1, "b": 1.0},
    {"a": 1, "b": "1"},
    {"a": [1], "b": {"x": 1}},
    {"a": "x", "b": "y", "xs": [1, 2]},
    {"a": 2, "b": 2, "xs": [2]},
    {"a": 0.5, "b": 2, "role": "admin", "v": {"z": 1}},
    {"a": None, "b": False, "xs": [], "v": False},
    {"users": [{"name": "ann", "admin": True}, {"name": "ann", "admin": False}], "xs": [3, 4], "a": True, "key": "ann"},
    {"xs": {"b": 3, "a": 2, "c": 1}, "m": {"z": 1, "y": {"k": [1]}, "x": 2}},
    {"xs": ["b", 2, None, "a", [1], {"k": 1}, 2.5], "m": {"1": 1, "0": 0}},
    {"users": [{"name": "ann", "admin": True}, {"name": "ann", "admin": True}], "m": {"x": 1}, "xs": [7]},
]

DATA = {"nums": {"1": "one", "2": "two"}, "cfg": {"a": {"b": [1, 2]}}}


def _outcome(text: str, rule: str, inp: Any, strict: bool) -> tuple[str, Any]:
    e = pyrego.Engine()
    # Off: some cases are what OPA's type checker refuses (a function read as
    # data), here for what each execution form does with them at run time.
    e.set_type_check(False)
    e.add_policy("t.rego", text)
    e.add_data(DATA)
    e.set_input(inp)
    e.set_strict_builtin_errors(strict)
    try:
        v = e.eval_rule(f"data.t.{rule}")
    except pyrego.RegoError as err:
        return "error", (type(err).__name__, getattr(err, "code", None), str(err))
    return "value", "undefined" if v is pyrego.UNDEFINED else v


def _rules(text: str) -> list[str]:
    names = []
    for line in text.splitlines()[1:]:
        name = line.split(" ", 1)[0].split("(", 1)[0].split("[", 1)[0]
        if name and name not in ("default", "else") and name not in names and "(" not in line.split(" ", 1)[0]:
            names.append(name)
    return names


def _all_outcomes(monkeypatch: pytest.MonkeyPatch, text: str, strict: bool, use_closures: bool, promote_after: int) -> list[Any]:
    monkeypatch.setattr(closures, "ENABLED", use_closures)
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", promote_after)
    pyrego.clear_compile_cache()
    try:
        return [(rule, i, _outcome(text, rule, inp, strict)) for rule in _rules(text) for i, inp in enumerate(INPUTS)]
    finally:
        pyrego.clear_compile_cache()


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_closures_agree_with_generated_code(name: str, strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    text = POLICIES[name]
    with_closures = _all_outcomes(monkeypatch, text, strict, True, codegen_tiers.PROMOTE_AFTER)
    compact = _all_outcomes(monkeypatch, text, strict, False, codegen_tiers.PROMOTE_AFTER)
    fast = _all_outcomes(monkeypatch, text, strict, False, 1)
    assert with_closures == compact
    assert with_closures == fast
    # The cases are worth having: some defined values, not only errors.
    assert any(kind == "value" and v != "undefined" for _, _, (kind, v) in with_closures)


def _definitions(e: pyrego.Engine) -> dict[str, Any]:
    e.eval_rule("data.t.allow")
    gen = e._program.gen  # type: ignore[union-attr]
    return {k: v for k, v in gen.namespace.items() if k.startswith("D")}


def test_simple_rules_run_as_closures_and_still_show_their_code() -> None:
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("t.rego", POLICIES["iterate_ref"])
    e.set_input(INPUTS[1])
    defs = _definitions(e)
    assert defs and all(fn.__code__.co_filename != "<pyrego policy>" for fn in defs.values())
    assert e.eval_rule("data.t.allow") is True
    # The code is written when it is shown (and compiled when the program is hot).
    assert "def D" in e.compiled_source and "rt_items(" in e.compiled_source


def test_a_hot_program_compiles_the_closures_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 3)
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("t.rego", POLICIES["iterate_ref"])
    e.set_input(INPUTS[1])
    defs = _definitions(e)
    assert all(fn.__code__.co_filename != "<pyrego policy>" for fn in defs.values())
    for _ in range(4):
        assert e.eval_rule("data.t.allow") is True
    gen = e._program.gen  # type: ignore[union-attr]
    assert gen.hot
    assert gen.namespace["D2_0"].__code__.co_filename == "<pyrego policy>"
    assert e.eval_rule("data.t.allow") is True


def test_other_shapes_get_generated_code() -> None:
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy(
        "t.rego",
        """package t
w if { input.a with input.a as 1 }
""",
    )
    e.set_input({"a": 2})
    assert e.eval_rule("data.t.w") is True
    gen = e._program.gen  # type: ignore[union-attr]
    assert not gen._closure_nodes
    assert gen.namespace["D2_0"].__code__.co_filename == "<pyrego policy>"


def test_compile_errors_are_raised_when_the_program_is_built() -> None:
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("t.rego", "package t\nallow if { x > 1 }\nok := 1\n")
    with pytest.raises(pyrego.RegoCompileError, match="var x is unsafe"):
        e.eval_rule("data.t.ok")


def test_a_loop_in_a_closure_honours_the_time_limit() -> None:
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("t.rego", "package t\np if { some x in numbers.range(1, 100000000); x < 0 }\n")
    e.set_eval_timeout(0.2)
    with pytest.raises(pyrego.EvalError, match="timed out"):
        e.eval_rule("data.t.p")


# -- mutated policies: closures and generated code agree on whatever they accept --------


def _query_outcomes(text: str, inp: Any, queries: list[str]) -> list[Any]:
    e = pyrego.Engine()
    e.set_input(inp)
    try:
        e.add_policy("fuzz.rego", text)
    except pyrego.RegoError as err:
        return [("error", type(err).__name__, str(err))]
    out: list[Any] = []
    for q in queries:
        try:
            out.append(("value", e.eval_query_json(q)))
        except pyrego.RegoError as err:
            out.append(("error", type(err).__name__, str(err)))
    out.append(("prints", e.take_prints()))
    return out


@FUZZ_SETTINGS
@given(
    text=mutated(CORPUS + [p.replace("package t", "package fuzz") for p in POLICIES.values()]),
    inp=st.one_of(st.sampled_from(INPUTS), JSON_VALUES),
)
def test_mutated_policies_agree_with_and_without_closures(text: str, inp: Any) -> None:
    queries = ["data.fuzz", *QUERIES[2:]]

    def both() -> tuple[list[Any], list[Any]]:
        outcomes = []
        for use in (True, False):
            closures.ENABLED = use
            pyrego.clear_compile_cache()
            outcomes.append(_query_outcomes(text, inp, queries))
        return outcomes[0], outcomes[1]

    try:
        with_closures, generated = run_with_timeout(both, HARD_LIMIT_S * 2)
    except CaseTimeout:
        pytest.fail("hang: no answer in time")
    finally:
        closures.ENABLED = True
        pyrego.clear_compile_cache()
    assert with_closures == generated
