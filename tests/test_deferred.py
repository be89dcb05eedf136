"""Rules planned on their first call (pyrego.codegen.deferred).

A fresh engine plans a rule's closures when the rule is first called; rules
never called are never planned. What must not change: compile errors are
raised when the policies are compiled (never by the first evaluation that
reaches a rule), with the same text; the first call from many threads at
once gives every thread OPA's answer; coverage and traces see every rule.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import pyrego
from conftest import switching_often
from pyrego.codegen import closures, deferred
from pyrego.codegen.build_cache import clear_compile_cache
from pyrego.codegen.program import LOAD_LOCK
from pyrego.conformance import Case, iter_cases
from pyrego.errors import RegoError
from shared_material import SHARED_DIR

POLICY = """package p

default allow := false

allow if {
    input.user.role == "admin"
    some g in input.user.groups
    g in allowed_groups
}

allowed_groups := {g | some g in ["ops", "dev"]}

is_internal if {
    some cidr in internal_networks
    net.cidr_contains(cidr, input.source)
}

internal_networks := ["10.0.0.0/8", "192.168.0.0/16"]

names contains n if {
    some u in input.users
    n := lower(u.name)
}

double(x) := y if {
    y := x * 2
}

level := double(count(names))

required := 3 if is_internal else := 1
"""

QUERIES = ["data.p.allow", "data.p.is_internal", "data.p.names", "data.p.level", "data.p.required"]
INPUTS: list[Any] = [
    {},
    {"user": {"role": "admin", "groups": ["x", "ops"]}, "source": "10.1.2.3", "users": [{"name": "A"}, {"name": "b"}]},
    {"user": {"role": "user", "groups": ["dev"]}, "source": "8.8.8.8", "users": [{"name": "C"}]},
]


def _gen(engine: pyrego.Engine) -> Any:
    gen = engine.program().code.gen
    assert gen is not None
    return gen


@contextmanager
def _fresh_programs() -> Iterator[None]:
    """No program shared with an engine made before (each test sees its own plans)."""
    clear_compile_cache()
    pyrego.set_compile_cache_size(0, 0)
    try:
        yield
    finally:
        pyrego.set_compile_cache_size()
        clear_compile_cache()


def test_rules_are_planned_on_first_call_only() -> None:
    with _fresh_programs():
        engine = pyrego.Engine()
        engine.add_policy("p.rego", POLICY)
        engine.compile()
        gen = _gen(engine)
        waiting = set(gen.deferred)
        # Every rule with a body of the checked shapes waits; the one with a comprehension does not.
        assert {gen.rule_functions[("p", n)] for n in ("allow", "is_internal", "names", "required")} <= waiting
        assert gen.rule_functions[("p", "allowed_groups")] not in waiting
        engine.set_input({})
        assert engine.eval_rule("data.p.allow") is False
        assert gen.rule_functions[("p", "allow")] not in gen.deferred  # planned by its call
        assert gen.rule_functions[("p", "is_internal")] in gen.deferred  # never called
        source = engine.compiled_source  # shows every rule (planning the rest)
        assert not gen.deferred
        assert all(f"# {name}: " in source for name in waiting)
        assert engine.eval_rule("data.p.is_internal", input=INPUTS[1]) is True  # (planned for the source: runs its code)


UNSAFE_IN_UNCALLED_RULES = [
    # (a rule never evaluated, the error OPA reports when the policy compiles)
    ("helper if { x := y }", "rego_unsafe_var_error"),
    ("helper if { not input.a[x] }", "rego_unsafe_var_error"),
    ("helper contains x if { input.a == 1 }", "rego_unsafe_var_error"),
    ("f(a) := b if { a == 1 }", "rego_unsafe_var_error"),
    ("helper if { some x; x == y }", "rego_unsafe_var_error"),
    ("helper := [x | x == y]", "rego_unsafe_var_error"),
    ("helper if { [x, 1] = [y, 1] }", "rego_unsafe_var_error"),
    ("helper := x if { true } else := y if { true }", "rego_unsafe_var_error"),
    # (the planner reads the annotations: a value JSON cannot hold is refused then)
    ("# METADATA\n# custom:\n#   v: .nan\nhelper := rego.metadata.rule()", "rego_compile_error"),
    ("# METADATA\n# custom:\n#   v: .inf\nhelper if { rego.metadata.chain()[0].v == 1 }", "rego_compile_error"),
]


@pytest.mark.parametrize("rule,code", UNSAFE_IN_UNCALLED_RULES)
def test_rules_never_called_are_still_checked_at_compile(rule: str, code: str) -> None:
    text = f"package p\n\nallow if input.x == 1\n\n{rule}\n"
    errors = []
    for enabled in (True, False):
        with _fresh_programs():
            before = deferred.ENABLED
            deferred.ENABLED = enabled
            try:
                engine = pyrego.Engine()
                engine.add_policy("p.rego", text)
                with pytest.raises(RegoError) as info:
                    engine.compile()
            finally:
                deferred.ENABLED = before
        assert info.value.code == code
        errors.append(str(info.value))
    assert errors[0] == errors[1]  # the same text, deferred or not


def _conformance_cases() -> list[Case]:
    if SHARED_DIR is None or not (SHARED_DIR / "opa-conformance" / "v1").is_dir():
        return []
    return list(iter_cases(SHARED_DIR / "opa-conformance" / "v1"))


def _compile(case: Case) -> tuple[pyrego.Engine | None, str | None]:
    engine = pyrego.Engine()
    if case.data is not None:
        engine.add_data(case.data)
    try:
        engine.add_policies({f"test-{i}.rego": m for i, m in enumerate(case.modules)})
        engine.compile()
    except RegoError as err:
        return None, f"{err.code}: {err}"
    return engine, None


def test_deferring_moves_no_conformance_error_out_of_compile() -> None:
    """Over OPA's conformance modules: compile raises the same errors with
    deferral on and off, and planning any deferred rule later (as closures,
    and as code) raises nothing."""
    cases = _conformance_cases()
    if not cases:
        pytest.skip("OPA conformance cases not found")
    deferred_rules = 0
    with _fresh_programs():
        for case in cases:
            deferred.ENABLED = False
            try:
                _, want = _compile(case)
            finally:
                deferred.ENABLED = True
            engine, got = _compile(case)
            assert got == want, case.id
            if engine is None:
                continue
            for closures_on in (True, False):
                if not closures_on:
                    engine, _ = _compile(case)  # (a program of its own: none of it planned yet)
                    assert engine is not None
                gen = _gen(engine)
                with LOAD_LOCK:
                    for name in list(gen.deferred):
                        deferred_rules += 1
                        deferred.plan(gen, name, closures=closures_on)  # raises nothing
                        gen.load(name)
    assert deferred_rules > 1000  # (the check saw many)


def _opa_answers() -> dict[tuple[str, int], Any]:
    try:
        from opa_oracle import OracleUnavailable, get_oracle

        oracle = get_oracle()
    except (ImportError, OracleUnavailable) as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    out: dict[tuple[str, int], Any] = {}
    for q in QUERIES:
        for i, inp in enumerate(INPUTS):
            res = oracle.evaluate({"p.rego": POLICY}, f"x := {q}", input=inp)
            assert not res.is_error, res
            out[q, i] = _plain(res.bindings[0]["x"]) if res.bindings else pyrego.UNDEFINED
    return out


def _plain(v: Any) -> Any:
    """OPA's exact numbers (Decimal) as pyrego's integers; sets come back as arrays."""
    from decimal import Decimal

    if isinstance(v, Decimal) and v == int(v):
        return int(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _ours(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return value


def _first_calls_at_once(engine: pyrego.Engine, jobs: list[tuple[str, int]]) -> tuple[dict[int, Any], list[BaseException]]:
    """Each job ``(rule, input index)`` in a thread of its own, all released at once."""
    barrier = threading.Barrier(len(jobs))
    got: dict[int, Any] = {}
    failures: list[BaseException] = []

    def run(k: int, q: str, i: int) -> None:
        try:
            barrier.wait()
            got[k] = engine.eval_rule(q, input=INPUTS[i])
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(k, q, i)) for k, (q, i) in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got, failures


@pytest.mark.parametrize("with_closures", [True, False])
def test_first_calls_from_many_threads_agree_with_opa(with_closures: bool) -> None:
    want = _opa_answers()
    before = closures.ENABLED
    closures.ENABLED = with_closures
    try:
        with _fresh_programs(), switching_often():
            for _ in range(3):
                engine = pyrego.Engine()
                engine.add_policy("p.rego", POLICY)
                engine.compile()
                gen = _gen(engine)
                jobs = [(q, i) for q in QUERIES for i in range(len(INPUTS))] * 2
                got, failures = _first_calls_at_once(engine, jobs)
                assert not failures, failures
                for k, (q, i) in enumerate(jobs):
                    assert _ours(got[k]) == want[q, i], (q, INPUTS[i])
                # The table ends consistent: every rule called is planned once, its stand-in replaced.
                for q in QUERIES:
                    name = gen.rule_functions[tuple(q.split(".")[1:])]
                    assert name not in gen.deferred
                    assert not getattr(gen.namespace[name], "pyrego_lazy", False)
                # And later evaluations still agree (the warm path).
                for (q, i), v in want.items():
                    assert _ours(engine.eval_rule(q, input=INPUTS[i])) == v
    finally:
        closures.ENABLED = before


def test_coverage_and_traces_see_rules_planned_lazily() -> None:
    """Coverage after some rules were planned by their first calls and others
    not: OPA's report (every rule's lines, covered or not); the trace enters
    the rule planned last."""
    try:
        from opa_oracle import OracleUnavailable, get_oracle

        get_oracle()
        from opa_bindings.engine import OpaEngine
    except (ImportError, OracleUnavailable) as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    from pyrego.instrument.coverage import line_sets

    opa = OpaEngine()
    try:
        opa.add_policy("p.rego", POLICY)
        opa.eval_query("data.p.required", INPUTS[1], coverage=True)
        want = line_sets(opa.last_coverage["files"]["p.rego"])
    finally:
        opa.close()
    with _fresh_programs():
        engine = pyrego.Engine()
        engine.add_policy("p.rego", POLICY)
        engine.set_input(INPUTS[1])
        assert engine.eval_rule("data.p.allow") is True  # plans allow (and what it reads) only
        gen = _gen(engine)
        assert gen.rule_functions[("p", "is_internal")] in gen.deferred
        engine.set_enable_coverage(True)
        engine.eval_query("data.p.required")
        assert line_sets(engine.get_coverage_report()["files"]["p.rego"]) == want
        engine.set_enable_coverage(False)
        row = POLICY.splitlines().index("    net.cidr_contains(cidr, input.source)") + 1
        trace = engine.eval_query_with_trace("data.p.required", input=INPUTS[1])
        assert any(e.location is not None and e.location.row == row for e in trace.events)
        assert engine.eval_rule("data.p.required") == 3  # and the plain program plans it now
        assert gen.rule_functions[("p", "is_internal")] not in gen.deferred


def test_rules_first_called_after_the_program_turned_hot() -> None:
    """A rule still waiting when the program takes its fast form is written
    in that form at its first call, and answers as OPA does."""
    want = _opa_answers()
    from pyrego.codegen.tiers import PROMOTE_AFTER

    with _fresh_programs():
        engine = pyrego.Engine()
        engine.add_policy("p.rego", POLICY)
        for _ in range(PROMOTE_AFTER + 2):
            engine.eval_rule("data.p.allow", input=INPUTS[1])
        gen = _gen(engine)
        assert gen.hot
        assert gen.rule_functions[("p", "is_internal")] in gen.deferred
        for (q, i), v in want.items():
            assert _ours(engine.eval_rule(q, input=INPUTS[i])) == v, (q, INPUTS[i])
        assert not any(name in gen.deferred for name in (gen.rule_functions[("p", n)] for n in ("is_internal", "names", "required")))
