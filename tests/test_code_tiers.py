"""The two forms of generated code: compact for one-off evaluations, fast once hot."""

from __future__ import annotations

import gc

import pytest

import pyrego
from pyrego import codegen_tiers
from pyrego.codegen_tiers import PROMOTE_AFTER, TICK_LINE, fast_lines

POLICY = """package tiers

default allow := false

names := {"alice", "bob"}

allow if {
    input.user.name in names
    startswith(input.path, "/api/")
    count(input.roles) > 0
}

bad_call if {
    to_number(input.path) > 1
}
"""


def _engine() -> pyrego.Engine:
    pyrego.clear_compile_cache()
    e = pyrego.Engine()
    e.add_policy("tiers.rego", POLICY)
    return e


def test_fast_lines_expands_the_compact_statements() -> None:
    compact = [
        "def D2_0(ctx):",
        "    c = ctx.cache",
        TICK_LINE,
        "    t2 = rt_dget(t1, 'request')",
        "        r8 = rt_call_builtin(ctx, B1, 'startswith', L2, t7, v6)",
        "    r11 = rt_call_builtin(ctx, B3, 'time.now_ns', L4, ctx)",
        "    r12 = rt_call_builtin(c3, B4, 'count', None, t2)",
    ]
    assert fast_lines(compact) == [
        "def D2_0(ctx):",
        "    c = ctx.cache",
        "    t2 = t1.get('request', UNDEF) if type(t1) is dict else rt_get(t1, 'request')",
        "        try:",
        "            r8 = B1(t7, v6)",
        "        except (BuiltinError, BuiltinHalt) as exc:",
        "            r8 = rt_builtin_error(ctx, exc, 'startswith', L2)",
        "    try:",
        "        r11 = B3(ctx)",
        "    except (BuiltinError, BuiltinHalt) as exc:",
        "        r11 = rt_builtin_error(ctx, exc, 'time.now_ns', L4)",
        "    try:",
        "        r12 = B4(t2)",
        "    except (BuiltinError, BuiltinHalt) as exc:",
        "        r12 = rt_builtin_error(c3, exc, 'count', None)",
    ]


def test_fast_lines_keeps_keys_that_hold_parentheses_and_quotes() -> None:
    line = """    t5 = rt_dget(t4, "it's (a) key)")"""
    assert fast_lines([line]) == [
        """    t5 = t4.get("it's (a) key)", UNDEF) if type(t4) is dict else rt_get(t4, "it's (a) key)")"""
    ]


def test_policy_text_never_takes_part_in_the_expansion() -> None:
    # Strings that look like compact statements stay inside their literals.
    e = _engine()
    e.add_policy("trick.rego", 'package trick\nx := "a = rt_dget(b, \'c\')"\ny := "\\n    r1 = rt_call_builtin(ctx, B1, \'f\', L1)"\n')
    for _ in range(PROMOTE_AFTER + 2):
        assert e.eval_rule("data.trick.x") == "a = rt_dget(b, 'c')"
        assert e.eval_rule("data.trick.y") == "\n    r1 = rt_call_builtin(ctx, B1, 'f', L1)"


def _allow_code(e: pyrego.Engine) -> object:
    prog = e._get_program()
    assert prog.gen is not None
    return prog.gen, prog.namespace


def test_a_hot_program_is_recompiled_in_the_fast_form_with_the_same_results() -> None:
    e = _engine()
    yes = {"user": {"name": "alice"}, "path": "/api/x", "roles": ["r"]}
    no = {"user": {"name": "carol"}, "path": "/api/x", "roles": ["r"]}
    gen, namespace = _allow_code(e)
    seen = []
    for i in range(PROMOTE_AFTER * 2):
        e.set_input(yes if i % 2 == 0 else no)
        seen.append(e.eval_rule("data.tiers.allow"))
        if i == 0:
            compact_fn = namespace["D2_0"] if "D2_0" in namespace else None
            assert not gen.hot
    assert gen.hot
    assert seen == [i % 2 == 0 for i in range(PROMOTE_AFTER * 2)]
    # The functions were replaced by the fast form's.
    assert compact_fn is not None and namespace["D2_0"] is not compact_fn
    assert "rt_dget" not in namespace["D2_0"].__code__.co_names
    assert "rt_call_builtin" not in namespace["D2_0"].__code__.co_names
    # A fresh engine on the same policy shares the hot program.
    e2 = pyrego.Engine()
    e2.add_policy("tiers.rego", POLICY)
    e2.set_input(yes)
    assert e2.eval_rule("data.tiers.allow") is True
    assert _allow_code(e2)[0] is gen


def test_builtin_errors_behave_alike_in_both_forms() -> None:
    e = _engine()
    e.set_input({"path": "not a number"})
    results = [e.eval_rule("data.tiers.bad_call") for _ in range(PROMOTE_AFTER + 2)]
    assert results == [pyrego.UNDEFINED] * len(results)
    assert _allow_code(e)[0].hot
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.RegoError) as info:
        e.eval_rule("data.tiers.bad_call")
    assert "to_number" in str(info.value)


def test_a_failed_promotion_keeps_the_compact_code(monkeypatch: pytest.MonkeyPatch) -> None:
    e = _engine()
    gen, _ = _allow_code(e)

    def refuse(lines: list[str], filename: str = "") -> None:
        raise pyrego.RegoCompileError("too deep")

    e.set_input({"user": {"name": "bob"}, "path": "/api/", "roles": [1]})
    assert e.eval_rule("data.tiers.allow") is True
    monkeypatch.setattr(gen, "exec_lines", refuse)
    for _ in range(PROMOTE_AFTER + 2):
        assert e.eval_rule("data.tiers.allow") is True
    assert gen.hot  # promotion was tried once, and evaluation went on


def test_programs_are_freed_without_the_cyclic_collector() -> None:
    # Generated functions and their namespace refer to each other; dropping the
    # last engine must free them by reference counting alone.
    pyrego.clear_compile_cache()
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for i in range(5):
            e = pyrego.Engine()
            e.add_policy("p.rego", POLICY + f"\n# {i}\n")
            e.set_input({"user": {"name": "bob"}, "path": "/api/", "roles": [1]})
            assert e.eval_rule("data.tiers.allow") is True
            del e
        pyrego.clear_compile_cache()
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


def test_promote_after_is_a_positive_count() -> None:
    assert isinstance(codegen_tiers.PROMOTE_AFTER, int) and codegen_tiers.PROMOTE_AFTER > 1
