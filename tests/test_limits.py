"""Deep values and deep programs: what OPA takes, pyrego takes, the same on every
evaluation and in every execution form; past pyrego's limits, a clean RegoError.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

import pyrego


def _nested(depth: int) -> list[Any]:
    root: list[Any] = []
    cur = root
    for _ in range(depth):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return root


def _engine() -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nr := input\nt := json.marshal(input)\nsame := input == input")
    return engine


def _entry_points(value: Any, depth: int) -> dict[str, Callable[[], Any]]:
    engine = _engine()
    return {
        "eval_rule": lambda: engine.eval_rule("data.p.r", input=value),
        "eval_query": lambda: engine.eval_query("x := input", input=value),
        "eval_query_json": lambda: engine.eval_query_json("x := input", input=value),
        "json.marshal": lambda: engine.eval_rule("data.p.t", input=value),
        "equality": lambda: engine.eval_rule("data.p.same", input=value),
        "add_data": lambda: pyrego.Engine().add_data({"d": value}),
        "set_input_json": lambda: engine.set_input_json("[" * depth + "]" * depth),
    }


@pytest.mark.parametrize("name", list(_entry_points([], 0)))
def test_values_nested_1000_deep_work(name: str) -> None:
    # OPA evaluates and prints values nested this deep.
    value = _nested(1000)
    result = _entry_points(value, 1000)[name]()
    if name == "eval_rule":
        assert result == value
    if name == "eval_query_json":
        assert result.count("[") == 1001 + 2  # the value, and the result and expressions arrays


@pytest.mark.parametrize("name", list(_entry_points([], 0)))
def test_values_nested_too_deep_are_a_rego_error(name: str) -> None:
    value = _nested(50_000)
    try:
        _entry_points(value, 50_000)[name]()
    except pyrego.RegoError as err:
        assert err.code in ("eval_recursion_error", "rego_data_error")
    # Succeeding is fine too; a raw RecursionError (or any other exception) is not.




def test_a_600_expression_body_gives_one_answer_on_every_evaluation(execution_form: str) -> None:
    body = "\n".join(f"  x{i} := input.n + {i}" for i in range(600))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\nr if {{\n{body}\n  x599 == 600\n}}")
    answers = {engine.eval_rule("data.p.r", input={"n": 1}) for _ in range(40)}
    assert answers == {True}


@pytest.mark.parametrize("length", [300, 1000])
def test_a_long_rule_chain_evaluates_from_the_first_time(length: int, execution_form: str) -> None:
    rules = "\n".join(f"r{i} := r{i + 1} + 1" for i in range(length))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\n{rules}\nr{length} := 0")
    assert [engine.eval_rule("data.p.r0") for _ in range(3)] == [length] * 3


# Generated lookup tables are written as else chains thousands long: OPA
# parses chains of any length (its parser's limit is 100,000 levels).
ELSE_CHAINS = {
    "a function": lambda n: "f(a) := -1 if a == -1\n" + "".join(f"else := {i} if a == {i}\n" for i in range(n)) + f"r := [f({n - 1}), f(7)]\n",
    "a rule": lambda n: "r := 0 if input.n == -1\n" + "".join(f"else := {i} if input.n == {i}\n" for i in range(n)) + "else := -2\n",
}


@pytest.mark.parametrize("kind", list(ELSE_CHAINS))
def test_an_else_chain_of_thousands_of_branches_is_opas(oracle: Any, kind: str) -> None:
    from opa_compare import agree

    agree(oracle, "package p\n" + ELSE_CHAINS[kind](2500), "data.p.r", {"n": 2499})


def test_an_else_after_a_branch_without_body_is_opas_error(oracle: Any) -> None:
    from opa_compare import agree

    agree(oracle, "package p\nr := 1 if false\nelse := 2\nelse := 3\n", "data.p.r")


def test_an_else_chain_too_long_to_compile_is_a_rego_error() -> None:
    engine = pyrego.Engine()
    try:
        engine.add_policy("p.rego", "package p\n" + ELSE_CHAINS["a rule"](30_000))
        engine.eval_rule("data.p.r", input={"n": 3})
    except pyrego.RegoError as err:
        assert err.code == "rego_compile_error"


def test_a_chain_too_long_is_a_rego_error() -> None:
    rules = "\n".join(f"r{i} := r{i + 1} + 1" for i in range(20_000))
    engine = pyrego.Engine()
    try:
        engine.add_policy("p.rego", f"package p\n{rules}\nr20000 := 0")
        engine.eval_rule("data.p.r0")
    except pyrego.RegoError as err:
        assert err.code in ("eval_recursion_error", "rego_compile_error")


def _peak_memory(fn: Callable[[], Any]) -> tuple[Any, int]:
    import tracemalloc

    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_long_ref_in_a_query_compiles_in_linear_memory() -> None:
    # Every prefix of the ref used to be kept as a key of its own: 3.7 GB for this one.
    depth = 30_000
    doc: dict[str, Any] = {"b": 7}
    for _ in range(depth - 1):
        doc = {"b": doc}
    engine = pyrego.Engine()
    result, peak = _peak_memory(lambda: engine.eval_query("x := input" + ".b" * depth, input=doc))
    assert result["result"][0]["bindings"] == {"x": 7}
    assert peak < 300 * 2**20


def test_a_long_ref_in_a_rule_compiles_in_linear_memory(execution_form: str) -> None:
    depth = 20_000
    doc: dict[str, Any] = {"b": "end"}
    for _ in range(depth - 1):
        doc = {"b": doc}
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nr := input" + ".b" * depth)
    result, peak = _peak_memory(lambda: [engine.eval_rule("data.p.r", input=doc) for _ in range(3)])
    assert result == ["end"] * 3
    assert peak < 300 * 2**20


def test_a_5000_expression_body_gives_one_answer_on_every_evaluation(execution_form: str) -> None:
    # Past the 32nd evaluation too, where a hot program is recompiled.
    body = "\n".join(f"  x{i} := input.n + {i}" for i in range(5000))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\nr if {{\n{body}\n  x4999 == 5000\n}}")
    assert {engine.eval_rule("data.p.r", input={"n": 1}) for _ in range(34)} == {True}


def test_compiled_queries_are_bounded() -> None:
    from pyrego.codegen.program import QUERIES_KEPT

    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nq := 1")
    for i in range(QUERIES_KEPT + 300):
        assert engine.eval_query(f"x := {i} + data.p.q")["result"][0]["bindings"]["x"] == i + 1
    program = engine._get_program()
    assert len(program.queries) == QUERIES_KEPT
    assert program.gen is not None and program.gen.lines == []  # no query source kept
    assert not any(name.startswith("Q") for name in program.namespace)
    # A query dropped from the bound is compiled again when asked.
    assert engine.eval_query("x := 0 + data.p.q")["result"][0]["bindings"]["x"] == 1


def test_print_output_is_bounded_when_never_taken() -> None:
    from pyrego.engine_config import PRINTS_KEPT

    engine = pyrego.Engine()
    engine.add_policy("p.rego", 'package p\nr if { print("line", input.i) }')
    for i in range(PRINTS_KEPT + 500):
        engine.eval_rule("data.p.r", input={"i": i})
    lines = engine.take_prints()
    assert len(lines) == PRINTS_KEPT
    assert lines[-1] == f"line {PRINTS_KEPT + 499}"  # the newest are kept
    assert engine.take_prints() == []


def test_a_cancelled_evaluation_says_where(execution_form: str) -> None:
    policy = (
        "package p\n"
        "r := count([x | some x in numbers.range(1, 3000); some y in numbers.range(1, 3000); x == y])\n"
        "t if { every x in input.xs { every y in input.xs { x != y + 100000 } } }\n"
    )
    engine = pyrego.Engine()
    engine.add_policy("p.rego", policy)
    engine.set_eval_timeout(0.2)
    for rule, row in (("r", 2), ("t", 3)):
        with pytest.raises(pyrego.EvalCancelError) as info:
            engine.eval_rule(f"data.p.{rule}", input={"xs": list(range(3000))})
        assert info.value.code == "eval_cancel_error"
        assert info.value.location is not None
        assert (info.value.location.file, info.value.location.row) == ("p.rego", row)


def test_a_recursion_error_says_where() -> None:
    rules = "\n".join(f"r{i} := r{i + 1} + 1" for i in range(9000))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\n{rules}\nr9000 := 0")
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_rule("data.p.r0")
    assert info.value.code == "eval_recursion_error"
    assert info.value.location is not None and info.value.location.file == "p.rego"
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_query("x := data.p.r0")
    assert info.value.code == "eval_recursion_error" and info.value.location is not None


def test_a_time_limit_set_or_removed_holds_for_the_next_evaluation() -> None:
    # Evaluations reuse one context: its deadline must follow the engine's setting.
    slow = (
        "package p\n"
        "r := count([x | some x in numbers.range(1, 3000); some y in numbers.range(1, 3000); x == y])\n"
        "small := count([x | some x in numbers.range(1, 30); some y in numbers.range(1, 30); x == y])\n"
        "fast := 1\n"
    )
    engine = pyrego.Engine()
    engine.add_policy("p.rego", slow)
    for _ in range(40):  # hot: the prepared path
        assert engine.eval_rule("data.p.fast") == 1
    engine.set_eval_timeout(0.05)
    assert engine.eval_rule("data.p.fast") == 1
    with pytest.raises(pyrego.EvalCancelError):
        engine.eval_rule("data.p.r")
    assert engine.eval_rule("data.p.fast") == 1
    time.sleep(0.1)  # past the deadline the last evaluation had
    engine.set_eval_timeout(None)
    assert engine.eval_rule("data.p.fast") == 1
    assert engine.eval_rule("data.p.small") == 30
    engine.set_eval_timeout(0.05)
    with pytest.raises(pyrego.EvalCancelError):
        engine.eval_rule("data.p.r")


def test_a_python_bool_key_in_input_is_iterated(execution_form: str) -> None:
    # A caller's dict may hold Python ``True`` as a key (the object key true):
    # iterating it in OPA's order looked the key up in its frozen form and
    # failed with an internal KeyError.
    engine = pyrego.Engine()
    engine.add_policy(
        "p.rego",
        "package p\nt := [type_name(x) | some x in input]\nk := [key | some key, _ in input]\nn := count({key | input[key]})",
    )
    value = {True: 1, 2: "b", "s": None}
    for _ in range(3):  # (cold, then hot)
        assert engine.eval_rule("data.p.t", input=value) == ["number", "string", "null"]
        assert engine.eval_rule("data.p.k", input=value) == [True, 2, "s"]
        assert engine.eval_rule("data.p.n", input=value) == 3
