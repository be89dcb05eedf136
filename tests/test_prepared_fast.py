"""The prepared path's fast form: constant documents read from the memo, integer comparisons
and memberships at C speed, checks in source order. Each must decide as the compact form
(and OPA) does, ``with`` and odd types included."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import pyrego
from pyrego.codegen import tiers as codegen_tiers
from pyrego.codegen.tiers import fast_lines
from pyrego.runtime.helpers import rt_member

POLICY = """package fast

default allow := false

names := ["alice", "bob", 1, 2.5]
ports := [22, 3389, 1.5]

allow if {
    input.op == "write"
    input.user in names
    count(input.items) > 1
    input.priority >= 1000
    not input.port in ports
}

small if input.n < 10
big if input.n >= 10
upto if input.n <= -3
above if input.n > 0

member_name if input.user in names
replaced if input.user in names with data.fast.names as ["carol"]
replaced_num if input.port in ports with data.fast.ports as [7]
"""

INPUTS: list[Any] = [
    {"op": "write", "user": "alice", "items": [1, 2], "priority": 1000, "port": 80, "n": 9},
    {"op": "write", "user": "bob", "items": "ab", "priority": 1000.0, "port": 22, "n": 10},
    {"op": "write", "user": 1, "items": {"a": 1, "b": 2}, "priority": "x", "port": 22.0, "n": 10.0},
    {"op": "write", "user": True, "items": [1, 2], "priority": 999, "port": 1.5, "n": -3},
    {"op": "write", "user": 1.0, "items": [1, 2], "priority": True, "port": True, "n": True},
    {"op": "write", "user": 2.5, "items": [1], "priority": None, "port": "22", "n": "9"},
    {"op": "write", "user": "carol", "items": [1, 2], "priority": [1], "port": [22], "n": None},
    {"op": "write", "user": ["alice"], "items": 5, "priority": 10**30, "port": 7, "n": 10**30},
    {"op": "read", "user": "alice", "items": [1, 2], "priority": 1000, "port": 80, "n": -(10**30)},
    {"user": "alice"},
    {},
]
RULES = ("allow", "small", "big", "upto", "above", "member_name", "replaced", "replaced_num")


def _engine(text: str) -> pyrego.Engine:
    e = pyrego.Engine()
    e.add_policy("fast.rego", text)
    return e


def _results(e: pyrego.Engine) -> list[Any]:
    out = []
    for inp in INPUTS:
        e.set_input(inp)
        out.append([e.eval_rule(f"data.fast.{r}") for r in RULES])
        out.append(e.eval_query("data.fast.allow with data.fast.names as [true]", input=inp)["result"])
    return out


def test_both_forms_decide_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    pyrego.clear_compile_cache()
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 10**9)
    compact_engine = _engine(POLICY)
    compact = _results(compact_engine)
    gen = compact_engine._get_program().gen
    assert gen is not None and not gen.hot
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1)
    hot_engine = _engine(POLICY + "\n# hot\n")
    hot_engine.eval_rule("data.fast.small")
    fast = _results(hot_engine)
    gen = hot_engine._get_program().gen
    assert gen is not None and gen.hot
    assert fast == compact
    # What the results are, in Rego: true is not 1, 1.0 is 1, strings sort after numbers.
    e = hot_engine
    e.set_input({"user": True})
    assert e.eval_rule("data.fast.member_name") is pyrego.UNDEFINED
    e.set_input({"user": 1.0})
    assert e.eval_rule("data.fast.member_name") is True
    e.set_input({"user": "alice"})
    assert e.eval_rule("data.fast.replaced") is pyrego.UNDEFINED
    e.set_input({"user": "carol"})
    assert e.eval_rule("data.fast.replaced") is True
    e.set_input({"n": "9"})
    assert e.eval_rule("data.fast.big") is True and e.eval_rule("data.fast.small") is pyrego.UNDEFINED


def test_fast_form_reads_constant_documents_from_the_memo() -> None:
    from pyrego.codegen.tiers import RuleWrapper

    wrappers = {"R3": RuleWrapper("complete", 3, constant="K6"), "R4": RuleWrapper("complete", 4, ("D4_0",))}
    lines = ["    t3 = R3(ctx)", "    t4 = R4(ctx)", "    if not rt_gt(t5, 0): return UNDEF", "    if not rt_le(t5, -7): continue"]
    assert fast_lines(lines, {}, wrappers) == [
        "    t3 = ctx.cache.get(3, K6)",
        "    t4 = R4(ctx)",
        "    if not (t5 > 0 if type(t5) is int else rt_gt(t5, 0)): return UNDEF",
        "    if not (t5 <= -7 if type(t5) is int else rt_le(t5, -7)): continue",
    ]
    # Not an integer literal, or not a line of that shape: left alone.
    same = ["    if not rt_gt(t5, 1.5): return UNDEF", "    if not rt_gt(t5, t6): return UNDEF", "    x = 'if not rt_gt(t5, 0): return UNDEF'"]
    assert fast_lines(same, {}, wrappers) == same


class _Name(str):
    """A str subclass: Rego (pyrego) compares strings by exact type."""


@pytest.mark.parametrize(
    ("x", "coll", "want"),
    [
        ("a", ["a", "b"], True),
        ("c", ["a", "b"], False),
        ("a", [_Name("a")], False),
        ("a", [_Name("a"), "a"], True),
        (1, [True], False),
        (True, [1], False),
        (1, [1.0], True),
        (1.0, (1,), True),
        (2, [1, "2"], False),
        ([1], [[1.0]], True),
        ("a", ("a",), True),
    ],
)
def test_member_quick_paths_keep_rego_equality(x: Any, coll: Any, want: bool) -> None:
    assert rt_member(x, coll) is want


def test_checks_stay_in_source_order() -> None:
    # The first test of the body (the one the author expects to fail most) runs first.
    pyrego.clear_compile_cache()
    e = _engine("package o\nxs := [1, 2]\nallow if {\n input.a == 1\n some x in xs\n input.b == 2\n input.c == x\n input.d == 4\n}\n")
    src = e.compiled_source
    a, b, d = (src.index(f"'{k}'") for k in "abd")
    assert a < b < d
    for inp, want in (({"a": 1, "b": 2, "c": 2, "d": 4}, True), ({"a": 1, "b": 2, "c": 3, "d": 4}, pyrego.UNDEFINED)):
        e.set_input(inp)
        assert e.eval_rule("data.o.allow") is want


def test_many_threads_on_one_hot_engine() -> None:
    e = _engine(POLICY + "\n# threads\n")
    want = {}
    for i, inp in enumerate(INPUTS):
        want[i] = e.eval_rule("data.fast.allow", input=inp)
    for _ in range(40):
        e.eval_rule("data.fast.allow", input=INPUTS[0])
    errors: list[str] = []

    def work(k: int) -> None:
        for n in range(300):
            i = (n + k) % len(INPUTS)
            got = e.eval_rule("data.fast.allow", input=INPUTS[i])
            if got != want[i] or type(got) is not type(want[i]):
                errors.append(f"{i}: {got!r} != {want[i]!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


ENTRY = """package entry

default d := "none"

c := 7
a := b + 1 if input.x
b := 2 if input.x > 0
b := 3 if input.x < 0
d := "set" if input.x == 5
conflict := 1 if input.x
conflict := 2 if input.y
"""


def _entry_results(e: pyrego.Engine, inp: Any) -> list[Any]:
    e.set_input(inp)
    out: list[Any] = []
    for rule in ("c", "a", "b", "d", "conflict"):
        try:
            out.append(e.eval_rule(f"data.entry.{rule}"))
        except pyrego.RegoError as err:
            out.append((err.code, str(err)))
    return out


@pytest.mark.parametrize("inp", [{"x": 1}, {"x": -1}, {"x": 5, "y": True}, {"x": 0}, {}])
def test_entry_form_computes_as_the_memoising_wrapper(inp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pyrego.clear_compile_cache()
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 10**9)
    compact_engine = _engine(ENTRY)
    compact = _entry_results(compact_engine, inp)
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1)
    hot = _engine(ENTRY + "\n# hot\n")
    hot.eval_rule("data.entry.c")
    gen = hot._get_program().gen
    assert gen is not None and gen.hot
    assert _entry_results(hot, inp) == compact
    # Evaluations start from the entry form, the memo-less E<id>, or from
    # the definitions themselves where E<id> would only call them in turn.
    starts = {path.rsplit(".", 1)[1]: fn.__name__[0] for path, (fn, _, _, _) in hot._rule_fns.items()}
    assert starts == {"c": "E", "a": "D", "b": "E", "d": "D", "conflict": "E"}, starts


FIRST_DEFINED = """package first

default allow := "no"

allow := "yes" if input.a == 1
allow := "yes" if input.b == 1
allow := "yes" if to_number(input.c) > 1

only if input.a == 1
"""


def _first_results(e: pyrego.Engine, inp: Any) -> list[Any]:
    e.set_input(inp)
    out: list[Any] = []
    for rule in ("allow", "only"):
        try:
            out.append(e.eval_rule(f"data.first.{rule}"))
        except pyrego.RegoError as err:
            out.append((err.code, str(err)))
    return out


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("inp", [{"a": 1}, {"b": 1}, {"c": "5"}, {"c": "x"}, {"a": 2, "c": "x"}, {}])
def test_definitions_called_in_turn_compute_as_the_entry_form(inp: Any, strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    pyrego.clear_compile_cache()
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 10**9)
    compact_engine = _engine(FIRST_DEFINED)
    compact_engine.set_strict_builtin_errors(strict)
    compact = _first_results(compact_engine, inp)
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1)
    hot = _engine(FIRST_DEFINED + "\n# hot\n")
    hot.set_strict_builtin_errors(strict)
    hot.eval_rule("data.first.only")
    assert _first_results(hot, inp) == compact
    fn, more, default, _ = hot._rule_fns["data.first.allow"]
    assert fn.__name__.startswith("D") and len(more) == 2 and default == "no"
    assert _first_results(hot, inp) == compact
