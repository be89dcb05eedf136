"""Fuzzing the Engine with hypothesis: mutated policies, queries and documents.

The only exceptions the Engine may raise are :class:`pyrego.RegoError`
subclasses, and no input may make it hang. Every example runs under a hard
time limit (SIGALRM, :data:`HARD_LIMIT_S`) on top of hypothesis' deadline, so
a hang is reported as a failure instead of blocking the run.

The number of examples per test is ``PYREGO_FUZZ_EXAMPLES`` (default 600; the
six tests together run a few thousand). The runs are derandomized so that CI is
reproducible; set ``PYREGO_FUZZ_RANDOM=1`` to explore new inputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyrego
from pyrego.conformance import CaseTimeout, run_with_timeout

EXAMPLES = int(os.environ.get("PYREGO_FUZZ_EXAMPLES", "600"))
HARD_LIMIT_S = 10.0

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=5),
    derandomize=not os.environ.get("PYREGO_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    database=None,
)

CORPUS = [
    """package fuzz

default allow := false

allow if {
    input.user.role == "admin"
    input.action in ["read", "write", "delete"]
    count(input.user.permissions) > 0
}
""",
    """package fuzz

s contains x if { some x in input.xs; x > 1 }
o[k] := v if { some k, v in input.m }
f(x) := y if { y := x * 2 }
g(x) := 1 if x > 0
else := 0
p := [f(i) | some i in numbers.range(1, 3)]
""",
    """package fuzz

import rego.v1

roles := {"admin": {"read", "write"}, "viewer": {"read"}}
allowed if every r in input.roles { roles[r][input.action] }
msg := sprintf("%v/%s", [input.roles, input.action]) if not allowed
q := r if { r := allowed with input as {"roles": ["admin"], "action": "read"} }
""",
    """package fuzz

a.b.c := 1
a.b[k] := 2 if some k in ["d", "e"]
t := {x: y | some x, y in {"k": [1, 2.5, "s", null, true]}}
n := 0.1 + 0.2 == 0.3
big := 123456789012345678901234567890 * 2
str := concat("-", [upper("a"), lower("B"), trim_space(" c ")])
""",
    """package fuzz

default v := "none"

v := "x" if input.a == 1
v := "y" if { input.a == 2; not input.b }
cmp := [null < false, 1 == 1.0, {1, true}, {[1]: {"a": set()}}]
r := regex.match(`^a+$`, "aaa")
w := [p | walk({"a": [1, {"b": 2}]}, [p, _])]
""",
]

TOKENS = [
    "{", "}", "[", "]", "(", ")", ":=", "=", "==", "!=", "<", ">=", "+", "-", "*", "/", "%", "|", "&",
    " if ", " contains ", " else ", "default ", "not ", "some ", " in ", "every ", " with ", " as ",
    "\"", "`", "\n", "\\", "'", "0", "1e309", "-0", "1.5", "99999999999999999999999999", ".", ",", ";", "_",
    "input", "data", "x", "y", "import ", "package ", "#", "\x00", "é", "\u2028", "\ufeff", "__import__(\"os\")",
    "\"\"\"", "count(", "sprintf(", "numbers.range(", "[x | x := 1]", "{k: v | some k, v in input}",
    "set()", "null", "true", "false", "f(", "p[", "rego.v1", "future.keywords", "\t", "\r\n", "$\"{x}\"",
]

QUERIES = [
    "data",
    "data.fuzz",
    "x := data.fuzz.allow",
    "data.fuzz[k] = v",
    "x := data.fuzz.f(1)",
    "data.fuzz.s[x]",
    "input",
    "x := count(input)",
]


# Same-kind substitutions keep most mutants parseable, so that they reach the
# compiler and the evaluator instead of stopping in the parser.
SWAPS: list[tuple[str, list[str]]] = [
    (r"-?\b\d+(?:\.\d+)?(?:e\d+)?\b", ["0", "1", "-1", "2.5", "1e3", "99999999999999999999", "0.1", "-0"]),
    (r'"[^"\n]*"', ['""', '"a"', '"é"', '"\\u0000"', '"admin"', '"\\n"', '"%v"']),
    (r"==|!=|<=|>=|<|>", ["==", "!=", "<", "<=", ">", ">="]),
    (r"(?<=\s)[-+*/%|&](?=\s)", ["+", "-", "*", "/", "%", "|", "&"]),
    (r"\b(?:input|data)\b", ["input", "data", "input.user", "data.fuzz"]),
    (r"\b(?:true|false|null)\b", ["true", "false", "null", "[]", "{}", "set()"]),
    (r"\b(?:count|upper|lower|sprintf|concat|regex\.match|numbers\.range|walk|trim_space)\b",
     ["count", "sum", "max", "sort", "to_number", "json.marshal", "object.keys", "type_name"]),
    (r"\b(?:some|every|not)\b", ["some", "every", "not", ""]),
    (r"\b(?:if|contains|else|default)\b", ["if", "contains", "else", "default", ""]),
]


@st.composite
def mutated(draw: st.DrawFn, corpus: list[str]) -> str:
    """A corpus text with a few random edits: same-kind token swaps, and raw
    deletions, duplications, token and character insertions."""
    import re

    text = draw(st.sampled_from(corpus))
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4, 6]))):
        n = len(text)
        op = draw(st.integers(0, 9))
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        if op >= 5:
            pattern, choices = draw(st.sampled_from(SWAPS))
            matches = list(re.finditer(pattern, text))
            if matches:
                m = draw(st.sampled_from(matches))
                text = text[: m.start()] + draw(st.sampled_from(choices)) + text[m.end() :]
        elif op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:i] + text[i:j] + text[i:]
        elif op == 2:
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif op == 3:
            text = text[:i] + draw(st.characters(codec="utf-8")) + text[j:]
        else:
            k = draw(st.integers(0, n))
            text = text[:i] + text[k : k + (j - i)] + text[j:]
    return text


def token_soup() -> st.SearchStrategy[str]:
    """Texts glued from Rego-ish tokens and identifiers."""
    return st.lists(st.sampled_from([*TOKENS, "package fuzz\n", "p", "q := ", "1", "\"a\"", " "]), max_size=60).map("".join)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=25,
)


def only_rego_errors(fn: Callable[[], Any]) -> None:
    """Run ``fn`` under the hard time limit; RegoError is fine, anything else fails the test."""
    try:
        run_with_timeout(fn, HARD_LIMIT_S)
    except pyrego.RegoError:
        pass
    except CaseTimeout:
        pytest.fail(f"hang: no answer within {HARD_LIMIT_S}s")


def _eval_all(engine: Any, queries: list[str]) -> None:
    for q in queries:
        try:
            engine.eval_query(q)
        except pyrego.RegoError:
            pass
    engine.take_prints()


@FUZZ_SETTINGS
@given(text=mutated(CORPUS), inp=JSON_VALUES)
def test_mutated_policies(text: str, inp: Any) -> None:
    def run() -> None:
        engine = pyrego.Engine()
        engine.set_input(inp)
        engine.add_policy("fuzz.rego", text)
        _eval_all(engine, QUERIES)

    only_rego_errors(run)


@FUZZ_SETTINGS
@given(text=token_soup(), v0=st.booleans())
def test_token_soup_policies(text: str, v0: bool) -> None:
    def run() -> None:
        engine = pyrego.Engine()
        engine.set_rego_v0(v0)
        engine.add_policy("soup.rego", text)
        _eval_all(engine, QUERIES[:3])

    only_rego_errors(run)


@FUZZ_SETTINGS
@given(query=mutated(QUERIES + ["x := [y | some y in input; y > 1]", "input.a[_] = x; x > 0", "not input.b"]), inp=JSON_VALUES)
def test_mutated_queries(query: str, inp: Any) -> None:
    def run() -> None:
        engine = pyrego.Engine()
        engine.add_policy("base.rego", CORPUS[1])
        engine.set_input(inp)
        engine.eval_query(query)

    only_rego_errors(run)


@FUZZ_SETTINGS
@given(data=st.lists(st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=3), max_size=3), inp=JSON_VALUES)
def test_documents(data: list[dict[str, Any]], inp: Any) -> None:
    def run() -> None:
        engine = pyrego.Engine()
        engine.add_policy("base.rego", CORPUS[3])
        for doc in data:
            try:
                engine.add_data(doc)
            except pyrego.RegoError:
                pass
        engine.set_input(inp)
        engine.eval_query("x := data")
        engine.eval_query("x := [input, data.fuzz.t]")
        engine.eval_rule("data.fuzz.n")

    only_rego_errors(run)


@FUZZ_SETTINGS
@given(text=mutated(['{"a": [1, 2.5, {"b": null}], "c": "d"}', "[1, true, \"x\"]", "123456789012345678901234567890", "\"s\""]))
def test_json_text(text: str) -> None:
    def run() -> None:
        engine = pyrego.Engine()
        for call in (engine.set_input_json, engine.add_data_json, engine.set_input_term):
            try:
                call(text)
            except pyrego.RegoError:
                pass
        engine.eval_query("x := input")

    only_rego_errors(run)


@FUZZ_SETTINGS
@given(value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4) | st.binary(max_size=3),
    lambda c: st.lists(c, max_size=3) | st.tuples(c, c) | st.dictionaries(st.integers() | st.text(max_size=3), c, max_size=3)
    | st.frozensets(st.integers() | st.text(max_size=2), max_size=3),
    max_leaves=12,
))
def test_python_values(value: Any) -> None:
    """Arbitrary Python values (NaN, bytes, tuples, int keys) are accepted or refused with a RegoError."""

    def run() -> None:
        engine = pyrego.Engine()
        engine.add_policy("p.rego", "package p\n\nv := input\nn := count(input)\n")
        engine.set_input(value)
        engine.eval_rule("data.p.v")
        engine.eval_query("x := data.p.n")
        json.dumps(engine.eval_query("x := input"), default=str)

    only_rego_errors(run)


def test_deep_nesting_is_a_clean_error() -> None:
    """Nesting far past Python's recursion limit must end in a RegoError or a result, never a crash."""
    deep = "[" * 50_000 + "]" * 50_000

    def run() -> None:
        engine = pyrego.Engine()
        engine.add_policy("deep.rego", f"package deep\n\np := {deep}\n")
        engine.eval_rule("data.deep.p")

    only_rego_errors(run)

    def run_query() -> None:
        pyrego.Engine().eval_query(f"x := {deep}")

    only_rego_errors(run_query)

    def run_input() -> None:
        engine = pyrego.Engine()
        engine.set_input_json(deep)
        engine.eval_query("x := input")

    only_rego_errors(run_input)
