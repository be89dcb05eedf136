"""The compact form's statements: tests take in the assignment and the tests before them."""

from __future__ import annotations

import pytest

import pyrego
from pyrego.codegen.lines import LineWriter
from pyrego.codegen.tiers import PROMOTE_AFTER


def _written(compact: bool) -> list[str]:
    w = LineWriter(1, compact)
    w.assign("t1", "rt_dget(t0, 'a')")
    w.guard("t1 != 'x'")  # t1's only use
    w.assign("t2", "R3(ctx)")
    w.guard("not rt_member(t0, t2)")  # t0 is only loaded before t2
    w.assign("t3", "C4(ctx, t0)")
    w.guard("t3 is UNDEF or t3 is False")  # used twice: kept as a name
    w.assign("t4", "rt_dget(t0, 'b')")
    w.guard("rt_eq(t5, t4)")  # only a name is loaded before t4
    w.assign("t6", "rt_get(t0, 1)")
    w.guard("f(g(t0), t6)")  # g runs before t6 is read: not folded
    w.w("return t6")
    w.finish()
    return w.lines


def test_the_canonical_shapes_have_a_statement_each() -> None:
    assert _written(False) == [
        "    t1 = rt_dget(t0, 'a')",
        "    if t1 != 'x': return UNDEF",
        "    t2 = R3(ctx)",
        "    if not rt_member(t0, t2): return UNDEF",
        "    t3 = C4(ctx, t0)",
        "    if t3 is UNDEF or t3 is False: return UNDEF",
        "    t4 = rt_dget(t0, 'b')",
        "    if rt_eq(t5, t4): return UNDEF",
        "    t6 = rt_get(t0, 1)",
        "    if f(g(t0), t6): return UNDEF",
        "    return t6",
    ]


def test_the_compact_form_folds_and_joins_tests() -> None:
    assert _written(True) == [
        "    if rt_dget(t0, 'a') != 'x' or not rt_member(t0, R3(ctx)) or (t3 := C4(ctx, t0)) is UNDEF or t3 is False"
        " or rt_eq(t5, rt_dget(t0, 'b')): return UNDEF",
        "    t6 = rt_get(t0, 1)",
        "    if f(g(t0), t6): return UNDEF",
        "    return t6",
    ]


def test_a_return_after_a_test_that_returns_undefined_takes_it_in() -> None:
    w = LineWriter(1, True)
    w.assign("t1", "ctx.input")
    w.guard("t1 is UNDEF")
    w.assign("t2", "rt_dget(t1, 'a')")
    w.guard("t2 is UNDEF")
    w.returns("t2")
    w.finish()
    assert w.lines == ["    return UNDEF if (t1 := ctx.input) is UNDEF or (t2 := rt_dget(t1, 'a')) is UNDEF else t2"]
    w = LineWriter(2, True)
    w.fail = "continue"
    w.guard("a")
    w.returns("True")
    assert w.lines == ["        if a: continue", "        return True"]


def test_tests_join_only_at_one_level_with_one_failure() -> None:
    w = LineWriter(1, True)
    w.guard("a")
    w.fail = "continue"
    w.guard("b")
    w.indent = 2
    w.guard("c")
    w.guard("d")
    assert w.lines == ["    if a: return UNDEF", "    if b: continue", "        if c or d: continue"]


def test_a_name_inside_a_longer_name_or_a_literal_is_not_folded() -> None:
    w = LineWriter(1, True)
    w.assign("t1", "rt_dget(t0, 'a')")
    w.guard("t12 is UNDEF")
    w.assign("t2", "rt_dget(t0, 'a')")
    w.guard("rt_eq('t2', t2)")
    assert w.lines == [
        "    t1 = rt_dget(t0, 'a')",
        "    if t12 is UNDEF: return UNDEF",
        "    t2 = rt_dget(t0, 'a')",
        "    if rt_eq('t2', t2): return UNDEF",
    ]


POLICY = """package joined

allow if {
    input.a == "x"
    n := to_number(input.s)
    n > 1
    startswith(input.p, "/")
    input.q != "t2 := rt_dget(t1, 'x')"
    not input.a in {"y", "z"}
    not to_number(input.s) > 5
    not any_big
}

any_big if {
    some v in input.vs
    v > 5
}
"""


@pytest.mark.parametrize(
    "inp",
    [
        {"a": "x", "s": "2", "p": "/a", "q": "y"},
        {"a": "x", "s": "oops", "p": "/a", "q": "y"},
        {"a": "y", "s": "oops", "p": "/a"},
        {"a": "x", "s": "2", "p": 3, "q": "y"},
        {"a": "x", "s": "2", "p": "/", "q": "t2 := rt_dget(t1, 'x')"},
        {"a": "x", "s": "9", "p": "/a", "q": "y"},
        {"a": "x", "s": "2", "p": "/a", "q": "y", "vs": [1, 7]},
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_joined_tests_answer_and_fail_as_separate_ones(inp: dict[str, object], strict: bool) -> None:
    # Compact code (first evaluations), then the fast form: the same answers
    # and the same builtin errors, which only a test that is reached raises.
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("joined.rego", POLICY)
    e.set_strict_builtin_errors(strict)
    e.set_input(inp)
    outcomes = []
    for _ in range(PROMOTE_AFTER + 2):
        try:
            outcomes.append(e.eval_rule("data.joined.allow"))
        except pyrego.RegoError as err:
            outcomes.append((err.code, str(err)))
    assert e._get_program().gen.hot  # type: ignore[union-attr]
    assert all(o == outcomes[0] for o in outcomes)
