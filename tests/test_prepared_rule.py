"""``Engine.prepare_rule``: a rule as a function of the input, with ``eval_rule``'s
answers and errors, on every thread, and never a decision of policies, data or
settings that the engine no longer has."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyrego
from conftest import switching_often

SEED = Path("/work/shared/bench/seed")
SEED_POLICIES = sorted(SEED.glob("policies/*_policy.rego"))


def _seed_cases() -> list[tuple[str, str, list[Any]]]:
    out = []
    for path in SEED_POLICIES:
        name = path.name.removesuffix("_policy.rego")
        inputs = [json.loads(p.read_text()) for p in sorted(SEED.glob(f"inputs/{name}_input*.json"))]
        out.append((name, path.read_text(), inputs))
    return out


def _mutations(value: Any) -> Iterator[Any]:
    """``value`` with each leaf in turn replaced by values of other types, and each key dropped."""
    yield value
    if isinstance(value, dict):
        for k in value:
            dropped = dict(value)
            del dropped[k]
            yield dropped
            for sub in list(_mutations(value[k]))[1:4]:
                yield {**value, k: sub}
            for other in (None, True, 0, 1.5, 10**30, "", "x", [], {}, ["a"], {"k": 1}):
                yield {**value, k: other}
    elif isinstance(value, list) and value:
        yield value[:-1]
        yield [*value, 7]


def _seed_engine(text: str) -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("seed.rego", text)
    return engine


@pytest.mark.skipif(not SEED_POLICIES, reason="no seed policies in /work/shared/bench/seed")
@pytest.mark.parametrize("form", ["compact", "fast"])
def test_seed_policies_answer_as_eval_rule(form: str) -> None:
    cases = _seed_cases()
    assert len(cases) >= 9
    checked = 0
    for name, text, inputs in cases:
        engine = _seed_engine(text)
        if form == "fast":
            for _ in range(100):
                engine.eval_rule("data.bench.allow", input=inputs[0])
            assert engine.program().code.gen.hot
        rule = engine.prepare_rule("data.bench.allow")
        for inp in inputs:
            for variant in _mutations(inp):
                expected = engine.eval_rule("data.bench.allow", input=variant)
                assert rule(variant) == expected, (name, variant)
                assert rule(variant) is expected or type(expected) not in (bool, type(pyrego.UNDEFINED))
                checked += 1
        # A fresh engine's prepared rule agrees too, from its first call.
        assert _seed_engine(text).prepare_rule("data.bench.allow")(inputs[0]) == engine.eval_rule("data.bench.allow", input=inputs[0])
    assert checked > 500


VALUES_POLICY = """package v
s contains x if some x in input.xs
o[k] := v if some k, v in input.obj
txt := concat("-", input.words)
n := count(input.xs) * 2.5
big := input.big + 1
arr := [x | some x in input.xs; x > 1]
nothing if input.never
f(x) := x + 1
call := f(input.big)
conflict := 1 if input.a
conflict := 2 if input.b
strict_err := startswith(input.big, "x")
default dflt := "default"
dflt := input.d
"""

VALUE_INPUTS: list[Any] = [
    {"xs": [1, 2, 3], "obj": {"a": 1, "b": [1, {"c": None}]}, "words": ["é", "ü"], "big": 10**40, "d": 4},
    {"xs": [], "obj": {}, "words": [], "big": 1.5},
    {"xs": ["a", "b"], "obj": {"ñ": "✓"}, "words": ["a"], "big": "x"},
    {},
    None,
    "scalar input",
    [1, 2],
]


@pytest.mark.parametrize("form", ["compact", "fast"])
@pytest.mark.parametrize("rule_name", ["s", "o", "txt", "n", "big", "arr", "nothing", "call", "dflt", "strict_err"])
def test_values_of_every_kind_answer_as_eval_rule(rule_name: str, form: str) -> None:
    engine = pyrego.Engine()
    engine.add_policy("v.rego", VALUES_POLICY)
    if form == "fast":
        for _ in range(100):
            engine.eval_rule("data.v.n", input=VALUE_INPUTS[0])
    rule = engine.prepare_rule(f"data.v.{rule_name}")
    for _ in range(3):  # the first call goes through eval_rule, the next ones not
        for inp in VALUE_INPUTS:
            expected = engine.eval_rule(f"data.v.{rule_name}", input=inp)
            got = rule(inp)
            assert got == expected and type(got) is type(expected), (rule_name, inp)


def _error(fn: Any, *args: Any, **kwargs: Any) -> pyrego.RegoError:
    with pytest.raises(pyrego.RegoError) as info:
        fn(*args, **kwargs)
    return info.value


def test_errors_are_eval_rules_with_their_locations() -> None:
    engine = pyrego.Engine()
    engine.add_policy("v.rego", VALUES_POLICY)
    rule = engine.prepare_rule("data.v.conflict")
    for _ in range(50):  # compact and fast forms alike
        assert rule({"a": True}) == 1
        err = _error(rule, {"a": True, "b": True})
        expected = _error(engine.eval_rule, "data.v.conflict", input={"a": True, "b": True})
        assert (type(err), err.code, str(err), err.location) == (type(expected), expected.code, str(expected), expected.location)
        assert err.location is not None and err.location.file == "v.rego"
    # Strict builtin errors: the setting holds from the next call on.
    strict = engine.prepare_rule("data.v.strict_err")
    assert strict({"big": 1}) is pyrego.UNDEFINED
    engine.set_strict_builtin_errors(True)
    err = _error(strict, {"big": 1})
    assert err.code == "eval_type_error" and err.location is not None and err.location.row == 13
    assert strict({"big": "xy"}) is True
    engine.set_strict_builtin_errors(False)
    assert strict({"big": 1}) is pyrego.UNDEFINED


def test_prepare_refuses_a_bad_path_and_reports_compile_errors_at_once() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nr := 1")
    with pytest.raises(pyrego.ArgumentError):
        engine.prepare_rule("input.x")
    with pytest.raises(pyrego.ArgumentError):
        engine.prepare_rule("data.p[")
    engine.add_policy("bad.rego", "package bad\nr := undefined_function(1)")
    err = _error(engine.prepare_rule, "data.p.r")
    assert err.code == "rego_type_error" or err.code.startswith("rego_")
    assert err.location is not None and err.location.file == "bad.rego"


def test_a_prepared_rule_follows_policy_data_and_setting_changes() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nallow if input.x == data.want")
    engine.add_data({"want": 1})
    allow = engine.prepare_rule("data.p.allow")
    for _ in range(100):  # past the fast form's promotion: the table holds the final functions
        assert allow({"x": 1}) is True
    # The policy changes: the next call answers with the new one.
    engine.add_policy("p.rego", "package p\nallow if input.x == data.want + 1")
    assert allow({"x": 1}) is pyrego.UNDEFINED
    assert allow({"x": 2}) is True
    # The data changes.
    engine.add_data({"other": True})
    engine.clear_data()
    engine.add_data({"want": 5})
    assert allow({"x": 2}) is pyrego.UNDEFINED
    assert allow({"x": 6}) is True
    # The rule goes away: undefined, as eval_rule says.
    engine.add_policy("p.rego", "package p\nother := 1")
    assert allow({"x": 6}) is pyrego.UNDEFINED is engine.eval_rule("data.p.allow", input={"x": 6})
    # A broken policy: the call raises the compile error, never an old answer.
    engine.add_policy("p.rego", "package p\nallow if input.x == data.want")
    assert allow({"x": 5}) is True
    engine.add_policy("q.rego", "package q\nr := nope(1)")
    with pytest.raises(pyrego.RegoError):
        allow({"x": 5})
    engine.remove_policy("q.rego")
    assert allow({"x": 5}) is True
    # Base data itself, through a prepared path with no rule.
    want = engine.prepare_rule("data.want")
    assert want(None) == 5
    engine.add_data({"more": 1})
    engine.clear_data()
    engine.add_data({"want": [1, {"a": 2}]})
    assert want(None) == [1, {"a": 2}]


def test_a_time_limit_ends_a_prepared_evaluation_and_can_be_lifted() -> None:
    policy = (
        "package p\n"
        "r := count([x | some x in numbers.range(1, 3000); some y in numbers.range(1, 3000); x == y])\n"
        "small := count([x | some x in input.xs; some y in input.xs; x == y])\n"
    )
    engine = pyrego.Engine()
    engine.add_policy("p.rego", policy)
    small = engine.prepare_rule("data.p.small")
    for _ in range(50):
        assert small({"xs": [1, 2, 3]}) == 3
    engine.set_eval_timeout(0.2)
    for _ in range(3):  # a reused context takes a new deadline per call
        assert small({"xs": [1, 2, 3]}) == 3
    slow = engine.prepare_rule("data.p.r")
    err = _error(slow, None)
    assert isinstance(err, pyrego.EvalCancelError) and err.location is not None and err.location.row == 2
    err = _error(small, {"xs": list(range(3000))})
    assert isinstance(err, pyrego.EvalCancelError)
    engine.set_eval_timeout(None)
    assert small({"xs": list(range(300))}) == 300


@pytest.fixture
def quick_switches() -> Iterator[None]:
    with switching_often():
        yield


@pytest.mark.skipif(not SEED_POLICIES, reason="no seed policies in /work/shared/bench/seed")
def test_threads_share_one_prepared_rule(quick_switches: None) -> None:
    # The seed policy whose inputs and their variants get both answers most evenly.
    best = None
    for _, text, inputs in _seed_cases():
        engine = _seed_engine(text)
        variants = [v for inp in inputs for v in _mutations(inp)]
        expected = [engine.eval_rule("data.bench.allow", input=v) for v in variants]
        balance = min(expected.count(True), expected.count(False))
        if best is None or balance > best[0]:
            best = (balance, engine, variants, expected)
    assert best is not None and best[0] >= 3
    _, engine, variants, expected = best
    rule = engine.prepare_rule("data.bench.allow")
    failures: list[str] = []

    def work(k: int) -> None:
        order = variants[k:] + variants[:k]
        want = expected[k:] + expected[:k]
        for _ in range(5):
            for v, w in zip(order, want):
                got = rule(copy.deepcopy(v) if k % 2 else v)
                if got != w:
                    failures.append(f"thread {k}: {v!r}: {got!r} != {w!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]


def test_threads_during_policy_changes_see_old_or_new_never_a_mix(quick_switches: None) -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nv := input.x * 1")
    rule = engine.prepare_rule("data.p.v")
    stop = threading.Event()
    seen: list[Any] = []
    bad: list[Any] = []

    def work() -> None:
        while not stop.is_set():
            got = rule({"x": 3})
            seen.append(got)
            if got not in (3, 30, 300):
                bad.append(got)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for factor in (10, 100, 1, 10, 100):
            for _ in range(20):
                engine.add_policy("p.rego", f"package p\nv := input.x * {factor}")
                # Once the change is made, this thread's next call answers with it.
                assert rule({"x": 3}) == 3 * factor
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not bad and len(seen) > 10


# -- rules evaluated as functions of the input alone (codegen.prepared) ---------------------

DIRECT_POLICY = """package d
default allow := false
allow if {
    input.user.role == "admin"
    count(input.user.perms) > 0
    startswith(input.path, "/api/")
}
allow if {
    some p in input.paths
    endswith(p, ".pub")
    input.user.public == true
}
same_clock if {
    a := time.now_ns()
    some _ in [1, 2, 3]
    b := time.now_ns()
    a == b
}
pairs if {
    some x in input.xs
    some y in input.xs
    x == y + 100000
}
calls_rule if allow
roles := {"admin": ["read", "write"], "user": ["read"]}
perms contains p if {
    some role in input.user.roles
    p := roles[role][_]
}
by_role[role] := count(ps) if {
    some role in input.user.roles
    ps := roles[role]
}
checks if {
    input.action in perms
    input.owner == input.user.id
}
checks if {
    input.action in perms
    input.public == true
}
deep if checks
deeper := count(perms) + object.get(by_role, "admin", 0) if deep
clock_a := time.now_ns()
clock_b := time.now_ns() if input.user
clocks_agree if clock_a == clock_b
in_data if input.action in data.allowed
strict_call if {
    n := sum_of_roles
    n > 0
}
sum_of_roles := count(input.user.roles) + to_number(input.extra)
uses_func if double(count(perms)) > 1
double(x) := x * 2
uses_with if perms with input.user.roles as ["admin"]
literal_ctx if {
    input["ctx.input"] == "rt_builtin_error(ctx, x)"
    input.k != "ctx.data"
    object.get(input, "ctx.cache", 0) == 0
}
"""


def _hot_engine(policy: str, warm: str, inp: Any) -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("d.rego", policy)
    for _ in range(100):
        engine.eval_rule(warm, input=inp)
    assert engine.program().code.gen.hot
    return engine


def _entry(engine: pyrego.Engine, path: str) -> Any:
    engine.eval_rule(path, input={})
    engine.eval_rule(path, input={})
    return engine._rule_fns[path]


def test_which_rules_get_a_function_of_the_input() -> None:
    from pyrego.codegen.prepared import input_function
    from pyrego.engine_support import rule_value
    from pyrego.runtime.context import EvalContext

    engine = _hot_engine(DIRECT_POLICY, "data.d.allow", {"user": {"role": "admin", "perms": [1]}, "path": "/api/x"})
    program = engine.program().code

    def direct(path: str) -> Any:
        fn, more, default, prog = _entry(engine, path)
        return input_function(prog, (fn, *more), default, EvalContext, {}, rule_value)

    assert direct("data.d.allow") is not None
    assert direct("data.d.same_clock") is not None
    assert direct("data.d.pairs") is not None
    # Rules calling rules: the called rules are written as functions of the
    # input and a memo made per call.
    # (The rewriting works on the syntax tree: text in the policy's strings that looks like it stays as it is.)
    for name in ("calls_rule", "checks", "deep", "deeper", "clocks_agree", "in_data", "strict_call", "literal_ctx"):
        assert direct(f"data.d.{name}") is not None, name
    # A Rego function call, a ``with``: the context stays.
    assert direct("data.d.uses_func") is None
    assert direct("data.d.uses_with") is None
    assert program is engine.program().code


DIRECT_INPUTS: list[Any] = [
    {"user": {"role": "admin", "perms": [1]}, "path": "/api/x"},
    {"user": {"role": "admin", "perms": []}, "path": "/api/x"},
    {"user": {"role": "admin", "perms": 7}, "path": "/api/x"},
    {"user": {"role": "admin", "perms": "ab"}, "path": 5},
    {"user": {"role": "admin", "perms": {"a": 1}}, "path": "/web"},
    {"user": {"public": True}, "paths": ["a.txt", "b.pub"]},
    {"user": {"public": True}, "paths": ["a.txt", 3, "b.pub"]},
    {"user": {"public": True}, "paths": [3, "a.txt"]},
    {"user": {"public": 1}, "paths": {"k": "b.pub"}},
    {"user": None, "paths": "x.pub"},
    {"xs": [1, 2, 100003], "user": {}},
    {"xs": [1, 100001], "user": {}},
    {"user": {"roles": ["user"], "id": 1}, "action": "read", "owner": 1},
    {"user": {"roles": ["user"], "id": 1}, "action": "write", "owner": 1},
    {"user": {"roles": ["admin", "user", "nobody"], "id": 1}, "action": "write", "owner": 2, "public": True},
    {"user": {"roles": ["admin"], "id": "1"}, "action": "delete", "owner": "1", "extra": "2"},
    {"user": {"roles": "admin"}, "action": "read", "extra": "x"},
    {"user": {"roles": {"a": "admin"}}, "action": "read", "public": True, "extra": 1},
    {"user": {"roles": [["admin"]]}, "action": "read"},
    {"ctx.input": "rt_builtin_error(ctx, x)", "k": 1},
    {"ctx.input": "rt_builtin_error(ctx, x)", "k": "ctx.data"},
    {"ctx.input": "rt_builtin_error(ctx, x)", "k": 1, "ctx.cache": 1},
    {},
    None,
    [],
]


@pytest.mark.parametrize("strict", [False, True])
def test_a_function_of_the_input_answers_as_eval_rule(strict: bool) -> None:
    engine = _hot_engine(DIRECT_POLICY, "data.d.allow", DIRECT_INPUTS[0])
    engine.set_strict_builtin_errors(strict)
    errors = 0
    engine.add_data({"allowed": ["read", "diagnose"]})
    for name in (
        "allow", "same_clock", "pairs", "calls_rule", "perms", "by_role", "checks", "deep", "deeper",
        "clocks_agree", "in_data", "strict_call", "uses_func", "uses_with", "literal_ctx",
    ):
        rule = engine.prepare_rule(f"data.d.{name}")
        for _ in range(3):
            for inp in DIRECT_INPUTS:
                try:
                    expected: Any = ("value", engine.eval_rule(f"data.d.{name}", input=inp))
                except pyrego.RegoError as err:
                    expected = ("error", type(err), err.code, str(err), err.location)
                try:
                    got: Any = ("value", rule(inp))
                except pyrego.RegoError as err:
                    got = ("error", type(err), err.code, str(err), err.location)
                    errors += 1
                assert got == expected, (name, inp)
    # Strict builtin errors come from the function of the input too, with their locations.
    assert (errors > 0) is strict
    allow = engine.prepare_rule("data.d.allow")
    allow(None)
    assert _runs_without_context(allow)
    # Its two definitions are written into the one function (no call per definition).
    assert "P0" not in allow.__code__.co_names and "P1" not in allow.__code__.co_names
    calls_rule = engine.prepare_rule("data.d.calls_rule")
    calls_rule(None)
    assert _runs_without_context(calls_rule)
    uses_with = engine.prepare_rule("data.d.uses_with")
    uses_with(None)
    assert not _runs_without_context(uses_with)
    assert engine.prepare_rule("data.d.clocks_agree")({"user": 1}) is True
    assert engine.prepare_rule("data.d.same_clock")(None) is True


def _runs_without_context(rule: Any) -> bool:
    """Whether the prepared function took a function of the input (see engine_support.prepared_rule):
    it is one, or, after the engine changed, the closure it hands calls to uses one."""
    if rule.__code__.co_filename == "<pyrego prepared rule>":
        slow = rule.__globals__["SLOW_"]
        if rule.__globals__["ENGINE_"]._rule_fns is rule.__globals__["TABLE_"]:
            return True
        rule = slow
    cells = dict(zip(rule.__code__.co_freevars, rule.__closure__))
    now = cells["current"].cell_contents
    return now is not None and now[8] is not None


def test_a_time_limit_holds_for_a_rule_that_could_run_without_a_context() -> None:
    engine = _hot_engine(DIRECT_POLICY, "data.d.pairs", {"xs": [1, 2]})
    pairs = engine.prepare_rule("data.d.pairs")
    assert pairs({"xs": [1, 100001]}) is True
    assert _runs_without_context(pairs)
    engine.set_eval_timeout(0.2)
    assert pairs({"xs": [1, 100001]}) is True  # (takes the new settings)
    assert not _runs_without_context(pairs)
    err = _error(pairs, {"xs": list(range(4000))})
    assert isinstance(err, pyrego.EvalCancelError) and err.location is not None and err.location.file == "d.rego"
    engine.set_eval_timeout(None)
    assert pairs({"xs": list(range(300))}) is pyrego.UNDEFINED
    assert _runs_without_context(pairs)
    assert pairs({"xs": [5, 100005]}) is True


def test_coverage_turned_on_after_prepare_is_collected_from_prepared_calls() -> None:
    engine = _hot_engine(DIRECT_POLICY, "data.d.allow", DIRECT_INPUTS[0])
    allow = engine.prepare_rule("data.d.allow")
    assert allow(DIRECT_INPUTS[0]) is True
    assert _runs_without_context(allow)
    engine.set_enable_coverage(True)
    assert allow(DIRECT_INPUTS[5]) is True
    by_prepared = engine.get_coverage_report()
    engine.clear_coverage_data()
    assert engine.eval_rule("data.d.allow", input=DIRECT_INPUTS[5]) is True
    by_eval_rule = engine.get_coverage_report()
    assert by_prepared == by_eval_rule
    assert by_prepared["files"]["d.rego"]["covered"]  # (lines of the second allow)
    engine.set_enable_coverage(False)
    engine.clear_coverage_data()
    assert allow(DIRECT_INPUTS[0]) is True
    assert _runs_without_context(allow)
    assert not engine.get_coverage_report()["files"]["d.rego"].get("covered")


def test_a_function_of_the_input_reads_the_engines_data_as_it_changes() -> None:
    engine = pyrego.Engine()
    engine.add_policy("d.rego", "package d\nimport rego.v1\nroles contains r if { some r in input.roles; r in data.known }\nok if count(roles) > 1\n")
    engine.add_data({"known": ["a", "b"]})
    ok = engine.prepare_rule("data.d.ok")
    for _ in range(200):
        assert ok({"roles": ["a", "b", "c"]}) is True
    assert _runs_without_context(ok)
    engine.clear_data()
    engine.add_data({"known": ["a"]})
    assert ok({"roles": ["a", "b"]}) is pyrego.UNDEFINED  # (the new data, not the data it was prepared with)
    engine.add_data({"other": 1})
    assert ok({"roles": ["a", "b"]}) is pyrego.UNDEFINED
    engine.clear_data()
    engine.add_data({"known": ["a", "b"]})
    engine2 = engine.clone()
    engine.remove_policy("d.rego")
    engine.add_policy("d.rego", "package d\nimport rego.v1\nroles contains r if { some r in input.roles; r in data.known }\nok if count(roles) > 2\n")
    assert ok({"roles": ["a", "b"]}) is pyrego.UNDEFINED
    assert engine2.prepare_rule("data.d.ok")({"roles": ["a", "b"]}) is True
