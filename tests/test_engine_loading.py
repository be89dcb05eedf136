"""The loading API: what add_policy raises at once, what waits for the whole
program, and wrong argument types (order-independence itself is tested in
test_load_order.py)."""

from __future__ import annotations

import pytest

import pyrego


def test_program_errors_wait_for_the_first_evaluation_and_are_raised_again():
    engine = pyrego.Engine()
    engine.add_policy("b.rego", "package lib\nf(x) := g(x)\n")  # g is nowhere yet
    for _ in range(2):
        with pytest.raises(pyrego.RegoError) as err:
            engine.eval_rule("data.lib.f")
        assert err.value.code == "rego_type_error"
        assert (err.value.location.file, err.value.location.row) == ("b.rego", 2)
        assert "undefined function g" in err.value.message
    with pytest.raises(pyrego.RegoError, match="undefined function g"):
        engine.compile()
    engine.add_policy("a.rego", "package lib\ng(x) := x + 1\n")
    assert engine.eval_query("y := data.lib.f(1)")["result"][0]["bindings"] == {"y": 2}
    assert engine.remove_policy("a.rego") == "data.lib"
    with pytest.raises(pyrego.RegoError, match="undefined function g"):
        engine.compile()
    assert engine.get_packages() == ["data.lib"]
    assert [p["path"] for p in engine.get_policies()] == ["b.rego"]


def test_replacing_a_bad_module_fixes_the_engine():
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nallow if x\n")
    with pytest.raises(pyrego.RegoError) as err:
        engine.eval_rule("data.p.allow")
    assert err.value.code == "rego_unsafe_var_error"
    engine.add_policy("p.rego", "package p\nallow if input.x\n")
    assert engine.eval_rule("data.p.allow", input={"x": True}) is True


def test_errors_of_one_module_are_raised_by_add_policy_and_change_nothing():
    engine = pyrego.Engine()
    engine.add_policy("ok.rego", "package p\nallow := true\n")
    with pytest.raises(pyrego.RegoParseError):
        engine.add_policy("bad.rego", "package p\nq := {")
    with pytest.raises(pyrego.RegoCompileError, match="var x assigned above"):
        engine.add_policy("bad.rego", "package p\nq if { x := 1; x := 2 }\n")
    with pytest.raises(pyrego.RegoParseError):
        engine.add_policies({"c.rego": "package c\nc := 1\n", "d.rego": "package d\nd := "})
    assert [p["path"] for p in engine.get_policies()] == ["ok.rego"]
    assert engine.eval_rule("data.p.allow") is True
    assert engine.eval_rule("data.c.c") is pyrego.UNDEFINED


def test_a_rule_where_data_has_a_document_fails_until_the_data_changes():
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package x\ny := 1\n")
    assert engine.eval_rule("data.x.y") == 1
    engine.add_data({"x": {"y": 2}})  # accepted: the conflict is the program's
    for _ in range(2):
        with pytest.raises(pyrego.RegoCompileError, match="conflicting rule for data path x/y found"):
            engine.eval_rule("data.x.y")
    engine.clear_data()
    assert engine.eval_rule("data.x.y") == 1
    # data first, then the rule: the same error
    other = pyrego.Engine()
    other.add_data({"x": {"y": 2}})
    other.add_policy("p.rego", "package x\ny := 1\n")
    with pytest.raises(pyrego.RegoCompileError, match="conflicting rule for data path x/y found"):
        other.compile()


def test_adding_a_module_after_evaluating_recompiles_once():
    engine = pyrego.Engine()
    engine.add_policy("a.rego", "package p\na := 1\n")
    assert engine.eval_rule("data.p.a") == 1
    engine.add_policy("b.rego", "package p\nb := a + 1\n")
    assert engine.eval_rule("data.p.b") == 2
    assert engine.eval_rule("data.p") == {"a": 1, "b": 2}


@pytest.mark.parametrize(
    "call",
    [
        lambda e: e.add_policies(None),
        lambda e: e.add_policies(["p.rego"]),
        lambda e: e.add_policies({"p.rego": None}),
        lambda e: e.add_policy(None, "package p"),
        lambda e: e.add_policy_from_file(None),
        lambda e: e.add_policies_from_dir(5),
        lambda e: e.add_data_json(None),
        lambda e: e.set_input_json(5),
        lambda e: e.remove_policy("never-added.rego"),
        lambda e: e.remove_policy(None),
    ],
)
def test_wrong_argument_types_are_argument_errors(call):
    engine = pyrego.Engine()
    with pytest.raises(pyrego.ArgumentError):
        call(engine)
