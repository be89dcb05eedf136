"""Programs split across modules, and ``every`` over values that are not collections.

Each case is a small multi-file program with the answer OPA v1.20.2 gives
(written down here, and checked against OPA itself when the oracle is
available). Every case runs in the three execution forms (closures, compact
and fast generated code).
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

CASES = [
    # -- a package split across files: every rule visible by its short name
    Case(
        "partial-set-in-other-file-with",
        {
            "a.rego": "package p\nviolation contains 1 if { input.x == 1 }",
            "b.rego": 'package p\ntest_a if {\n  r := violation with input as {"x": 1}\n  count(r) == 1\n}',
        },
        "x := data.p.test_a",
        {"x": True},
    ),
    Case(
        "partial-set-in-other-file-v0",
        {
            "a.rego": "package p\nviolation[1] { input.x == 1 }",
            "b.rego": 'package p\ntest_a { r := violation with input as {"x": 1}; count(r) == 1 }',
        },
        "x := data.p.test_a",
        {"x": True},
        v0=True,
    ),
    Case(
        "function-and-constant-in-other-file",
        {"a.rego": "package p\nf(x) := x + 1\nq := 5", "b.rego": "package p\nr := f(q)"},
        "x := data.p.r",
        {"x": 6},
    ),
    Case(
        "default-and-else-across-files",
        {
            "a.rego": "package p\ndefault level := \"low\"\nlevel := \"high\" if input.x > 10 else := \"mid\" if input.x > 5",
            "b.rego": "package p\nalert if level == \"high\"\nshown := level",
        },
        "x := data.p",
        {"x": {"level": "mid", "shown": "mid"}},
        input={"x": 7},
    ),
    Case(
        "ref-head-rule-in-other-file",
        {"a.rego": "package p\nlimits.cpu := 2\nlimits.mem := 4 if input.big", "b.rego": "package p\nr := limits.cpu + count(limits)"},
        "x := data.p.r",
        {"x": 3},
        input={},
    ),
    Case(
        "partial-object-in-other-file",
        {"a.rego": 'package p\nowners[name] := n if { some name, n in {"a": 1, "b": 2} }', "b.rego": "package p\nr := owners.b"},
        "x := data.p.r",
        {"x": 2},
    ),
    Case(
        "three-files-three-packages",
        {
            "lib/a.rego": "package lib.h\nf(x) := x * 2",
            "p/one.rego": "package p\nimport data.lib.h\nv contains h.f(1) if true",
            "p/two.rego": "package p\nimport data.lib.h as hh\nr := hh.f(2) + count(v)",
        },
        "x := data.p",
        {"x": {"r": 5, "v": [2]}},
    ),
    Case(
        "import-in-one-file-rule-in-the-other",
        {"a.rego": "package p\nimport data.q.z\nf(x) := x + 1", "b.rego": "package p\nz := 3\nr := f(z)", "q.rego": "package q\nz := 10"},
        "x := data.p.r",
        {"x": 4},
    ),
    Case(
        "recursion-across-files-is-refused",
        {"a.rego": "package p\na := b", "b.rego": "package p\nb := a"},
        "x := data.p.a",
        "rego_recursion_error",
    ),
    Case(
        "with-mock-of-function-from-other-file",
        {"a.rego": "package p\nf(x) := x + 1", "b.rego": "package p\ng(x) := 5\nr := v if { v := f(1) with f as 10 }\nt := v if { v := f(1) with f as g }"},
        "x := data.p",
        {"x": {"r": 10, "t": 5}},
    ),
    Case(
        "with-rule-from-other-file-by-short-name",
        {"a.rego": "package p\nq := 1", "b.rego": "package p\nr := v if { v := q with q as 10 }"},
        "x := data.p.r",
        {"x": 10},
    ),
    # -- imports take precedence over rules of the same name
    Case(
        "import-alias-beats-local-rule",
        {
            "lib.rego": "package lib\nvalue := 7",
            "p.rego": 'package p\nimport data.lib as lib_alias\nlib_alias := {"value": 1}\nr := lib_alias.value',
        },
        "x := data.p.r",
        {"x": 7},
    ),
    Case(
        "import-beats-local-ref-head-function",
        {
            "lib.rego": "package lib\ndouble(x) := 2 * x",
            "p.rego": "package p\nimport data.lib\nlib.double(x) := 100 * x\nr := lib.double(3)",
        },
        "x := data.p.r",
        {"x": 6},
    ),
    Case(
        "with-through-import-alias-with-dotted-key",
        {"p.rego": 'package p\nimport data["a.b"] as ab\nr := v if { v := data["a.b"].x with ab.x as 2 }\ns := ab.x'},
        "x := data.p",
        {"x": {"r": 2, "s": 1}},
        data={"a.b": {"x": 1}},
    ),
    Case(
        "with-function-through-import",
        {"a.rego": "package lib\nf(x) := x + 1", "b.rego": "package p\nimport data.lib\nr := v if { v := lib.f(1) with lib.f as 10 }"},
        "x := data.p.r",
        {"x": 10},
    ),
    Case(
        "import-input-alone",
        {"a.rego": "package p\nimport input\nr := input.a"},
        "x := data.p.r",
        {"x": 1},
        input={"a": 1},
    ),
]

# A package with no rules is still a document: an empty object, or its base data.
CASES += [
    Case("empty-package-in-data", {"p.rego": "package p"}, "x := data", {"x": {"p": {}}}),
    Case("empty-nested-package", {"p.rego": "package p.q", "r.rego": "package r\nx := 1"}, "x := data", {"x": {"p": {"q": {}}, "r": {"x": 1}}}),
    Case("empty-package-with-import", {"p.rego": "package p\nimport input"}, "x := data.p", {"x": {}}),
    Case("empty-package-over-base-object", {"p.rego": "package p"}, "x := data.p", {"x": {"a": 1}}, data={"p": {"a": 1}}),
    Case("empty-package-over-base-scalar", {"p.rego": "package p"}, "x := data.p", {"x": 5}, data={"p": 5}),
    Case("functions-only-package", {"p.rego": "package p\nf(x) := 1"}, "x := data.p", {"x": {}}),
]

# Base data is addressed by path: a string that reads as an integer indexes an array.
CASES += [
    Case(
        "base-data-array-by-string-index",
        {"p.rego": 'package p\nr := [data.a["00"], data.a["+1"], data.a["1"]]\ns := data.a["-0"]\nt := data.b.c["1"]\nw := data.a[" 1"]\nz := data.o["0"]'},
        "x := data.p",
        {"x": {"r": ["zero", "one", "one"], "s": "zero", "t": 6, "z": "obj"}},
        data={"a": ["zero", "one"], "b": {"c": [5, 6]}, "o": {"0": "obj"}},
    ),
    Case("input-array-by-string-is-undefined", {"p.rego": 'package p\nr := input.xs["1"]'}, "x := data.p.r", "undefined", input={"xs": [1, 2]}),
    Case("query-base-data-array-by-string", {}, 'x := data.a["1"]', {"x": "one"}, data={"a": ["zero", "one"]}),
]

# A head value built by a comprehension over a body variable differs per body
# solution: two solutions giving two values are a conflict.
_HEAD_COMPREHENSIONS = {
    "array": "v := [x | true] if { some x in [1, 2] }",
    "set": "v := {x | true} if { some x in [1, 2] }",
    "count": "v := count([1 | x > 1]) if { some x in [1, 2] }",
    "function": "f(a) := [x | true] if { some x in [a, 2] }\nv := f(1)",
    "object-rule": 'o["k"] := [x | true] if { some x in [1, 2] }\nv := o',
}
for _name, _rule in _HEAD_COMPREHENSIONS.items():
    CASES.append(Case(f"head-comprehension-conflict-{_name}", {"p.rego": f"package p\n{_rule}"}, "x := data.p.v", "eval_conflict_error"))
CASES.append(Case("head-comprehension-one-value", {"p.rego": "package p\nv := [x | true] if { some x in [1, 1] }"}, "x := data.p.v", {"x": [1]}))

# `every` over a domain that is not a collection is undefined, never true.
EVERY_POLICY = 'package p\nallow if {{ every role in {dom} {{ role == "admin" }} }}\ndeny if {{ not allow }}'
EVERY_DOMAINS = {
    "string-literal": ('"user"', "deny"),
    "number": ("5", "deny"),
    "boolean": ("true", "deny"),
    "null": ("null", "deny"),
    "empty-array": ("[]", "allow"),
    "empty-object": ("{}", "allow"),
    "empty-set": ("set()", "allow"),
    "input-string": ("input.roles", "deny"),
    "input-missing": ("input.missing", "deny"),
    "data-number": ("data.d", "deny"),
    "call-result": ('concat(",", ["a"])', "deny"),
    "admins-only": ("input.admins", "allow"),
}
for _name, (_dom, _which) in EVERY_DOMAINS.items():
    CASES.append(
        Case(
            f"every-over-{_name}",
            {"p.rego": EVERY_POLICY.format(dom=_dom)},
            "x := data.p",
            {"x": {_which: True}},
            input={"roles": "user", "admins": ["admin"]},
            data={"d": 3},
        )
    )
CASES += [
    Case(
        "nested-every-inner-scalar",
        {"p.rego": "package p\nallow if { every r in input.roles { every q in r { q == 1 } } }"},
        "x := data.p",
        {"x": {}},
        input={"roles": [1, "a"]},
    ),
    Case(
        "nested-every-inner-arrays",
        {"p.rego": "package p\nallow if { every r in input.roles { every q in r { q == 1 } } }"},
        "x := data.p",
        {"x": {"allow": True}},
        input={"roles": [[1], [1, 1]]},
    ),
    Case(
        "every-with-key-over-string",
        {"p.rego": "package p\nallow if { every i, c in input.s { i >= 0; c != \"\" } }"},
        "x := data.p.allow",
        "undefined",
        input={"s": "abc"},
    ),
    Case(
        "scalar-iteration-is-empty",
        {"p.rego": "package p\ns contains x if { x := input.s[_] }\nn contains x if { some x in input.n }"},
        "x := data.p",
        {"x": {"n": [], "s": []}},
        input={"s": "abc", "n": 5},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", [c for c in CASES if not c.v0], ids=[c.id for c in CASES if not c.v0])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
