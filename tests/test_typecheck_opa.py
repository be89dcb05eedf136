"""Differential tests of the type checker: pyrego refuses exactly what OPA refuses.

Random modules (:mod:`typecheck_gen`: ill-typed calls, unifications of
different types, refs into values that lack the key, wrong arities,
comprehensions, rules and functions of every type) are compiled by OPA v1.20.2
(:mod:`opa_oracle`) and by pyrego with :meth:`pyrego.Engine.set_type_check`
on. Each outcome is one of: both accept; both refuse with the same list of
errors (location, code and OPA's full message, details included); or a
disagreement. A *false rejection* (pyrego refuses with a type error what OPA
accepts) would stop a valid policy from loading and fails the test at once.

Queries are checked the same way (``eval_query`` over a module of the same
seed), since OPA type-checks them too.

``python tests/test_typecheck_opa.py [N]`` prints the agreement figures for
N programs with the checker off (before) and on (after).
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
from typecheck_gen import program, program_documents, query  # noqa: E402

PROGRAMS = int(os.environ.get("PYREGO_TYPECHECK_PROGRAMS", "400"))
QUERIES = int(os.environ.get("PYREGO_TYPECHECK_QUERIES", "150"))
BATCH = 50

_HEADER = re.compile(r"^(?:bundle activation failed: )?\d+ errors? occurred:[ \n]")


def opa_outcome(oracle: Any, modules: dict[str, str], q: str) -> tuple[str | None, list[str]]:
    """(first error code, every error as ``loc: code: message``) from OPA; (None, []) when it accepts."""
    res = oracle.evaluate(modules, q)
    if not res.is_error:
        return None, []
    text = _HEADER.sub("", res.error_message or "")
    entries: list[str] = []
    for line in text.split("\n"):
        if line.startswith("\t") and entries:
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return res.error_code, entries


def pyrego_outcome(modules: dict[str, str], q: str, *, type_check: bool = True) -> tuple[str | None, list[str]]:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)  # as the OPA oracle evaluates
    engine.set_type_check(type_check)
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        engine.eval_query(q)
    except pyrego.RegoError as exc:
        errors = getattr(exc, "errors", None) or [exc]
        return exc.code, [_entry(e) for e in errors]
    return None, []


def _entry(e: pyrego.RegoError) -> str:
    loc = e.location
    if loc is None:
        prefix = ""
    elif not loc.file:  # a query's (OPA's queries have no file name)
        prefix = f"{loc.row}:{loc.col}: "
    else:
        prefix = f"{loc.file}:{loc.row}: "
    return f"{prefix}{e.code}: {e.message}"


@dataclass
class Verdict:
    kind: str  # "accept", "agree", "false-reject", "false-accept", "mismatch", "other"
    detail: str = ""


def compare(oracle: Any, modules: dict[str, str], q: str, *, type_check: bool = True) -> Verdict:
    want_code, want = opa_outcome(oracle, modules, q)
    got_code, got = pyrego_outcome(modules, q, type_check=type_check)
    if want_code is None and got_code is None:
        return Verdict("accept")
    if got_code == "rego_type_error" and want_code != "rego_type_error":
        return Verdict("false-reject", f"OPA: {want_code} {want[:1]}\npyrego: {got}")
    if want_code == "rego_type_error" and got_code != "rego_type_error":
        # pyrego refusing it at another stage (an unsafe variable) is that stage's disagreement.
        return Verdict("false-accept" if got_code is None else "other", f"OPA: {want}\npyrego: {got_code} {got[:1]}")
    if want_code == "rego_type_error":
        return Verdict("agree") if got == want else Verdict("mismatch", f"OPA: {want}\npyrego: {got}")
    # Neither is a type error: other stages (safety, conflicts, evaluation).
    return Verdict("agree" if want_code == got_code else "other", f"OPA: {want_code} {want[:1]}\npyrego: {got_code} {got[:1]}")


def module_case(seed: int) -> tuple[dict[str, str], str]:
    return {"p.rego": program(seed)}, "true"


def documents_case(seed: int) -> tuple[dict[str, str], str]:
    return program_documents(seed), "true"


def query_case(seed: int) -> tuple[dict[str, str], str]:
    return {"p.rego": "package p\n\nc0 := {\"a\": 1, \"b\": [\"x\"]}\n"}, query(seed)


def _run(oracle: Any, cases: list[tuple[dict[str, str], str]]) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    problems: list[str] = []
    for modules, q in cases:
        v = compare(oracle, modules, q)
        counts[v.kind] += 1
        if v.kind in ("false-reject", "false-accept", "mismatch"):
            files = "".join(f"# {name}\n{text}" for name, text in modules.items())
            problems.append(f"--- {v.kind}\n{files}query: {q}\n{v.detail}")
    return counts, problems


@pytest.mark.parametrize("start", range(0, PROGRAMS, BATCH))
def test_modules_agree_with_opa(oracle: Any, start: int) -> None:
    counts, problems = _run(oracle, [module_case(s) for s in range(start, min(start + BATCH, PROGRAMS))])
    assert counts["false-reject"] == 0, "\n".join(problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("start", range(0, PROGRAMS, BATCH))
def test_documents_agree_with_opa(oracle: Any, start: int) -> None:
    counts, problems = _run(oracle, [documents_case(s) for s in range(start, min(start + BATCH, PROGRAMS))])
    assert counts["false-reject"] == 0, "\n".join(problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("start", range(0, QUERIES, BATCH))
def test_queries_agree_with_opa(oracle: Any, start: int) -> None:
    counts, problems = _run(oracle, [query_case(s) for s in range(start, min(start + BATCH, QUERIES))])
    assert counts["false-reject"] == 0, "\n".join(problems)
    assert not problems, "\n".join(problems)


# Object types with number keys, ordered as OPA v1.20.2 orders them: a number
# written as an integer compares below any other (whatever the values) but not
# the reverse, so that OPA's type of {0.25: 1, 5: 1} cannot find the key 5
# again and unifies with nothing; with a key 7 besides, it finds all three.
NUMBER_KEY_CASES = [
    "p := count({0.25: 1, 5: 1})",
    "p := count({0.25: input.a, 5: 1, 7: 1})",
    "p := object.get({-2.5: null, 3.0: 3}, 1e2, 1)",
    "p if { x := {1: \"b\", -2.5: true}; count(x) }",
    "p if { x := {0.25: 1, 0.5: 1, 7: 1}; x == x }",
    "p := {0.25: 1, 5: 1}[0.25]",
    "p := {0.25: 1, 5: 1}[5]",
    "p := count({-3: 1, 2.5: 1, true: 1, 1.0: 1})",
    "p := count({[1]: 1, [0.5]: 1, 3: 1})",
    "p := count({5: 1, 0.25: 1, \"a\": 1})",
    "p := count({5: 1, 0.25: 1, null: 1})",
]


@pytest.mark.parametrize("rule", NUMBER_KEY_CASES)
def test_object_number_keys_as_opa_orders_them(oracle: Any, rule: str) -> None:
    v = compare(oracle, {"p.rego": f"package p\n\n{rule}\n"}, "x := data.p.p")
    assert v.kind in ("accept", "agree"), v.detail


def test_generated_programs_are_often_ill_typed(oracle: Any) -> None:
    """The generator is worth its salt: OPA refuses a good share of its programs."""
    refused = sum(opa_outcome(oracle, *module_case(s))[0] == "rego_type_error" for s in range(100))
    assert 15 <= refused <= 85, refused


def report(n: int) -> None:
    from opa_oracle import get_oracle

    oracle = get_oracle()
    for label, make, count in (("modules", module_case, n), ("documents", documents_case, n), ("queries", query_case, n // 2)):
        for type_check in (False, True):
            counts: Counter[str] = Counter()
            for seed in range(count):
                counts[compare(oracle, *make(seed), type_check=type_check).kind] += 1
            agree = counts["accept"] + counts["agree"]
            state = "on" if type_check else "off"
            print(f"{label}, type check {state}: {agree}/{count} agree {dict(counts)}")


if __name__ == "__main__":
    report(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)


# A with replacing a rule: in its expression, the rules reading that rule (at
# any depth, through rules and functions) are of type any in OPA v1.20.2; the
# replaced rule keeps its type, as do rules reading nothing replaced, the
# expressions without the with, and rules reading a replaced base document.
WITH_REPLACED_CASES = [
    # (accepted by OPA)
    's0 contains 1 if input.z\nc2 if { data.p.s0[input.b] }\nf if { (10 / c2) in {1} with data.p.s0 as "A" }',
    's0 := 1\nc2 if { s0 == 1 }\nf if { 10 / c2 with data.p.s0 as "A" }',
    's0 := 1\nc3 if { s0 == 1 }\nc2 if { c3 }\nf if { x := c2 with data.p.s0 as "A"; 10 / x }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { [c2] == ["a"] with data.p.s0 as "A" }',
    's0 := 1\nc2 := {"a": {"b": 1}} if { s0 }\nf if { c2.a.b.c with data.p.s0 as 2 }',
    # (refused, with any in the message where the with applies)
    's0 := 1\nc2 := 5 if { s0 }\nf if { c2 + "a" with data.p.s0 as "A" }',
    's0(x) := 1\nc2 := 5 if { s0(1) }\nf if { c2 + "a" with s0 as 2 }',
    's0 := 1\nc2(x) := 5 if { s0 }\nf if { c2(1) + "a" with data.p.s0 as 2 }',
    'q.r := 1\nc2 := 5 if { q.r }\nf if { c2 + "a" with data.p.q as {} }',
    's0 := 1\nc2 := 5 if { g(1) }\ng(x) if { s0 }\nf if { c2 + "a" with data.p.s0 as 2 }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { count({x | x := c2 + "a"}) with data.p.s0 as "A" }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { [x | x := c2 + "a"; y := c2 with data.p.s0 as 2] }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { c2 + "a" with data.p.s0 as 2 with input.x as 1 }\ng if { c2 + "a" }',
    's0 := 1\nc2 := 5 if { s0 }\nc3 := 6 if { c2 }\nf if { c3 + "a" with data.p.s0 as 2 with data.p.c2 as 1 }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { c2 + "a" with data.p.s0 as 2 with data.p.c2 as 3 }',
    's0 := 1\nc2 := 5\nf if { c2 + "a" with data.p.s0 as 2 }',
    's0 := 1\nc2 if { s0 == 1 }\nf if { 10 / c2 with data.p.s0 as "A"; 10 / c2 }',
    's0 contains 1 if input.z\nc2 if { data.p.s0[input.b] }\nf if { (10 / c2) in {1} with data.p.z as "A" }',
    'c2 := 5 if { data.q }\nf if { c2 + "a" with data.q as "A" }',
    's0 := 1\nc2 := 5 if { s0 }\nf if { s0 + "a" with data.p.s0 as 2 }',
]


@pytest.mark.parametrize("rules", WITH_REPLACED_CASES)
def test_with_replacing_a_rule_as_opa(oracle: Any, rules: str) -> None:
    v = compare(oracle, {"p.rego": f"package p\n\n{rules}\n"}, "x := data.p")
    assert v.kind in ("accept", "agree"), v.detail


@pytest.mark.parametrize(
    "query",
    [
        'x := data.p.c2 + "a" with data.p.s0 as 2',
        'x := [y | y := data.p.c2 + "a" with data.p.s0 as 2]',
        'x := data.p.c2 + "a"',
        'x := data.p.c2 == "a" with data.p.s0 as 2',
    ],
)
def test_query_with_replacing_a_rule_as_opa(oracle: Any, query: str) -> None:
    for rules in ("s0 := 1\nc2 := 5 if { s0 }", "s0 := 1\nc2 := 5 if { s0 }\nf if { c2 + 1 with data.p.s0 as 2 }"):
        v = compare(oracle, {"p.rego": f"package p\n\n{rules}\n"}, query)
        assert v.kind in ("accept", "agree"), v.detail


# A function's argument has no type while its body is checked. A variable
# unified with a set, a ref or a comprehension whose type holds that unknown
# type (``x := {[arg]}``) takes that type in OPA v1.20.2, which pyrego
# refused with a match error; arrays and objects on the other side are
# unified element by element (the argument then typed any), two such sets
# do not unify; with no type at all (a comprehension whose body is refused)
# it stays unbound. Each function is called so that its value is compared too.
FUNCTION_ARGUMENT_CASES = [
    # assignments and unifications, the variable on either side
    "f(a) := 1 if { x := {[a]} }",
    "f(a) := 1 if { x = {[a]} }",
    "f(a) := 1 if { {[a]} = x }",
    'f(a) := 1 if { x := {{"k": a}} }',
    "f(a) := 1 if { x := {{a: [a]}} }",
    "f(a, b) := 1 if { x := {[a, b]}; x == {[1, 2]} }",
    "f(a) := 1 if { x := {[a]}; x == 1 }",
    "f(a) := 1 if { x := {[[a]]}; y := x; y == 1 }",
    "f(a) := 1 if { [x] = [{[a]}]; x == 1 }",
    'f(a) := 1 if { {"k": x} = {"k": {[a]}}; x == 1 }',
    "f(a) := 1 if { x := [{[a]}, a]; x == 1 }",
    "f(a) := 1 if { x := {a}; x == 1 }",
    "f(a) := 1 if { x := [[a]]; x == 1 }",
    "f(a) := x if { x := {[a]} }",
    # two sets, a set and an array, a ref and a set: no unification
    "f(a) := 1 if { {[a]} = {[a]} }",
    "f(a) := 1 if { {[a]} = [a] }",
    "f(a) := 1 if { {[a]} = {[1]} }",
    'f(a) := 1 if { {[a]} = {["s"]}; a == 1 }',
    "f(a) := 1 if { s := {[a]}; s[_] = {[a]} }",
    # refs into such a set
    "f(a) := 1 if { s := {[a]}; y := s[_] }",
    "f(a) := 1 if { s := {[a]}; s[_] = y; y == 1 }",
    "f(a) := 1 if { x := {[a]}[_]; x == 1 }",
    # some ... in, every
    "f(a) := 1 if { some v in {{a: 1}} }",
    "f(a) := 1 if { some v in {{a: 1}}; v == 1 }",
    "f(a) := 1 if { some k, v in {[a]}; k == 1 }",
    "f(a) := 1 if { some v in [{[a]}]; v == 1 }",
    "f(a) := 1 if { every x in {[a]} { x } }",
    # comprehensions
    "f(a) := 1 if { y := [x | x := {[a]}] }",
    "f(a) := 1 if { [x | x := {[a]}] = y }",
    "f(a) := 1 if { y := [x | x := {[a]}]; y == 1 }",
    'f(a) := 1 if { y := {x | x := {{"k": a}}} }',
    "f(a) := 1 if { y := {k: x | some k, x in {[a]}}; y == 1 }",
    "f(a) := 1 if { x := {[a] | true} }",
    'f(a) := 1 if { x := {"k": [a] | true}; x == 1 }',
    "f(a) := 1 if { [x | x := {[a]}] = {[a]} }",
    # a comprehension whose body is refused has no type: the variable is not bound
    'f(a) := 1 if { y := [x | x := a + "s"] }',
    'f(a) := 1 if { y := {x | x := 1 + "s"}; y[0] }',
    "f(a) := 1 if { y := a[_]; y == 1 }",
]


@pytest.mark.parametrize("rule", FUNCTION_ARGUMENT_CASES)
def test_function_argument_in_composites_as_opa(oracle: Any, rule: str) -> None:
    from opa_compare import agree

    module = f"package p\n\n{rule}\n\nr := f(1)\n" if "f(a)" in rule else f"package p\n\n{rule}\n\nr := f(1, 2)\n"
    v = compare(oracle, {"p.rego": module}, "x := data.p.r")
    assert v.kind in ("accept", "agree"), v.detail
    if v.kind == "accept":
        agree(oracle, module, "data.p.r")
