"""The fast form's inline builtins and its lookups done once before a loop
(codegen_tiers): the same answers and errors as the compact form, on operands
of every type, in both error modes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import pyrego
from pyrego.codegen import tiers as codegen_tiers
from pyrego.codegen.tiers import hoist_lookups

POLICY = """package f
sw := startswith(input.a, input.b)
ew := endswith(input.a, input.b)
ct := contains(input.a, input.b)
sw_lit := startswith(input.a, "x")
n := count(input.a)
add := input.a + input.b
sub := input.a - input.b
sub_lit := 10 - input.a
get := object.get(input.a, input.b, "dflt")
get_path := object.get(input.a, ["k", "m"], 0)
now_ok if time.now_ns() - input.a < 10
loop_first contains x if {
    some x in input.xs
    startswith(x, input.p)
    input.flag == true
}
loop_order if {
    some x in input.xs
    startswith(x, "a")
    count(input.s) > 1
}
nested contains [x, y] if {
    some x in input.xs
    some y in input.ys
    input.o[x] == y
    input.o.k == "v"
}
"""

RULES = ["sw", "ew", "ct", "sw_lit", "n", "add", "sub", "sub_lit", "get", "get_path", "now_ok", "loop_first", "loop_order", "nested"]

OPERANDS: list[Any] = ["xyz", "x", "", "é", 0, 1, -3, 2.5, 10**40, True, None, [], ["x", 1], {}, {"k": {"m": 1}, "x": 2}]


def _inputs() -> Iterator[dict[str, Any]]:
    for a in OPERANDS:
        for b in ("x", 1, 2.5, 10**40, None, ["k"], "k"):
            yield {"a": a, "b": b}
    yield {"xs": ["ab", "b", 1], "p": "a", "flag": True, "s": "ss", "ys": [1, 2], "o": {"ab": 1, "k": "v"}}
    yield {"xs": ["b", 1], "p": "a", "flag": False, "s": [1], "ys": [], "o": {"b": 1, "k": "v"}}
    yield {"xs": ["ab", 1], "p": 3, "flag": True, "s": 5, "ys": ["x"], "o": []}
    yield {"xs": {"k1": "ab", "k2": "x"}, "p": "x", "flag": True, "s": "abc", "ys": [1], "o": {"k": "v", "x": 1, "ab": 1}}
    yield {"xs": "notacollection", "flag": True}


def _answers(form: str, strict: bool, monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, int], Any]:
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1 if form == "fast" else 10**9)
    pyrego.clear_compile_cache()
    engine = pyrego.Engine()
    engine.add_policy("f.rego", POLICY)
    engine.set_strict_builtin_errors(strict)
    engine.eval_rule("data.f.n", input={"a": "warm"})
    engine.eval_rule("data.f.n", input={"a": "warm"})
    assert engine.program().code.gen.hot is (form == "fast")
    out: dict[tuple[str, int], Any] = {}
    for i, inp in enumerate(_inputs()):
        for rule in RULES:
            try:
                value = engine.eval_rule(f"data.f.{rule}", input=inp)
                if rule == "now_ok":
                    value = value is True  # (the clock moves between evaluations)
                out[rule, i] = ("value", value)
            except pyrego.RegoError as err:
                out[rule, i] = ("error", err.code, str(err), err.location)
    pyrego.clear_compile_cache()
    return out


@pytest.mark.parametrize("strict", [False, True])
def test_inline_builtins_and_hoisted_lookups_answer_as_the_compact_form(strict: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    compact = _answers("compact", strict, monkeypatch)
    fast = _answers("fast", strict, monkeypatch)
    assert compact.keys() == fast.keys()
    differing = [(k, compact[k], fast[k]) for k in compact if compact[k] != fast[k]]
    assert not differing, differing[:5]
    errors = [k for k, v in fast.items() if v[0] == "error"]
    if strict:
        assert len(errors) > 50  # operands of the wrong types are errors in strict mode
    else:
        assert not errors


def test_inline_builtins_values() -> None:
    engine = pyrego.Engine()
    engine.add_policy("f.rego", POLICY)
    for _ in range(40):
        engine.eval_rule("data.f.n", input={"a": "warm"})
    assert engine.program().code.gen.hot

    def ev(rule: str, **inp: Any) -> Any:
        return engine.eval_rule(f"data.f.{rule}", input=inp)

    assert ev("sw", a="xyz", b="x") is True and ev("sw", a="xyz", b="y") is False and ev("sw", a=1, b="x") is pyrego.UNDEFINED
    assert ev("ct", a="xyz", b="y") is True and ev("ew", a="xyz", b="z") is True
    assert ev("n", a="é€") == 2 and ev("n", a={"a": 1}) == 1 and ev("n", a=1) is pyrego.UNDEFINED
    assert ev("add", a=10**40, b=1) == 10**40 + 1 and ev("add", a=1, b=2.5) == 3.5 and ev("add", a=True, b=1) is pyrego.UNDEFINED
    assert ev("sub", a=3, b=5) == -2 and ev("sub_lit", a=4) == 6 and ev("sub", a="3", b=1) is pyrego.UNDEFINED
    assert ev("get", a={"x": None}, b="x") is None and ev("get", a={}, b="x") == "dflt" and ev("get", a=[], b="x") is pyrego.UNDEFINED
    assert ev("get_path", a={"k": {"m": 7}}, b=0) == 7
    assert ev("now_ok", a=0) is pyrego.UNDEFINED and ev("now_ok", a=10**30) is True and ev("now_ok", a=1.5) is pyrego.UNDEFINED
    assert ev("loop_first", xs=["ab", "b", "ac"], p="a", flag=True) == {"ab", "ac"}
    # The checks keep their order: the later iteration's error comes before the invariant test would end the loop.
    engine.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.RegoError) as info:
        ev("loop_order", xs=["b", 1], s=[1])
    assert info.value.code == "eval_type_error" and info.value.location is not None and info.value.location.row == 20


def _lines(text: str) -> list[str]:
    return text.strip("\n").split("\n")


def test_a_repeated_lookup_moves_before_the_outermost_loop_it_does_not_depend_on() -> None:
    code = _lines("""
def D1_0(ctx):
    t1, t2 = rt_dinput(ctx, 'a')
    for i3 in rt_values(t2):
        t4 = rt_dget(t1, 'b')
        if t4 is UNDEF: continue
        for i5 in rt_values(i3):
            t6, t7 = rt_dpath(t1, 'c', 'd')
            t8 = rt_dget(t7, 'e')
            t9 = rt_dget(i5, 'f')
            if t9 != t8: continue
            return True
    return UNDEF
""")
    assert hoist_lookups(code) == _lines("""
def D1_0(ctx):
    t1, t2 = rt_dinput(ctx, 'a')
    t4 = rt_dget(t1, 'b')
    t6, t7 = rt_dpath(t1, 'c', 'd')
    t8 = rt_dget(t7, 'e')
    for i3 in rt_values(t2):
        if t4 is UNDEF: continue
        for i5 in rt_values(i3):
            t9 = rt_dget(i5, 'f')
            if t9 != t8: continue
            return True
    return UNDEF
""")


@pytest.mark.parametrize(
    "code",
    [
        # The operand is assigned inside the loop.
        """
def D1_0(ctx):
    for i1 in rt_values(K1):
        t2 = rt_dget(i1, 'a')
        t3 = rt_dget(t2, 'b')
    return UNDEF
""",
        # The operand is assigned twice.
        """
def D1_0(ctx):
    t1 = R2(ctx)
    for i2 in rt_values(t1):
        t3 = rt_dget(t1, 'b')
        t1 = R3(ctx)
    return UNDEF
""",
        # The operand is assigned in a block that ended before the loop.
        """
def D1_0(ctx):
    try:
        r1 = B1(ctx)
    except (BuiltinError, BuiltinHalt) as exc:
        r1 = UNDEF
    for i2 in rt_values(K1):
        t3 = rt_dget(r1, 'b')
    return UNDEF
""",
        # Only a ONCE block: nothing to gain.
        """
def D1_0(ctx):
    t1 = ctx.input
    for _ in ONCE:
        t2 = rt_dget(t1, 'b')
        break
    return UNDEF
""",
        # The context is a parameter assigned again (a ``with``).
        """
def D1_0(ctx):
    ctx = WITH(ctx)
    for i2 in rt_values(K1):
        t3, t4 = rt_dinput(ctx, 'b')
    return UNDEF
""",
    ],
)
def test_a_lookup_stays_where_moving_it_is_not_known_to_be_safe(code: str) -> None:
    assert hoist_lookups(_lines(code)) == _lines(code)


def test_a_constant_documents_read_moves_but_not_another_rules() -> None:
    code = _lines("""
def D1_0(ctx, acc):
    t1, t2 = rt_dinput(ctx, 'roles')
    for i3 in rt_values(t2):
        t4 = R3(ctx)
        t5 = R4(ctx)
        t6 = rt_get(t4, i3)
        acc.add(t6)
""")
    assert hoist_lookups(code, frozenset({"R3"})) == _lines("""
def D1_0(ctx, acc):
    t1, t2 = rt_dinput(ctx, 'roles')
    t4 = R3(ctx)
    for i3 in rt_values(t2):
        t5 = R4(ctx)
        t6 = rt_get(t4, i3)
        acc.add(t6)
""")
    assert hoist_lookups(code) == code


WITH_POLICY = """package w
perms := {"admin": ["read", "write"], "user": ["read"]}
granted contains p if {
    some role in input.roles
    some p in perms[role]
}
mocked := x if {
    x := granted with perms as {"user": ["fly"]}
}
"""


@pytest.mark.parametrize("form", ["compact", "fast"])
def test_a_hoisted_constant_document_still_takes_with(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codegen_tiers, "PROMOTE_AFTER", 1 if form == "fast" else 10**9)
    pyrego.clear_compile_cache()
    try:
        engine = pyrego.Engine()
        engine.add_policy("w.rego", WITH_POLICY)
        for _ in range(3):
            assert engine.eval_rule("data.w.granted", input={"roles": ["admin", "user"]}) == {"read", "write"}
            assert engine.eval_rule("data.w.mocked", input={"roles": ["admin", "user"]}) == {"fly"}
        assert engine.program().code.gen.hot is (form == "fast")
    finally:
        pyrego.clear_compile_cache()
