"""Keys other than strings in rule and function refs, and defaults below
documents of rules with variable keys, against OPA.

Random small programs (:mod:`numkey_gen`: functions such as ``a[1].x(v)``,
``a[true].y(v)`` and ``a[null][2].z(v)``, rules such as ``a[1] := 1`` and
``a[2].b := 2``, rules with variable keys, defaults at constant paths, rules
calling the functions or replacing them with ``with``) are compiled by pyrego
and OPA: both refuse the same programs (the same error codes), and for the
others give the same answers to reads of the documents and calls of the
functions, from queries, from rules, and through ``eval_rule`` and
``prepare_rule``, in each of pyrego's execution forms (closures, compact and
fast generated code, and the instrumented program that reports coverage).
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from numkey_gen import NUMKEY_QUERIES, NUMKEY_RULE_PATHS, call_queries, gen_numkey_program
from opa_oracle import Oracle
from pyrego.conformance import canonical
from pyrego.runtime.convert import json_ready

_PROGRAMS = 240
_INPUTS = [None, {"on": True, "ks": ["b", 1]}]


def _opa(oracle: Oracle, modules: dict[str, str], query: str, input: Any) -> Any:
    res = oracle.evaluate(modules, query, input=input)
    if res.is_error:
        return ("error", res.error_code)
    return ("value", sorted([canonical(b) for b in res.bindings], key=repr))


def _pyrego(engine: pyrego.Engine, query: str, input: Any) -> Any:
    try:
        res = engine.eval_query(query, input=input) if input is not None else engine.eval_query(query)
    except pyrego.RegoError as exc:
        return ("error", exc.code)
    return ("value", sorted([canonical(r["bindings"]) for r in res.get("result") or []], key=repr))


def _keys_merge_in_python(value: Any) -> bool:
    """Whether an object in ``value`` (JSON, from OPA) has keys 1 and true (or
    0 and false), which a Python dict, as ``eval_rule`` gives values, holds as
    one key."""
    if isinstance(value, dict):
        if {"1", "true"} <= value.keys() or {"0", "false"} <= value.keys():
            return True
        return any(_keys_merge_in_python(v) for v in value.values())
    if isinstance(value, list):
        return any(_keys_merge_in_python(v) for v in value)
    return False


def _rule_answer(call: Any) -> Any:
    """``eval_rule``'s or a prepared rule's outcome, as :func:`_opa` gives a read's."""
    try:
        value = call()
    except pyrego.RegoError as exc:
        return ("error", exc.code)
    if value is pyrego.UNDEFINED:
        return ("value", [])
    return ("value", [canonical({"x": json_ready(value)})])


@pytest.mark.parametrize("block", range(4))
def test_generated_programs_agree_with_opa(block: int, oracle: Oracle) -> None:
    """Each program in every execution form, reads and calls compared with OPA's."""
    r = random.Random(f"pyrego-numkeys-{block}")
    compared = refused = 0
    answered: set[str] = set()
    for n in range(_PROGRAMS // 4):
        modules = gen_numkey_program(r)
        input = r.choice(_INPUTS)
        queries = r.sample(NUMKEY_QUERIES, 8) + call_queries(modules)
        paths = r.sample(NUMKEY_RULE_PATHS, 2)
        want = {q: _opa(oracle, modules, q, input) for q in queries + [f"x := {p}" for p in paths]}
        raw = {}
        for p in paths:
            res = oracle.evaluate(modules, f"x := {p}", input=input)
            if not res.is_error and res.bindings:
                raw[p] = res.bindings[0]["x"]
        for form in (*EXECUTION_FORMS, "coverage"):
            with in_form("compact" if form == "coverage" else form):
                engine = pyrego.Engine()
                # (coverage: the instrumented program, which has its own rule index)
                engine.set_enable_coverage(form == "coverage")
                try:
                    engine.add_policies(modules)
                    engine.compile()
                except pyrego.RegoError as exc:
                    # Refused: OPA refuses it too, with the same code.
                    assert all(w == ("error", exc.code) for w in want.values()), (n, form, modules, exc, want)
                    refused += form == "fast"
                    continue
                for q in queries:
                    got = _pyrego(engine, q, input)
                    assert got == want[q], (n, form, q, input, modules, got, want[q])
                    compared += 1
                    if got[0] == "value" and got[1]:
                        answered.add(q)
                for p in paths:
                    w = want[f"x := {p}"]
                    if w[0] == "error" and w[1] != "eval_conflict_error":
                        continue  # (a query's own compile error: eval_rule has no query)
                    if p in raw and _keys_merge_in_python(raw[p]):
                        continue
                    assert _rule_answer(functools.partial(engine.eval_rule, p, input=input)) == w, (n, form, p, modules)
                    prepared = engine.prepare_rule(p)
                    for _ in range(2):  # (a prepared rule turns hot on later calls)
                        assert _rule_answer(functools.partial(prepared, input)) == w, (n, form, p, modules)
    assert compared > 400
    assert refused > 0
    # The reads and calls of the new shapes answer with values, not only undefined.
    assert "x := data.p.a" in answered and any("(" in q for q in answered), answered


# -- the cases first found ------------------------------------------------------------------

NUMKEY_FUNCTION = 'package p\n\na[1].x(v) := 2 if v == "x"\n\na.x[k] := 1 if k := "y"\n'
CALLER = 'package q\n\nr := data.p.a[1].x("x")\n\ns := y if { y := data.p.a[1].x("x") with data.p.a[1].x as 7 }\n'
DEFAULT_UNDER_VARIABLES = 'package p\n\na[k][1] := 1 if k := "z"\n\ndefault a.b.c := 2\n'


@pytest.mark.parametrize(
    ("modules", "query"),
    [
        # (OPA tells the key 1.0 from 1 in a function's name)
        ({"p.rego": NUMKEY_FUNCTION}, 'x := data.p.a[1.0].x("x")'),
        ({"p.rego": NUMKEY_FUNCTION}, 'x := data.p.a[2].x("x")'),
        ({"p.rego": NUMKEY_FUNCTION}, "x := data.p.a[1].x"),
        ({"p.rego": NUMKEY_FUNCTION + "\nr := y if { y := a[1].x(1) with a[1].x as count }\n"}, "x := data.p.r"),
    ],
)
def test_errors_of_calls(modules: dict[str, str], query: str, oracle: Oracle) -> None:
    """Calls OPA refuses (unknown names, a function read as a value, replaced
    by a builtin of another arity), refused with OPA's message."""
    want = oracle.evaluate(modules, query)
    assert want.is_error
    engine = pyrego.Engine()
    engine.add_policies(modules)
    with pytest.raises(pyrego.RegoError) as got:
        engine.eval_query(query)
    assert got.value.code == want.error_code
    message = str(got.value).split(": ", 1)[1]
    assert message in (want.error_message or ""), (message, want.error_message)


@pytest.mark.parametrize(
    ("modules", "query", "answer"),
    [
        ({"p.rego": NUMKEY_FUNCTION}, "x := data.p", {"a": {"1": {}, "x": {"y": 1}}}),
        ({"p.rego": NUMKEY_FUNCTION}, "x := data.p.a[1]", {}),
        ({"p.rego": NUMKEY_FUNCTION}, 'x := data.p.a[1].x("x")', 2),
        ({"p.rego": NUMKEY_FUNCTION, "q.rego": CALLER}, "x := data.q", {"r": 2, "s": 7}),
        ({"p.rego": DEFAULT_UNDER_VARIABLES}, "x := data.p", {"a": {"z": {"1": 1}}}),
        ({"p.rego": DEFAULT_UNDER_VARIABLES}, "x := data.p.a", {"z": {"1": 1}}),
        ({"p.rego": DEFAULT_UNDER_VARIABLES}, "x := data.p.a.b", None),
        ({"p.rego": DEFAULT_UNDER_VARIABLES}, "x := data.p.a.b.c", None),
        ({"p.rego": DEFAULT_UNDER_VARIABLES, "q.rego": "package q\n\nr := data.p.a.b.c\n"}, "x := data.q", {}),
    ],
)
def test_first_cases(modules: dict[str, str], query: str, answer: Any, execution_form: str, oracle: Oracle) -> None:
    """The answers, written down, are OPA's and pyrego's (None: undefined)."""
    want = ("value", [] if answer is None else [canonical({"x": answer})])
    assert _opa(oracle, modules, query, None) == want
    engine = pyrego.Engine()
    engine.add_policies(modules)
    assert _pyrego(engine, query, None) == want


def test_partial_evaluation_reads_and_calls() -> None:
    """Partial evaluation finds the function and the document holding it, and
    leaves out the default OPA leaves out."""
    from pyrego.partial import partial_eval
    from pyrego.partial.output import body_text

    engine = pyrego.Engine()
    engine.add_policies({"p.rego": NUMKEY_FUNCTION + DEFAULT_UNDER_VARIABLES.replace("package p", "").replace("a[", "b[").replace("a.b", "b.b")})

    def residual(q: str) -> list[str]:
        return [body_text(b) for b in partial_eval(engine, q, unknowns=["input"]).queries]

    assert residual('x = data.p.a[1].x("x")') == ["x = 2"]
    assert residual("x = data.p.a[1]") == ["x = {}"]
    assert residual("x = data.p.a") == ['x = {1: {}, "x": {"y": 1}}']
    assert residual("x = data.p.b.b.c") == []


_KEYS_IN_A_ROW = {"p.rego": 'package p\nall[0] := [2]\nall[1].b := 3\nall[true] := 4\nall["x"] := 5\nall[null].c := 6\nlevel := 1\n'}


@pytest.mark.parametrize(
    "query",
    [
        "x := data.p.all[data.p.level - 1][_]",
        "x := [k | data.p.all[k][_]]",
        "x := [[k, j] | data.p.all[k][j]]",
        "x := data.p.all[1][y]",
    ],
)
def test_keys_in_a_row_reach_number_bool_and_null_keys(query: str, execution_form: str, oracle: Oracle) -> None:
    """A ref with several computed or iterated keys into rules whose refs hold
    number, boolean and null keys finds those rules, in Rego's key order."""
    engine = pyrego.Engine()
    engine.add_policies(_KEYS_IN_A_ROW)
    assert _pyrego(engine, query, None) == _opa(oracle, _KEYS_IN_A_ROW, query, None)
