"""Generated code is an attack surface (DESIGN.md §3).

Policy text must only ever reach the generated Python as ``repr()`` of a
checked value or through the constants table. These tests put hostile text in
every place a policy can hold text and check that it behaves as data.
"""

from __future__ import annotations

import json
import re

import pytest

import pyrego

HOSTILE_STRINGS = [
    "'); __import__('os').system('echo pwned'); ('",
    '"""; raise SystemExit; """',
    "\\'; import os #",
    "line\nbreak\n    return True",
    "nul\x00byte",
    "\u202eright-to-left\u2066",
    "{__import__('os')}",
    "\\u0027; x = 1",
    "x" * 100_000,
    "__builtins__",
]


def _rego_string(s: str) -> str:
    return json.dumps(s)


@pytest.mark.parametrize("hostile", HOSTILE_STRINGS, ids=[f"s{i}" for i in range(len(HOSTILE_STRINGS))])
def test_hostile_strings_are_values(hostile: str) -> None:
    lit = _rego_string(hostile)
    policy = f"""package t
s := {lit}
o := {{{lit}: {lit}}}
k := object.keys(o)
eq if input.v == {lit}
arr := [{lit}, {lit}]
member if input.v in [{lit}, "other"]
"""
    e = pyrego.Engine()
    e.add_policy("hostile.rego", policy)
    e.set_input({"v": hostile})
    assert e.eval_rule("data.t.s") == hostile
    assert e.eval_rule("data.t.o") == {hostile: hostile}
    assert e.eval_rule("data.t.k") == {hostile}
    assert e.eval_rule("data.t.eq") is True
    assert e.eval_rule("data.t.member") is True
    assert e.eval_rule("data.t.arr") == [hostile, hostile]


def test_hostile_text_never_appears_raw_in_generated_source() -> None:
    marker = "__import__('os').system('x')"
    e = pyrego.Engine()
    e.add_policy("m.rego", f"package t\np := {_rego_string(marker)}\nq contains {_rego_string(marker)}\n")
    src = e.compiled_source
    # The text may appear only inside a Python string literal made by repr().
    for line in src.splitlines():
        if "__import__" in line:
            assert repr(marker) in line
    assert e.eval_rule("data.t.p") == marker


@pytest.mark.parametrize(
    "name",
    ["class", "lambda", "def", "True", "__class__", "ctx", "UNDEF", "rt_get", "v1", "K1", "R1", "exec", "__builtins__"],
)
def test_rego_names_never_become_python_names(name: str) -> None:
    policy = f"""package {name}.{name}
{name} := 1
f({name}) := {name} + 1
g := [{name} | some {name} in [1, 2]]
h := x if {{ {name}2 := 5; x := {name}2 }}
"""
    e = pyrego.Engine()
    e.add_policy("names.rego", policy)
    base = f"data.{name}.{name}"
    assert e.eval_rule(f"{base}.{name}") == 1
    assert e.eval_rule(f"{base}.g") == [1, 2]
    assert e.eval_rule(f"{base}.h") == 5
    res = e.eval_query(f"{base}.f(41)")
    assert res["result"][0]["expressions"][0]["value"] == 42
    # Python identifiers in the generated code are the compiler's own.
    idents = set(re.findall(r"\bdef (\w+)\(", e.compiled_source))
    assert all(re.fullmatch(r"(R|D|F|N|DF|Q)\d+(_\d+)?", i) for i in idents), idents


def test_huge_literals_are_data() -> None:
    big = "9" * 5000
    expected = 10**5000 - 1
    e = pyrego.Engine()
    e.add_policy("big.rego", f"package t\nn := {big}\nm := n + 1\nf := 1e400\n")
    assert e.eval_rule("data.t.n") == expected
    assert e.eval_rule("data.t.m") == expected + 1
    assert e.eval_query_json("data.t.m").count("0") >= 5000
    assert e.eval_rule("data.t.f") == 10**400


def test_generated_code_has_no_python_builtins() -> None:
    e = pyrego.Engine()
    e.add_policy("b.rego", "package t\np := 1\n")
    ns = e._get_program().namespace
    assert ns["__builtins__"] == {}
    for forbidden in ("open", "eval", "exec", "__import__", "getattr", "compile"):
        assert forbidden not in ns


def test_deep_nesting_is_a_clean_error() -> None:
    depth = 200
    inner = "1"
    for _ in range(depth):
        inner = f"[x | x := {inner}]"
    e = pyrego.Engine()
    try:
        e.add_policy("deep.rego", f"package t\np := {inner}\n")
        e.eval_rule("data.t.p")
    except pyrego.RegoError as err:
        assert err.code in ("rego_parse_error", "rego_compile_error")


def test_time_limit_ends_evaluation() -> None:
    e = pyrego.Engine()
    e.add_policy(
        "slow.rego",
        "package t\np := count([1 | some a in numbers.range(1, 300); some b in numbers.range(1, 300); some c in numbers.range(1, 300)])\n",
    )
    e.set_eval_timeout(0.2)
    with pytest.raises(pyrego.EvalCancelError) as info:
        e.eval_rule("data.t.p")
    assert info.value.code == "eval_cancel_error"
