"""Fresh engines on policy text the process has compiled before (the warm
path): a first add finds the compiled program, and a program keeps its
rules' entries by path. Each test checks that this changes no behaviour."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import pyrego
from pyrego.codegen.build_cache import program_cache

POLICY = """package warm
default allow := false
allow if input.user == "alice"
level := input.level * 2
"""


def _warm(path: str, text: str) -> None:
    """Compile ``text`` twice (the cache keeps a program from its second request on)."""
    for _ in range(2):
        e = pyrego.Engine()
        e.add_policy(path, text)
        e.eval_rule("data.warm.allow", input={})


def _fresh(path: str = "warm.rego", text: str = POLICY) -> pyrego.Engine:
    e = pyrego.Engine()
    e.add_policy(path, text)
    return e


def test_first_add_takes_the_cached_program() -> None:
    _warm("warm.rego", POLICY)
    a, b = _fresh(), _fresh()
    assert a._program is not None and a._program is b._program  # (found when added, nothing compiled)
    assert a.eval_rule("data.warm.allow", input={"user": "alice"}) is True
    assert b.eval_rule("warm.allow", input={"user": "bob"}) is False
    assert a.eval_rule("data.warm.level", input={"level": 4}) == 8


def test_paths_table_is_per_path_text_and_keeps_errors() -> None:
    _warm("warm.rego", POLICY)
    for path in ("data.warm.allow", "warm.allow", 'data.warm["allow"]'):
        assert _fresh().eval_rule(path, input={"user": "alice"}) is True
    with pytest.raises(pyrego.ArgumentError):
        _fresh().eval_rule("input.x")
    with pytest.raises(pyrego.ArgumentError):
        _fresh().eval_rule("data.warm[x]")
    assert _fresh().eval_rule("data.warm.nothing") is pyrego.UNDEFINED


def test_data_added_after_a_warm_add_is_still_checked() -> None:
    _warm("warm.rego", POLICY)
    e = _fresh()
    e.add_data({"warm": {"allow": 1}})
    with pytest.raises(pyrego.RegoCompileError, match="conflicting rule"):
        e.eval_rule("data.warm.allow", input={})
    e.clear_data()
    assert e.eval_rule("data.warm.allow", input={"user": "alice"}) is True


def test_data_added_before_a_warm_add_is_checked() -> None:
    _warm("warm.rego", POLICY)
    e = pyrego.Engine()
    e.add_data({"warm": {"level": 3}})
    e.add_policy("warm.rego", POLICY)
    with pytest.raises(pyrego.RegoCompileError, match="conflicting rule"):
        e.eval_rule("data.warm.allow", input={})


def test_settings_changed_after_a_warm_add_recompile() -> None:
    text = 'package warm\nallow if count(input.xs) > 1\nlevel := 1\n'
    _warm("w2.rego", text)
    e = _fresh("w2.rego", text)
    assert e.eval_rule("data.warm.allow", input={"xs": [1, 2]}) is True
    e2 = _fresh("w2.rego", text)
    e2.set_capabilities({"builtins": [{"name": "eq", "decl": {"type": "function"}}]})
    with pytest.raises(pyrego.RegoError, match="count"):
        e2.eval_rule("data.warm.allow", input={"xs": [1, 2]})


def test_a_second_policy_and_replacing_one() -> None:
    _warm("warm.rego", POLICY)
    e = _fresh()
    e.add_policy("more.rego", "package more\nx := data.warm.level")
    assert e.eval_rule("data.more.x", input={"level": 5}) == 10
    e.remove_policy("more.rego")
    e.add_policy("warm.rego", POLICY.replace('"alice"', '"carol"'))
    assert e.eval_rule("data.warm.allow", input={"user": "carol"}) is True


def test_prints_of_a_clone_are_its_own() -> None:
    text = 'package warm\nallow if { print("seen", input.n); true }\n'
    _warm("p.rego", text)
    e = _fresh("p.rego", text)
    assert e.eval_rule("data.warm.allow", input={"n": 1}) is True
    c = e.clone()
    assert c.eval_rule("data.warm.allow", input={"n": 2}) is True
    assert e.take_prints() == ["seen 1"]
    assert c.take_prints() == ["seen 2"]


def test_errors_of_a_failing_text_are_raised_every_time() -> None:
    bad = "package warm\nallow if undefined_fn(input.x)\n"
    for _ in range(3):
        e = _fresh("bad.rego", bad)  # never compiled: nothing to find
        with pytest.raises(pyrego.RegoError, match="undefined"):
            e.eval_rule("data.warm.allow", input={"x": 1})


def test_threads_share_fresh_engines_results() -> None:
    _warm("warm.rego", POLICY)
    errors: list[BaseException] = []

    def work(user: str) -> None:
        try:
            for _ in range(200):
                e = _fresh()
                assert e.eval_rule("data.warm.allow", input={"user": user}) is (user == "alice")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(u,)) for u in ("alice", "bob", "alice", "eve")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(program_cache.entries) >= 1


QUIET = "package talk\ndefault allow := false\nallow if input.n > 1\n"
LOUD = 'package talk\ndefault allow := false\nallow if {\n\tprint("n is", input.n)\n\tinput.n > 1\n}\n'


def _opa_prints(oracle: Any, text: str, query: str, input: Any) -> list[str]:
    lines: list[str] = []
    result = oracle.evaluate({"talk.rego": text}, f"x := {query}", input=input, prints=lines)
    assert result.error_code is None
    return lines


def test_prints_after_a_program_that_never_prints_are_kept(oracle: Any) -> None:
    # A program without print calls is evaluated with no print hook (a config
    # shared by such engines): whatever prints later on the same engine (a
    # query, other policies) must still have its lines kept.
    _warm("talk.rego", QUIET)
    e = _fresh("talk.rego", QUIET)
    assert e.eval_rule("data.talk.allow", input={"n": 2}) is True
    e.add_policy("talk.rego", LOUD)
    assert e.eval_rule("data.talk.allow", input={"n": 3}) is True
    assert e.take_prints() == _opa_prints(oracle, LOUD, "data.talk.allow", {"n": 3})
    e.add_policy("talk.rego", QUIET)
    assert e.eval_rule("data.talk.allow", input={"n": 3}) is True
    assert e.take_prints() == []
    q = _fresh("talk.rego", QUIET)
    assert q.eval_rule("data.talk.allow", input={"n": 2}) is True
    assert q.eval_query('print("query", input.n)', input={"n": 5})["result"]
    assert q.take_prints() == ["query 5"]
    assert q.eval_rule("data.talk.allow", input={"n": 2}) is True  # (after the query: with its config)
    assert q.eval_query('print("again", input.n)', input={"n": 6})["result"]
    assert q.take_prints() == ["again 6"]


def test_fresh_engines_on_a_printing_program_keep_their_own_lines(oracle: Any) -> None:
    _warm("talk.rego", LOUD)
    engines = [_fresh("talk.rego", LOUD) for _ in range(3)]
    quiet = _fresh("talk.rego", QUIET)
    for n, e in enumerate(engines):
        assert e.eval_rule("data.talk.allow", input={"n": n}) is (n > 1)
        assert quiet.eval_rule("data.talk.allow", input={"n": n}) is (n > 1)
    for n, e in enumerate(engines):
        assert e.take_prints() == _opa_prints(oracle, LOUD, "data.talk.allow", {"n": n})
    assert quiet.take_prints() == []


def test_settings_after_a_quiet_first_evaluation_take_effect() -> None:
    text = 'package talk\nn := to_number(input.s)\nallow if { print("s", input.s); n > 1 }\n'
    _warm("s.rego", QUIET)
    e = _fresh("s.rego", QUIET)
    assert e.eval_rule("data.talk.allow", input={"n": 2}) is True
    e.add_policy("s.rego", text)
    assert e.eval_rule("data.talk.n", input={"s": "x"}) is pyrego.UNDEFINED  # (a builtin error: undefined when not strict)
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.EvalError, match="invalid syntax"):
        e.eval_rule("data.talk.n", input={"s": "x"})
    e.set_gather_prints(False)
    assert e.eval_rule("data.talk.allow", input={"s": "2"}) is True
    assert e.take_prints() == []
    e.set_gather_prints(True)
    assert e.eval_rule("data.talk.allow", input={"s": "3"}) is True
    assert e.take_prints() == ["s 3"]
