"""Many threads on one engine, and on fresh engines at once.

Every test runs its threads with a tiny switch interval, so that the
interpreter changes threads between almost any two bytecodes: the races
these guard against (a half-loaded builtin registry, two builds of one
program, two evaluations sharing one context) then show in every run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form, switching_often

POLICY = """package authz

default allow := false

allow if {
    some role in input.roles
    role == "admin"
    count(input.roles) > 0
}

names contains n if some n in input.roles

double(x) := x * 2

level := double(count(names))
"""


def _run_threads(n: int, work: Callable[[int], None]) -> list[str]:
    """Runs ``work(i)`` in ``n`` threads at once; returns the exceptions they raised."""
    errors: list[str] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as exc:  # noqa: BLE001 - every failure is a finding
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    with switching_often():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return errors


def test_builtins_load_once_for_threads_in_a_fresh_process() -> None:
    # A fresh interpreter: the registry must not be loaded before the threads start.
    script = textwrap.dedent(
        """
        import sys, threading
        sys.setswitchinterval(1e-5)
        import pyrego
        errors = []
        barrier = threading.Barrier(8)
        def go(i):
            barrier.wait()
            try:
                e = pyrego.Engine()
                e.add_policy(f"p{i}.rego", f"package p\\nr := count([1, 2]) + {i}")
                assert e.eval_rule("data.p.r") == 2 + i
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=go, args=(i,)) for i in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(errors), errors[:1])
        """
    )
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("0 "), out.stdout


@pytest.mark.parametrize("trial", range(6))
def test_one_fresh_engine_shared_during_its_first_compile(trial: int) -> None:
    pyrego.clear_compile_cache()
    engine = pyrego.Engine()
    engine.add_policy(f"authz{trial}.rego", POLICY + f"\nmarker := {trial}")

    def work(i: int) -> None:
        for k in range(15):
            admin = (i + k) % 2 == 0
            inp = {"roles": ["admin"] if admin else ["user", "dev"]}
            assert engine.eval_rule("data.authz.allow", input=inp) is admin
            level = engine.eval_query("x := data.authz.level", input=inp)["result"][0]["bindings"]["x"]
            assert level == (2 if admin else 4)

    assert _run_threads(16, work) == []
    # And the engine still works afterwards.
    assert engine.eval_rule("data.authz.allow", input={"roles": ["admin"]}) is True
    assert engine.eval_rule("data.authz.marker") == trial


def test_per_call_input_never_leaks_between_threads() -> None:
    engine = pyrego.Engine()
    engine.add_policy("authz.rego", POLICY)
    engine.set_input({"roles": ["admin"]})  # the engine's own input must not be used
    wrong: list[Any] = []

    def work(i: int) -> None:
        for k in range(300):
            admin = (i * 7 + k) % 3 == 0
            inp = {"roles": ["admin", "x"] if admin else ["guest"]}
            if engine.eval_rule("data.authz.allow", input=inp) is not admin:
                wrong.append((i, k))

    assert _run_threads(8, work) == []
    assert wrong == []
    assert engine.eval_rule("data.authz.allow") is True  # its own input, untouched


def test_per_call_input_through_queries_and_json() -> None:
    engine = pyrego.Engine()
    engine.add_policy("authz.rego", POLICY)

    def work(i: int) -> None:
        for k in range(100):
            n = 1 + (i + k) % 4
            inp = {"roles": [f"r{j}" for j in range(n)]}
            res = engine.eval_query("x := data.authz.level", input=inp)
            assert res["result"][0]["bindings"]["x"] == 2 * n
            names = json.loads(engine.eval_query_json("data.authz.names", input=inp))["result"][0]["expressions"][0]["value"]
            assert names == [f"r{j}" for j in range(n)]

    assert _run_threads(8, work) == []


def test_adding_policies_while_other_threads_evaluate() -> None:
    engine = pyrego.Engine()
    engine.add_policy("authz.rego", POLICY)
    stop = threading.Event()

    def work(i: int) -> None:
        if i == 0:
            for k in range(20):
                engine.add_policy(f"extra{k}.rego", f"package extra{k}\nv := {k}")
            stop.set()
            return
        while not stop.is_set():
            assert engine.eval_rule("data.authz.allow", input={"roles": ["admin"]}) is True

    assert _run_threads(6, work) == []
    assert engine.eval_rule("data.extra19.v") == 19
    assert engine.eval_rule("data.authz.allow", input={"roles": ["user"]}) is False


def test_files_added_by_many_threads_at_once_are_all_kept() -> None:
    """Files go into the engine's table in place: no thread's file is lost to another's."""
    engine = pyrego.Engine()

    def work(i: int) -> None:
        for k in range(25):
            engine.add_policy(f"t{i}/f{k}.rego", f"package t.f{i}_{k}\nv := {k}")

    assert _run_threads(8, work) == []
    assert len(engine.get_policies()) == 8 * 25
    assert engine.eval_query("x := count({f | data.t[f].v})")["result"][0]["bindings"]["x"] == 200


def test_evaluations_see_whole_policy_sets_while_files_are_added() -> None:
    """While one thread adds files one at a time (each file's rule reading the
    one before it), evaluations in others compile and see whole policy sets,
    never fewer files than the one before in that thread."""
    engine = pyrego.Engine()
    engine.add_policy("f0.rego", "package f0\nv := 0")
    stop = threading.Event()
    query = 'n := count({k | data[k].v}); top := data[sprintf("f%d", [n - 1])].v'

    def work(i: int) -> None:
        if i == 0:
            for k in range(1, 60):
                engine.add_policy(f"f{k}.rego", f"package f{k}\nv := data.f{k - 1}.v + 1")
                if k % 3 == 0:
                    engine.get_policies()  # (a reader: the next file goes into a copy)
            stop.set()
            return
        seen = 0
        while not stop.is_set():
            got = engine.eval_query(query)["result"][0]["bindings"]
            assert got["top"] == got["n"] - 1 and got["n"] >= seen, (got, seen)
            seen = got["n"]

    assert _run_threads(4, work) == []
    assert engine.eval_rule("data.f59.v") == 59


def test_clones_on_many_threads_share_compiled_code() -> None:
    base = pyrego.Engine()
    base.add_policy("authz.rego", POLICY)

    def work(i: int) -> None:
        engine = base.clone()
        for k in range(50):
            admin = (i + k) % 2 == 0
            engine.set_input({"roles": ["admin"] if admin else []})
            assert engine.eval_rule("data.authz.allow") is admin

    assert _run_threads(8, work) == []


QUIET = "package talk\ndefault allow := false\nallow if input.n > 1\n"
LOUD = 'package talk\ndefault allow := false\nallow if {\n\tprint("n", input.n)\n\tinput.n > 1\n}\n'


@pytest.mark.parametrize("trial", range(4))
def test_prints_kept_once_policies_that_print_replace_quiet_ones_during_evaluations(trial: int) -> None:
    # An engine whose program calls no print evaluates with no print hook;
    # evaluations still running on the old program when policies that print
    # come in must not leave the engine without one.
    for text in (QUIET, LOUD, QUIET, LOUD):  # (both programs compiled and kept)
        pyrego.Engine().add_policy("talk.rego", text)
    engine = pyrego.Engine()
    engine.add_policy("talk.rego", QUIET)
    done = threading.Event()

    def work(i: int) -> None:
        if i == 0:
            for k in range(600):
                engine.add_policy("talk.rego", QUIET if k % 2 == 0 else LOUD)  # (ends with LOUD)
            done.set()
            return
        while not done.is_set():
            assert engine.eval_rule("data.talk.allow", input={"n": i}) is (i > 1)

    assert _run_threads(4, work) == []
    engine.take_prints()
    for n in range(3):
        assert engine.eval_rule("data.talk.allow", input={"n": n}) is (n > 1)
        assert engine.take_prints() == [f"n {n}"]


# Two definitions that both print and conflict: the evaluation fails, is run
# again in OPA's order, and takes back the lines its first run printed.
CONFLICTING_PRINTS = 'package talk\nr := 1 if { print("one", input.n) }\nr := 2 if { print("two", input.n) }\n'


@pytest.mark.parametrize("form", EXECUTION_FORMS)
def test_a_failed_evaluation_run_again_takes_back_only_its_own_prints(oracle: Any, form: str) -> None:
    # Every thread prints lines of its own: a take-back that removed the
    # newest lines of the engine's table would drop another thread's lines
    # and keep this one's twice. What one evaluation prints is what it
    # prints on an engine of its own (the oracle reports no lines with an
    # error; it does report the error).
    assert oracle.evaluate({"talk.rego": CONFLICTING_PRINTS}, "x := data.talk.r", input={"n": 0}).error_code == "eval_conflict_error"
    threads, rounds = 6, 40
    with in_form(form):
        alone = pyrego.Engine()
        alone.add_policy("talk.rego", CONFLICTING_PRINTS)
        want = []
        for i in range(threads):
            for k in range(rounds):
                with pytest.raises(pyrego.EvalConflictError):
                    alone.eval_rule("data.talk.r", input={"n": i * 1000 + k})
                lines = alone.take_prints()
                assert len(lines) == 2
                want += lines
        engine = pyrego.Engine()
        engine.add_policy("talk.rego", CONFLICTING_PRINTS)

        def work(i: int) -> None:
            for k in range(rounds):
                with pytest.raises(pyrego.EvalConflictError):
                    engine.eval_rule("data.talk.r", input={"n": i * 1000 + k})

        assert _run_threads(threads, work) == []
        got = engine.take_prints()
    assert sorted(got) == sorted(want)
