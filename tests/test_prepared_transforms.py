"""The rewrites that make a prepared rule one function of the input
(``codegen/prepared.py``), each against OPA and ``eval_rule`` on the cases
that could tell it wrong: definitions written into one function where the
rule calls rules, a called rule's definition folded into its memoising
function and the memo looked in before the call, equality and membership
tests done with Python's operators, values that go through the rule's
conversion; and every rule of every OPA conformance case, prepared, against
``eval_rule``."""

from __future__ import annotations

import dis
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.conformance import canonical, iter_cases, json_sort_key
from shared_material import SHARED_DIR

POLICY = """package t

default allow := false

roles contains r if { some r in input.roles }
by_name[k] := v if { some k, v in input.named }
level := x if { x := input.level } else := 0
one := y if { some y in input.ys }
two := 1 if input.q
two := 1 if input.r
sum_levels := level + count(roles)

allow if {
    input.action in roles
    level >= 2
}

allow if {
    by_name[input.who] == input.expect
    one > 0
}

allow if {
    two == 1
    sum_levels > 3
}

twice if {
    input.action in roles
    input.b in roles
}

same if input.a == input.b
in_set if input.a in {1, true, "1", 2.5, null}
in_roles if input.a in roles
ints := [1, 22, 3389]
in_ints if input.a in ints
not_in_ints if not input.a in ints
get_null if object.get(input.o, input.k, null) == null
get_false := object.get(input.o, input.k, false)

label := "high" if input.level > 5
label := "low" if input.level < 2
label := "seven" if input.level == 7

sums := x if { x := input.a + 1 }

prefixes := ["/a/", "/b/", "/c/"]
codes := [1, 2, 3]

ordered if input.a >= input.b
below if input.a < input.b

prefixed if {
    some p in prefixes
    startswith(input.path, p)
    input.ok
}

suffixed := n if {
    some p in prefixes
    endswith(input.path, p)
    input.ok
    n := count(input.path)
}

mixed := ["/a/", 1, "/b/"]

mixed_prefixed if {
    some p in mixed
    startswith(input.path, p)
    not input.off
}

coded if {
    some c in codes
    input.n == c
    input.ok
}

has_big if {
    some x in input.ys
    x > 10
}

single_use if {
    sums > 2
    count(roles) >= 0
    not has_big
    one >= 0
}

shared if {
    input.op == "w"
    input.user.role == "admin"
    input.level > 1
}

shared if {
    input.op == "w"
    input.user.role == "admin"
    input.level < -1
}

shared if {
    input.op == "w"
    input.user.role == "guest"
}

shared if input.op == "r"

shared_calls if {
    input.action in roles
    one > 1
}

shared_calls if {
    input.action in roles
    one < 0
}

shared_calls if {
    input.action in roles
    input.b == input.a
}
"""

RULES = (
    "allow", "twice", "same", "in_set", "in_roles", "in_ints", "not_in_ints", "get_null", "get_false", "label",
    "sums", "level", "one", "roles", "by_name", "shared", "shared_calls",
    "ordered", "below", "prefixed", "suffixed", "coded", "mixed_prefixed", "single_use",
)

INPUTS: list[Any] = [
    {"action": "read", "roles": ["read", "write"], "level": 2},
    {"action": "read", "roles": ["read"], "level": 1},
    {"action": "read", "roles": {"a": "read"}, "level": 2.0},
    {"action": "read", "roles": "read", "level": 3},
    {"action": 1, "roles": [1.0, "1"], "level": 5, "b": True},
    {"action": True, "roles": [True, "true"], "level": 5, "b": 1},
    {"action": True, "roles": [1, "1"], "b": 1.0},
    {"action": "read", "roles": [["read"]], "level": "2"},
    {"who": "x", "named": {"x": 1}, "expect": 1.0, "ys": [1, 1]},
    {"who": "x", "named": {"x": 1}, "expect": True, "ys": [1]},
    {"who": "x", "named": {"x": "v"}, "expect": "v", "ys": [1, 2]},
    {"who": "x", "named": [5], "expect": 5, "ys": [3]},
    {"q": True, "level": 2, "roles": ["a", "b"]},
    {"r": 1, "level": 9, "roles": []},
    {"q": False, "r": None, "level": 7},
    {"a": 1, "b": 1.0},
    {"a": 1, "b": True},
    {"a": None, "b": None},
    {"a": "1", "b": "1"},
    {"a": [1], "b": [1.0]},
    {"a": [1], "b": [True]},
    {"a": 1, "b": True},
    {"a": {"k": 1}, "b": {"k": 1.0}},
    {"a": 22},
    {"a": 22.0},
    {"a": 3389.5},
    {"a": True},
    {"a": "22"},
    {"a": 2.5, "roles": [2.5]},
    {"a": 1.0, "roles": [1]},
    {"a": "read", "action": "read", "roles": ["read"], "b": "read"},
    {"op": "w", "user": {"role": "admin"}, "level": 2},
    {"op": "w", "user": {"role": "admin"}, "level": -2.5},
    {"op": "w", "user": {"role": "admin"}, "level": 0},
    {"op": "w", "user": {"role": "admin"}, "level": "2"},
    {"op": "w", "user": {"role": "guest"}, "level": 2},
    {"op": "w", "user": "admin"},
    {"op": "w", "user": None},
    {"op": "r", "user": {"role": "admin"}},
    {"op": ["w"]},
    {"action": "a", "roles": ["a"], "ys": [2, 2]},
    {"action": "a", "roles": ["a"], "ys": [-1]},
    {"action": "a", "roles": ["a"], "ys": [1, 2]},
    {"action": "a", "roles": ["a"], "ys": [0], "a": 1, "b": 1.0},
    {"action": "a", "roles": {"x": "a"}, "ys": [], "a": 1, "b": True},
    {"a": 2, "b": 1.5},
    {"a": "b", "b": "a"},
    {"a": 1.5, "b": 1.5},
    {"a": True, "b": 1},
    {"a": [2], "b": [1, 5]},
    {"a": None, "b": False},
    {"path": "/a/x", "ok": True, "n": 2},
    {"path": "/x/b/", "ok": True, "n": 2.0},
    {"path": "/a/x", "ok": False, "n": 2},
    {"path": "/d/x", "ok": True, "n": 7},
    {"path": "/a/x", "n": True},
    {"path": 5, "ok": False, "n": "1"},
    {"path": 5, "ok": True},
    {"path": ["/a/"], "ok": True},
    {"path": None, "ok": False},
    {"a": 5, "roles": ["r"], "ys": [1, 2]},
    {"a": 5, "roles": ["r", 1], "ys": [3]},
    {"a": 5.5, "ys": []},
    {"a": 1, "ys": [3]},
    {"a": 5, "roles": [], "ys": [11]},
    {"o": {"k": None}, "k": "k"},
    {"o": {"k": False}, "k": "k"},
    {"o": {"k": 0}, "k": "k"},
    {"o": {}, "k": "k"},
    {"o": {"k": 1}, "k": ["k"]},
    {"o": [None], "k": 0},
    {"o": "x", "k": "k"},
    {"a": "x"},
    {"level": 7},
    {},
    None,
    [],
    "input",
]


def _json(value: Any) -> Any:
    """``value`` as OPA gives it in JSON: a set as its sorted array."""
    if isinstance(value, (set, frozenset)):
        return sorted((_json(v) for v in value), key=json_sort_key)
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return value


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``fn`` answers: a value (as OPA gives it), undefined, or an error's code."""
    try:
        value = fn(*args, **kwargs)
    except pyrego.RegoError as err:
        return ("error", err.code)
    return ("undefined",) if value is pyrego.UNDEFINED else ("value", canonical(_json(value)))


def _full_outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The same, with an error's type, message and location."""
    try:
        value = fn(*args, **kwargs)
    except pyrego.RegoError as err:
        return ("error", type(err), err.code, str(err), err.location)
    return ("undefined",) if value is pyrego.UNDEFINED else ("value", canonical(_json(value)))


def _engine(strict: bool = False) -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("t.rego", POLICY)
    engine.set_strict_builtin_errors(strict)
    return engine


def _runs_as_one_function(fn: Any) -> bool:
    return getattr(fn, "__code__", None) is not None and fn.__code__.co_filename == "<pyrego prepared rule>"


def test_the_rewrites_apply() -> None:
    engine = _engine()
    allow = engine.prepare_rule("data.t.allow")
    assert _runs_as_one_function(allow)
    # Three definitions, rules called: one function, a memo, no call per definition.
    assert not {"P0", "P1", "P2"} & set(allow.__code__.co_names)
    assert "m" in allow.__code__.co_varnames
    # A called rule of one definition computes it in its memoising function (no call of ``D<id>_0``).
    namespace = allow.__globals__
    rewritten = [n for n in allow.__code__.co_names if re.fullmatch(r"R\d+", n) and _runs_as_one_function(namespace[n])]
    folded = [n for n in rewritten if not any(re.fullmatch(r"D\d+_\d+", c) for c in namespace[n].__code__.co_names)]
    assert folded, rewritten
    # A called rule that one call reaches is written at that call (its locals renamed ``<name>_R<id>``).
    assert any(re.fullmatch(r"\w+_R\d+", v) for v in allow.__code__.co_varnames), allow.__code__.co_varnames
    # The steps its definitions begin with are taken once.
    shared = engine.prepare_rule("data.t.shared")
    assert _runs_as_one_function(shared)
    # (A literal-key lookup names its key twice: ``t.get('op', UNDEF) if ... else rt_get(t, 'op')``.)
    keys = Counter(ins.argval for ins in dis.get_instructions(shared) if ins.opname == "LOAD_CONST")
    assert keys["role"] == 2 and keys["level"] == 2 and keys["op"] == 4, keys
    # A loop over a constant array that a test of unchanged values skips in every iteration:
    # written twice (path a string, or not), the test taken out of the first.
    prefixed = engine.prepare_rule("data.t.prefixed")
    assert _runs_as_one_function(prefixed)
    assert sum(1 for ins in dis.get_instructions(prefixed) if ins.argval == "startswith" and ins.opname in ("LOAD_METHOD", "LOAD_ATTR")) == 2
    # A rule of values other than constants, no rule called: one function that converts the value.
    assert _runs_as_one_function(engine.prepare_rule("data.t.sums"))
    assert _runs_as_one_function(engine.prepare_rule("data.t.get_false"))


def test_prepared_rules_answer_as_opa() -> None:
    from opa_oracle import OracleUnavailable, get_oracle

    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:  # pragma: no cover - the oracle is part of the test setup
        pytest.fail(f"OPA oracle unavailable: {exc}")
    engine = _engine(strict=True)  # (the OPA wheel evaluates with strict builtin errors)
    for rule in RULES:
        prepared = engine.prepare_rule(f"data.t.{rule}")
        for inp in INPUTS:
            got = _outcome(prepared, inp)
            res = oracle.evaluate({"t.rego": POLICY}, f"x := data.t.{rule}", input=inp)
            if res.is_error:
                want: Any = ("error", res.error_code)
            elif not res.bindings:
                want = ("undefined",)
            else:
                want = ("value", canonical(_json(res.bindings[0]["x"])))
            assert got == want, (rule, inp, got, want)


@pytest.mark.parametrize("strict", [False, True])
def test_prepared_rules_answer_as_eval_rule(strict: bool) -> None:
    engine = _engine(strict)
    for rule in RULES:
        prepared = engine.prepare_rule(f"data.t.{rule}")
        for _ in range(2):
            for inp in [*INPUTS, {"a": Decimal("22")}, {"a": Decimal("1e400")}]:
                path = f"data.t.{rule}"
                assert _full_outcome(prepared, inp) == _full_outcome(engine.eval_rule, path, input=inp), (rule, inp)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _path(parts: tuple[str, ...]) -> str | None:
    if any('"' in p or "\\" in p for p in parts):
        return None
    return "data" + "".join(f".{p}" if _IDENT.fullmatch(p) else f'["{p}"]' for p in parts)


def _conformance_root() -> Path | None:
    root = SHARED_DIR / "opa-conformance" / "v1" if SHARED_DIR is not None else None
    return root if root is not None and root.is_dir() else None


def test_every_rule_of_every_conformance_case_prepared_answers_as_eval_rule() -> None:
    root = _conformance_root()
    if root is None:
        pytest.skip("OPA conformance cases not found")
    compared = direct = 0
    mismatches = []
    for case in iter_cases(root):
        if case.skip or case.input_term is not None:
            continue
        engine = pyrego.Engine()
        engine.set_strict_builtin_errors(case.strict_error)
        try:
            if case.data is not None:
                engine.add_data(case.data)
            engine.add_policies({f"test-{i}.rego": m for i, m in enumerate(case.modules)})
            paths = sorted(engine.program().code.rule_functions)
        except pyrego.RegoError:
            continue
        inp = case.input if case.input_given else pyrego.UNDEFINED
        for parts in paths:
            path = _path(parts)
            if path is None:
                continue
            try:
                prepared = engine.prepare_rule(path)
            except pyrego.RegoError:
                continue
            direct += _runs_as_one_function(prepared)
            for _ in range(2):  # (the second call runs what the first left: the table, a spare context)
                compared += 1
                got = _full_outcome(prepared, inp)
                want = _full_outcome(engine.eval_rule, path, input=inp)
                if got != want:
                    mismatches.append((case.id, path, got, want))
    assert not mismatches, mismatches[:5]
    assert compared > 3000 and direct > 500, (compared, direct)
