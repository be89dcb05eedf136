"""Differences with OPA found on a repository of Terraform-plan policies
(shared helper packages building violation reports with comprehensions,
per-resource variables and condition lists). Each case is a minimal program
written here, evaluated by OPA v1.20.2 and by pyrego in every execution
form, with strict builtin errors on and off (off: only where OPA raised no
error), comparing the value, undefined, or the error's code and message."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import HEADER, agree
from opa_oracle import plain_numbers
from pyrego.conformance import canonical

_HEAD = 'package p\n\nxs := ["a", "b", "c"]\n\nys := ["a", "x", "a"]\n\nf(v) if v == "a"\n\n'

# A comprehension's head may bind a variable its body reads: OPA's compiler
# moves the head's terms that need evaluating (refs, calls) into the body as
# ``__localN__ = term`` before checking safety, so in
# ``[{"v": xs[i]} | not f(ys[i])]`` the ref ``xs[i]`` binds ``i`` and the
# negation runs after it. A helper collecting the positions of a list that
# fail a check was refused by pyrego with "var i is unsafe".
HEAD_BINDS_BODY = {
    "array, object head": 'r := [{"v": xs[i], "w": ys[i]} | some i; not f(ys[i])]',
    "array, ref head, no some": "r := [xs[i] | not f(ys[i])]",
    "array, negated comparison": 'r := [xs[i] | some i; not ys[i] == "a"]',
    "array, comparison": "r := [xs[i] | i > 0]",
    "set": "r := {xs[i] | not f(ys[i])}",
    "object, key binds": "r := {xs[i]: 1 | some i; not f(ys[i])}",
    "object, value binds": 'r := {k: xs[i] | some k in ["q"]; not f(xs[i])}',
    "two head refs": "r := [[xs[i], ys[j]] | j < 2]",
    "call in head": "r := [upper(xs[i]) | not f(ys[i])]",
    "undefined call in head": "r := [f(xs[i]) | not f(ys[i])]",
    "nested, outer var": "r := [[xs[i] | i > k] | some k in [0, 1]]",
    "nested in a collection": "r := {x | some x in [[xs[i] | not f(ys[i])], [ys[j] | j > 1]]}",
    "function body": 'g(zs) := [zs[i] | not f(zs[i])]\n\nr := g(["a", "q", "b"])',
    "input": "r := [input.a[i] | not f(input.b[i])]",
    "still unsafe": "r := [1 | some i; not f(ys[i])]",
    "unsafe, another variable": "r := [xs[i] | not f(ys[i]); not f(ys[j])]",
    "unsafe, some in the body": "r := [xs[j] | some i; not f(ys[i])]",
}


@pytest.mark.parametrize("case", list(HEAD_BINDS_BODY))
def test_comprehension_head_binds_what_the_body_reads(oracle: Any, case: str) -> None:
    module = _HEAD + HEAD_BINDS_BODY[case] + "\n"
    agree(oracle, module, "data.p.r", {"a": [1, 2, 3], "b": ["a", "b"]}, by_query=(False, True))


# The type check lowers such a comprehension the same way: it gave up on the
# program when the body alone could not be ordered, so a type error anywhere
# else in the program (a test module adding a number to a set) went unreported.
TYPE_ERRORS_BESIDE = {
    "elsewhere": "r := [xs[i] | not f(ys[i])]\n\nt := 1 + {2}",
    "in a use of the value": "r := [xs[i] | not f(ys[i])]\n\nu := r[0] + 1",
    "object value": "r := {xs[i]: ys[i] | not f(ys[i])}\n\nu := r.a + 1",
    "in the body": "r := [x | x := 1 + {xs[i]}; not f(ys[i])]",
}


@pytest.mark.parametrize("case", list(TYPE_ERRORS_BESIDE))
def test_type_errors_beside_such_a_comprehension(oracle: Any, case: str) -> None:
    agree(oracle, _HEAD + TYPE_ERRORS_BESIDE[case] + "\n", "data.p.r", by_query=(False, True))


# A variable of a comprehension's head that its body leaves unbound, where
# the head's term holds no ref or call (so OPA leaves it in the head), is
# named at the comprehension's place, the line of its opening bracket, not
# at the term's (a helper's set comprehension with its head on a line of
# its own, the head variable misspelt).
UNSAFE_HEAD_VAR = {
    "set": "r := {\n\tx |\n\ty := 1\n}",
    "array": "r := [\n\tx |\n\ty := 1\n]",
    "object key": "r := {\n\tx: 1 |\n\ty := 1\n}",
    "object value": "r := {\n\t1: x |\n\ty := 1\n}",
    "composite": "r := [\n\t[x, y] |\n\ty := 1\n]",
    "wildcard": "r := [\n\t_ |\n\ty := 1\n]",
    "head with a ref: at the term": "r := [\n\t[x, xs[0]] |\n\ty := 1\n]",
    "bound": "r := {\n\tx |\n\tsome x in xs\n}",
    "at the expression, not the bracket": "r if {\n\ttrue != (\n\t[\n\t\tx |\n\t\tz := 1\n\t])\n}",
    "nested in an array": "r if {\n\ty := [\n\t\t[\n\t\t\tx |\n\t\t\tz := 1\n\t\t]\n\t]\n}",
}


@pytest.mark.parametrize("case", list(UNSAFE_HEAD_VAR))
def test_unsafe_head_variable_named_at_the_comprehension(oracle: Any, case: str) -> None:
    agree(oracle, _HEAD + UNSAFE_HEAD_VAR[case] + "\n", "data.p.r", by_query=(False, True))


# In a query the error's place is the query's expression (its column too).
QUERIES_WITH_UNSAFE_HEADS = [
    "x := [q | true]",
    "y := 1; x := [q | true]",
    "y := 1; x := {1: q | true}",
    "y := 1; x := [[q | true] | true]",
    "y := 1\nx := [z | true]",
    "y := 1; x := [1 | q > 0]",
]


def _query_outcome(modules: dict[str, str], query: str, strict: bool) -> Any:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        found = engine.eval_query(query)["result"]
    except pyrego.RegoError as exc:
        return ("error", exc.code, str(exc).split("\n")[0])
    return ("value", canonical([r["bindings"] for r in found]))


@pytest.mark.parametrize("query", QUERIES_WITH_UNSAFE_HEADS)
def test_unsafe_head_variable_in_a_query(oracle: Any, query: str) -> None:
    modules = {"p.rego": _HEAD}
    res = oracle.evaluate(modules, query)
    if res.is_error:
        want = ("error", res.error_code, HEADER.sub("", res.error_message or "").split("\n")[0])
    else:
        want = ("value", canonical([plain_numbers(b) for b in res.bindings]))
    for form in EXECUTION_FORMS:
        for strict in (True, False):
            if not strict and want[0] == "error":
                continue
            with in_form(form):
                assert _query_outcome(modules, query, strict) == want, f"{form}, strict={strict}"
