"""OPA's early compile checks, strict mode, and every error of a compilation.

Each non-strict expectation is what OPA (the oracle) reports for the same
policy, checked here too, so a case that drifts from OPA fails. The oracle
cannot compile in strict mode: strict expectations follow OPA's compiler
source (``v1/ast/compile.go``: unused imports in ``resolveAllRefs``, unused
arguments and assignments in ``rewriteLocalVars``, the v1 checks of
``checkKeywordOverrides``, ``checkImports`` and ``checkDeprecatedBuiltins``
for v0 modules and queries), and for each the oracle confirms that OPA
accepts the policy without strict mode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

import pyrego
from pyrego.compile.checks import DEPRECATED_BUILTINS, check_modules
from pyrego.parse.parser import parse_module

_HEADER = re.compile(r"^(?:bundle activation failed: )?\d+ errors? occurred:[ \n]")


@dataclass
class Case:
    id: str
    policy: str
    errors: list[str] = field(default_factory=list)
    query: str = "data.p"
    data: dict[str, Any] | None = None
    # OPA lists these errors in an order that varies from run to run (map order)
    unordered: bool = False


def _body(*lines: str) -> str:
    return "package p\n\nr if {\n" + "".join(f"\t{line}\n" for line in lines) + "}\n"


#: What OPA refuses (or accepts: no errors) without strict mode, as it words it.
CASES = [
    Case("referenced-above", _body("x = input.y", "x := 2"), ["x.rego:5: rego_compile_error: var x referenced above"]),
    Case("assigned-above", _body("x := 1", "x := 2", "y := 1", "y := 3"),
         ["x.rego:5: rego_compile_error: var x assigned above", "x.rego:7: rego_compile_error: var y assigned above"]),
    Case("self-reference", _body("x := x"), ["x.rego:4: rego_compile_error: var x referenced above"]),
    Case("some-in-shadows", _body("x := 1", "some x in [1]"), ["x.rego:5: rego_compile_error: var x assigned above"]),
    Case("assign-after-some", _body("some x in [1]", "x := 2"), ["x.rego:5: rego_compile_error: var x declared above"]),
    Case("some-twice", _body("some x", "some x"), ["x.rego:5: rego_compile_error: var x declared above"]),
    Case("arg-redeclared", "package p\n\nf(x) := y if {\n\tx := 1\n\ty := 2\n}\n", ["x.rego:4: rego_compile_error: arg x redeclared"]),
    Case("arg-redeclared-by-some", "package p\n\nf(x) if {\n\tsome x in [1]\n}\n", ["x.rego:4: rego_compile_error: arg x redeclared"]),
    Case("arg-call", "package p\n\nf(g(x)) := 1\n", ["x.rego:3: rego_compile_error: rule arguments cannot contain calls"]),
    Case("assign-to-ref", _body("input.x := 2"), ["x.rego:4: rego_compile_error: cannot assign to ref"]),
    Case("assign-to-number", _body("[x, 1] := [1, 1]"), ["x.rego:4: rego_compile_error: cannot assign to number"]),
    Case("assign-to-string", _body('"a" := 1'), ["x.rego:4: rego_compile_error: cannot assign to string"]),
    Case("assign-to-call", _body("count([1]) := 1"), ["x.rego:4: rego_compile_error: cannot assign to call"]),
    Case("assign-to-comprehension", _body("[1 | true] := 1"), ["x.rego:4: rego_compile_error: cannot assign to arraycomprehension"]),
    Case("negated-assign", _body("not x := 1"), ["x.rego:4: rego_compile_error: cannot assign vars inside negated expression"]),
    Case("called-function-shadowed", _body("plus := 1", "x := 1 + 2", "x == plus"),
         ["x.rego:5: rego_compile_error: called function plus shadowed"]),
    Case("hidden-function", _body("count := 1", "count([1])"), ["x.rego:5: rego_type_error: undefined function count"]),
    Case("declared-unused", _body("some x", "true"), ["x.rego:4: rego_compile_error: declared var x unused"]),
    Case("every-var-unused", _body("every x in [1] {", "\ttrue", "}"), ["x.rego:5: rego_compile_error: declared var x unused"]),
    Case("every-var-twice", _body("every x, x in [1] { x }"), ["rego_compile_error: var x declared above"]),
    Case("comprehension-scope", _body("x := [y | y := 1; y := 2]", "x"), ["x.rego:4: rego_compile_error: var y assigned above"]),
    Case("head-comprehension", "package p\n\nr := [y | y := 1; y := 2]\n", ["x.rego:3: rego_compile_error: var y assigned above"]),
    Case("variables-shadow-roots", _body("input := 1", "data := 2"),
         ["x.rego:4: rego_compile_error: variables must not shadow input (use a different variable name)",
          "x.rego:5: rego_compile_error: variables must not shadow data (use a different variable name)"]),
    Case("rule-shadows-input", "package p\n\ninput := 1\n",
         ["x.rego:3: rego_compile_error: rules must not shadow input (use a different rule name)"]),
    Case("arg-shadows-data", "package p\n\nf(data) := 1\n",
         ["x.rego:3: rego_compile_error: args must not shadow data (use a different variable name)"]),
    Case("duplicate-rego-v1", "package p\n\nimport rego.v1\nimport rego.v1\n\nr := 1\n",
         ["x.rego:4: rego_compile_error: import must not shadow import rego.v1"]),
    Case("duplicate-imports", "package p\n\nimport data.a\nimport data.b as a\nimport future.keywords.in\nimport future.keywords.in\n\nr := 1\n",
         ["x.rego:4: rego_compile_error: import must not shadow import data.a",
          'x.rego:6: rego_compile_error: import must not shadow import future.keywords["in"]']),
    Case("deprecated-call-expression", "package p\n\nr if any([true])\n",
         ["x.rego:3: rego_type_error: deprecated built-in function calls in expression: any"]),
    Case("rule-over-base-data", "package p\n\nr := 1\n", ["x.rego:3: rego_compile_error: conflicting rule for data path p/r found"],
         data={"p": {"r": {"q": 1}}}),
    Case("negated-wildcard", _body("not input.b[_] == 2"), ["x.rego:4: rego_unsafe_var_error: var _ is unsafe"]),
    Case("every-error-of-a-stage", "package p\n\nr if {\n\tinput.x := 2\n}\n\ns if {\n\tinput.y := 3\n}\n",
         ["x.rego:4: rego_compile_error: cannot assign to ref", "x.rego:8: rego_compile_error: cannot assign to ref"]),
    Case("ten-errors-then-the-limit", "package p\n\n" + "".join(f"r{i} if {{ x := 1; x := 2 }}\n" for i in range(10)),
         [f"x.rego:{3 + i}: rego_compile_error: var x assigned above" for i in range(10)] + ["rego_compile_error: error limit reached"]),
    Case("past-the-limit", _body(*[f"input.a{i} := {i}" for i in range(12)]),
         [f"x.rego:{4 + i}: rego_compile_error: cannot assign to ref" for i in range(10)] + ["rego_compile_error: error limit reached"]),
    Case("query-assigned-above", "package p\n", ["1:9: rego_compile_error: var x assigned above"], query="x := 1; x := 2"),
    Case("query-referenced-above", "package p\n", ["1:8: rego_compile_error: var x referenced above"], query="x = 1; x := 2"),
    Case("query-hidden-function", "package p\n", ["1:13: rego_type_error: undefined function count"], query="count := 1; count([1])"),
    # A query is checked after the rules' types are known: a rule called with
    # the wrong number of arguments is reported with its argument types.
    Case("query-function-arity", "package p\n\nf(x) := x + 1\n\ng(x, y) if startswith(x, y)\n",
         ["1:1: rego_type_error: data.p.f: arity mismatch\n\thave: (number, number, number)\n\twant: (number)"],
         query="data.p.f(1, 2, 3)"),
    Case("query-function-arity-nested", "package p\n\ng(x, y) if startswith(x, y)\n",
         ["1:6: rego_type_error: data.p.g: arity mismatch\n\thave: (string, ???)\n\twant: (string, string)"],
         query='x := data.p.g("a")'),
    Case("query-function-arity-any", "package p\n\nh(x) := y if y := x[_]\n",
         ["1:1: rego_type_error: data.p.h: arity mismatch\n\thave: (object<a: number>, number, number)\n\twant: (any)"],
         query='data.p.h({"a": 1}, 1, 2)'),
    Case("function-arity-in-a-rule", "package p\n\nf(x) := x + 1\n\nr := f(1, 2)\n",
         ["x.rego:5: rego_type_error: function data.p.f has arity 1, got 2 arguments"]),
    Case("conflicting-rules", "package p\n\na := 1\n\na contains 2\n\nb(x) := x\n\nb := 2\n",
         ["x.rego:3: rego_type_error: conflicting rules data.p.a found", "x.rego:7: rego_type_error: conflicting rules data.p.b found"],
         unordered=True),
    Case("conflicting-rules-named-by-the-last", "package p\n\nq contains x if x := 1\n\nq[x] := 1 if x := 2\n",
         ["x.rego:3: rego_type_error: conflicting rules data.p.q[x] found"]),
    Case("multiple-defaults", "package p\n\ndefault a := 1\n\ndefault a := 2\n",
         ["x.rego:1: rego_type_error: multiple default rules data.p.a found at x.rego:3, x.rego:5"]),
    Case("rules-in-a-rule", "package p\n\na := 1\n\na.b := 2\n\na.c[x] := 3 if x := 1\n\nb := 1\n\nb.c contains 1\n",
         ["x.rego:3: rego_type_error: rule data.p.a conflicts with:\n  rule data.p.a.b at x.rego:5\n  rule data.p.a.c[x] at x.rego:7",
          "x.rego:9: rego_type_error: rule data.p.b conflicts with:\n  rule data.p.b.c at x.rego:11"], unordered=True),
    Case("every-recursive-rule", "package p\n\na if b\n\nb if a\n\nc if c\n\nf(x) := y if y := f(x)\n",
         ["x.rego:3: rego_recursion_error: rule data.p.a is recursive: data.p.a -> data.p.b -> data.p.a",
          "x.rego:5: rego_recursion_error: rule data.p.b is recursive: data.p.b -> data.p.a -> data.p.b",
          "x.rego:7: rego_recursion_error: rule data.p.c is recursive: data.p.c -> data.p.c",
          "x.rego:9: rego_recursion_error: rule data.p.f is recursive: data.p.f -> data.p.f"], unordered=True),
    # Refs OPA follows to every rule they may read: a variable key, a prefix, data itself.
    Case("recursive-through-object-get-data", "package p\n\nr := object.get(data, [\"p\", \"r\"], 1)\n",
         ["x.rego:3: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("recursive-through-variable-key", "package p\n\nr := data.p[k] if k := \"r\"\n",
         ["x.rego:3: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("recursive-through-data-iteration", "package p\n\nr if data[_]\n",
         ["x.rego:3: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("recursive-through-package-prefix", "package p\n\nr := count(data.p)\n",
         ["x.rego:3: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("recursive-through-comprehension", "package p\n\nr := [v | v := data.p[_]]\n",
         ["x.rego:3: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("recursive-through-import", "package p\n\nimport data.p\n\nr := p\n",
         ["x.rego:5: rego_recursion_error: rule data.p.r is recursive: data.p.r -> data.p.r"]),
    Case("not-recursive-through-import-alias", "package p\n\nimport data.p as me\n\nr := me.q\n\nq := 1\n"),
    Case("not-recursive-into-a-sibling", "package p\n\nr := data.p.q.a\n\nq.a := 1\n\nq.b := r\n"),
    Case("unsafe-vars-of-every-rule", "package p\n\nr if {\n\tx > 1\n}\n\ns if {\n\ty > 1\n\tz > 2\n}\n",
         ["x.rego:4: rego_unsafe_var_error: var x is unsafe", "x.rego:8: rego_unsafe_var_error: var y is unsafe",
          "x.rego:9: rego_unsafe_var_error: var z is unsafe"]),
    Case("unsafe-head-first", "package p\n\nr contains x if {\n\ty > 1\n}\n", ["x.rego:3: rego_unsafe_var_error: var x is unsafe"]),
    Case("unsafe-function-result", "package p\n\nf(a) := b if {\n\tc > a\n}\n", ["x.rego:3: rego_unsafe_var_error: var b is unsafe"]),
    # accepted by OPA, and so by pyrego
    Case("shadowing-in-comprehensions", _body("x := 1", "y := [x | x := 2]", "z := [x | some x in [1]]", "count(y) + count(z) > x")),
    Case("assign-then-unify", _body("x = 1", "y := x", "y")),
    Case("declared-then-used", _body("some i, j", "input.xs[i][j] == 1")),
    Case("wildcards", _body("_ := 1", "_ := 2", "[_, y] := [1, 2]", "y")),
    Case("every-scopes", _body("x := 1", "every x in [1] { x == 1 }", "every y in [1] {", "\tx := 2", "\ty == x", "}")),
    Case("args-and-else", "package p\n\nf(x) := 1 if {\n\tfalse\n} else := x\n\ng([a, b]) := a + b\n\nh({\"a\": x}) := x\n"),
    Case("local-hides-rule-and-import", "package p\n\nimport data.q\n\ns := 1\n\nr if {\n\tq := 1\n\ts := 2\n\tq < s\n}\n"),
    Case("with-values", _body("x := 1", "count([1]) == x with input as x")),
    # A comprehension waits for the outer variables it reads, even one its own expression binds.
    Case("comprehension-reads-what-a-later-expression-binds", _body("v = {k: x | some k, x in v}", "v = input.a")),
    Case("comprehension-reads-what-its-expression-binds", _body("v = [x | x := v[_]]"), ["x.rego:4: rego_unsafe_var_error: var v is unsafe"]),
    # `:=` binds only its left side: a variable on its right is never bound by a
    # later expression that binds the left side (as `=` would let it be).
    Case("assign-right-side-not-bound-through-left", _body("v9 := c5", "v9 = input.s"), ["x.rego:4: rego_unsafe_var_error: var c5 is unsafe"]),
    Case("assign-right-side-in-array", _body("[x, y] := [1, c5]", "y = 2"), ["x.rego:4: rego_unsafe_var_error: var c5 is unsafe"]),
    Case("assign-right-side-in-object", _body('{"a": x} := {"a": c5}', "x = 1"), ["x.rego:4: rego_unsafe_var_error: var c5 is unsafe"]),
    Case("assign-right-side-read-through-another-var", _body("x := c5", "y := x", "y = 1"),
         ["x.rego:4: rego_unsafe_var_error: var c5 is unsafe", "x.rego:4: rego_unsafe_var_error: var x is unsafe"], unordered=True),
    Case("assign-right-side-bound-later", _body("x := c5", "c5 = input.s")),
    Case("assign-right-side-pattern-bound-later", _body("[x, y] := [c5, 1]", "c5 = 2")),
    Case("assign-from-ref-with-output", _body("x := input.a[i]")),
    # Every unsafe variable is named, the left side of a `:=` too, each at its
    # first place; one in a call nested in an expression is at that call (OPA
    # moves the call into an expression of its own), so it follows the
    # expression's other variables on the same line.
    Case("assign-left-side-named-too", _body("x := y"),
         ["x.rego:4: rego_unsafe_var_error: var x is unsafe", "x.rego:4: rego_unsafe_var_error: var y is unsafe"], unordered=True),
    Case("assign-from-call-of-unsafe-var", _body("c := count(b)"),
         ["x.rego:4: rego_unsafe_var_error: var c is unsafe", "x.rego:4: rego_unsafe_var_error: var b is unsafe"]),
    Case("unsafe-var-in-nested-call", _body('path := sprintf("%v", [format_int(j, 10)])', 'msg := {"p": [path]}'),
         ["x.rego:4: rego_unsafe_var_error: var path is unsafe", "x.rego:4: rego_unsafe_var_error: var j is unsafe",
          "x.rego:5: rego_unsafe_var_error: var msg is unsafe"]),
    # A variable unified with an object whose key is unsafe (or a set) is not
    # named; with one whose value is unsafe it is.
    Case("unsafe-var-as-object-key", _body("y := {k: 1}"), ["x.rego:4: rego_unsafe_var_error: var k is unsafe"]),
    Case("unsafe-var-as-object-value", _body('y := {"a": k}'),
         ["x.rego:4: rego_unsafe_var_error: var k is unsafe", "x.rego:4: rego_unsafe_var_error: var y is unsafe"], unordered=True),
    # What an expression that cannot run yet would bind counts as safe for
    # the expressions after it (d, bound by input.a[d], is not named).
    Case("outputs-of-a-waiting-expression", _body("input.a[d] == b", "c = [b, d]"),
         ["x.rego:4: rego_unsafe_var_error: var b is unsafe", "x.rego:5: rego_unsafe_var_error: var c is unsafe"]),
    # A call whose inputs are unsafe binds nothing, not even its refs' variables.
    Case("call-with-unsafe-input-binds-nothing", _body("count([b, input.a[c]], n)", "count(count(c)) = c"),
         ["x.rego:4: rego_unsafe_var_error: var b is unsafe", "x.rego:4: rego_unsafe_var_error: var c is unsafe",
          "x.rego:4: rego_unsafe_var_error: var n is unsafe"], unordered=True),
    # A pattern never binds from a value it cannot match: unsafe, before any type error.
    Case("pattern-against-a-number", _body("[a, b] := 3"),
         ["x.rego:4: rego_unsafe_var_error: var a is unsafe", "x.rego:4: rego_unsafe_var_error: var b is unsafe"], unordered=True),
    Case("pattern-unified-with-a-number", _body("2 = [c, [b]]"),
         ["x.rego:4: rego_unsafe_var_error: var b is unsafe", "x.rego:4: rego_unsafe_var_error: var c is unsafe"], unordered=True),
    # Rego v0 rules read as v1: every rule's v1 check that fails is reported,
    # each else branch's too (it needs its own `if`), without detail lines.
    Case("v1-checks-every-rule", "package p\n\np = 1 { false } else = 2 { true }\n\nq = 1 if { false } else = 2 { true }\n\n"
         "r[x] { x := 1 }\n\nf(x) = y { y := x }\n",
         ["x.rego:3: rego_parse_error: `if` keyword is required before rule body",
          "x.rego:3: rego_parse_error: `if` keyword is required before rule body",
          "x.rego:5: rego_parse_error: `if` keyword is required before rule body",
          "x.rego:7: rego_parse_error: `if` keyword is required before rule body",
          "x.rego:7: rego_parse_error: `contains` keyword is required for partial set rules",
          "x.rego:9: rego_parse_error: `if` keyword is required before function body"]),
    Case("v1-check-one-rule", "package p\n\np { true }\n", ["x.rego:3: rego_parse_error: `if` keyword is required before rule body"]),
    # print's operands: each variable bound by what is written before the call (OPA, print enabled).
    Case("print-unbound", _body("print(zz)"), ["x.rego:4: rego_compile_error: var zz is undeclared"]),
    Case("print-before-binding", _body("print(v)", "input.a[v]"), ["x.rego:4: rego_compile_error: var v is undeclared"]),
    Case("print-after-binding", _body("input.a[v]", "print(v)")),
    Case("print-wildcard", _body("print(input.a[_])"), ["x.rego:4: rego_compile_error: var _ is undeclared"]),
    Case("print-some-declared-only", _body("some x", "print(x)", "x = 1"), ["x.rego:5: rego_compile_error: var x is undeclared"]),
    Case("print-negated-binds-nothing", _body("not input.a[x]", "print(x)"), ["x.rego:5: rego_compile_error: var x is undeclared"]),
    Case("print-call-operand", _body("print(count(y))"), ["x.rego:4: rego_compile_error: var y is undeclared"]),
    Case("print-operands-in-order", _body("print(a1, a0)"),
         ["x.rego:4: rego_compile_error: var a1 is undeclared", "x.rego:4: rego_compile_error: var a0 is undeclared"]),
    Case("print-function-args", "package p\n\nf(a, [b]) if {\n\tprint(a, b, c)\n}\n", ["x.rego:4: rego_compile_error: var c is undeclared"]),
    Case("print-in-else", "package p\n\nr := 1 if {\n\tinput.x\n} else := 2 if {\n\tprint(q)\n}\n",
         ["x.rego:6: rego_compile_error: var q is undeclared"]),
    Case("print-in-every", _body("every k, v in input.a {", "\tprint(k, v, w)", "}"), ["x.rego:5: rego_compile_error: var w is undeclared"]),
    Case("print-in-comprehension-before-binding", _body("x := 1", "v := [z | z := x; print(z, y)]", "y := 2"),
         ["x.rego:5: rego_compile_error: var y is undeclared"]),
    Case("print-in-head-comprehension", "package p\n\nr := [x | x := 1; print(x, y)] if {\n\ty := 2\n}\n",
         ["x.rego:3: rego_compile_error: var y is undeclared"]),
    Case("print-in-query", "package p\n", ["1:7: rego_compile_error: var x is undeclared"], query="print(x); x = 1"),
    Case("print-in-query-comprehension", "package p\n", ["1:17: rego_compile_error: var y is undeclared"], query="x := [1 | print(y)]"),
    Case("print-in-query-after-binding", "package p\n", query="x = 1; print(x)"),
    Case("print-rules-imports-and-roots", "package p\n\nimport input.m as mm\n\ns4 := 1\n\nr if {\n\tprint(s4, mm, data.q, input)\n}\n"),
]


def _ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


def opa_outcome(oracle: Any, case: Case) -> list[str]:
    res = oracle.evaluate({"x.rego": case.policy}, case.query, data=case.data)
    if not res.is_error:
        return []
    entries: list[str] = []
    for line in _HEADER.sub("", res.error_message or "").split("\n"):
        if line.startswith(("\t", "  ")) and entries:
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries


def _entry(e: pyrego.RegoError) -> str:
    loc = e.location
    if loc is not None and not loc.file:  # a query's: OPA's queries have no file name
        return f"{loc.row}:{loc.col}: {e.code}: {e.message}"
    return str(e)


def pyrego_outcome(case: Case, *, strict: bool = False, rego_v0: bool = False) -> list[str]:
    engine = pyrego.Engine()
    engine.set_strict(strict)
    engine.set_rego_v0(rego_v0)
    try:
        if case.data is not None:
            engine.add_data(case.data)
        engine.add_policy("x.rego", case.policy)
        engine.eval_query(case.query)
    except pyrego.RegoError as exc:
        return [_entry(e) for e in getattr(exc, "errors", None) or [exc]]
    return []


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_pyrego_reports(case: Case) -> None:
    assert pyrego_outcome(case) == case.errors  # (pyrego orders by location)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_opa_reports(case: Case, oracle: Any) -> None:
    got = opa_outcome(oracle, case)
    assert (sorted(got) if case.unordered else got) == (sorted(case.errors) if case.unordered else case.errors)


def test_packages_inside_a_rule(oracle: Any) -> None:
    files = {"x.rego": "package p\n\na := 1\n", "y.rego": "package p.a\n\nb := 2\n"}
    want = [
        "x.rego:3: rego_type_error: rule data.p.a conflicts with:\n  rule data.p.a.b at y.rego:3",
        "x.rego:1: rego_type_error: package p.a conflicts with rule a defined at x.rego:3",
    ]
    res = oracle.evaluate(files, "data")
    assert _HEADER.sub("", res.error_message or "") == "\n".join(want)
    engine = pyrego.Engine()
    engine.add_policies(files)
    with pytest.raises(pyrego.RegoTypeError) as info:
        engine.compile()
    assert [str(e) for e in info.value.errors] == want  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(DEPRECATED_BUILTINS))
def test_deprecated_builtins_in_v1(name: str, oracle: Any) -> None:
    """Every builtin OPA deprecates is refused in a v1 module, as OPA refuses it."""
    args = {"net.cidr_overlap": '"1.1.1.0/24", "1.1.1.1"', "set_diff": "{1}, {2}", "re_match": '"a", "a"'}.get(name, "[1]")
    case = Case(name, f"package p\n\nr if {{\n\tx := {name}({args})\n\tx\n}}\n")
    want = [f"x.rego:4: rego_type_error: deprecated built-in function calls in expression: {name}"]
    assert opa_outcome(oracle, case) == want
    assert pyrego_outcome(case) == want


def test_deprecated_builtins_allowed_in_v0() -> None:
    policy = "package p\n\nr { any([true]) }\n"
    assert pyrego_outcome(Case("v0", policy), rego_v0=True) == []
    engine = pyrego.Engine()
    engine.set_rego_v0(True)
    engine.add_policy("x.rego", policy)
    assert engine.eval_rule("data.p.r") is True


def test_a_rule_named_after_a_deprecated_builtin_is_called() -> None:
    case = Case("own-any", "package p\n\nany(x) := x\n\nr if any(true)\n")
    assert pyrego_outcome(case) == []


#: Strict mode's own errors: (policy, errors with --strict); OPA accepts each without it.
STRICT_CASES = [
    Case("unused-imports",
         "package p\n\nimport data.foo\nimport data.bar as baz\nimport data.used\nimport future.keywords.in\nimport rego.v1\n\nr if used.x\n",
         ["x.rego:3: rego_compile_error: import data.foo unused", "x.rego:4: rego_compile_error: import data.bar as baz unused"]),
    Case("import-hidden-by-a-local", "package p\n\nimport data.foo\n\nr if {\n\tfoo := 1\n\tfoo\n}\n",
         ["x.rego:3: rego_compile_error: import data.foo unused"]),
    Case("unused-arguments",
         "package p\n\nf(x) := 1\n\ng(x, y) := y\n\nh(_) := 1\n\nk(x) := x\n\nm(x) if x > 1\n\nn(x) := 1 if {\n\tfalse\n} else := x\n",
         ["x.rego:3: rego_compile_error: unused argument x. (hint: use _ (wildcard variable) instead)",
          "x.rego:5: rego_compile_error: unused argument x. (hint: use _ (wildcard variable) instead)"]),
    Case("unused-assignments",
         "package p\n\nr if {\n\tx := 1\n\ty := 2\n\tz := [x | true]\n\tz\n}\n\ns := x if x := 1\n\nt := [1 | y := 2]\n",
         ["x.rego:5: rego_compile_error: assigned var y unused", "x.rego:12: rego_compile_error: assigned var y unused"]),
    Case("query-unused-assignment", "package p\n", ["1:1: rego_compile_error: assigned var x unused"], query="x := 1"),
    Case("query-deprecated-builtin", "package p\n", ["1:1: rego_type_error: deprecated built-in function calls in expression: any"],
         query="any([true])"),
]


@pytest.mark.parametrize("case", STRICT_CASES, ids=_ids(STRICT_CASES))
def test_strict_mode_reports(case: Case) -> None:
    assert pyrego_outcome(case, strict=True) == case.errors
    assert pyrego_outcome(case) == []


@pytest.mark.parametrize("case", STRICT_CASES, ids=_ids(STRICT_CASES))
def test_opa_accepts_without_strict_mode(case: Case, oracle: Any) -> None:
    assert opa_outcome(oracle, case) == []


def test_strict_mode_gives_v0_modules_the_v1_checks() -> None:
    dup = "package p\n\nimport data.a\nimport data.a\n\nr { data.a }\n"
    assert pyrego_outcome(Case("dup", dup), rego_v0=True) == []
    # both imports bind a, which the rule never reads through them: unused first
    assert pyrego_outcome(Case("dup", dup), rego_v0=True, strict=True) == [
        "x.rego:3: rego_compile_error: import data.a unused",
        "x.rego:4: rego_compile_error: import data.a unused",
    ]
    read = "package p\n\nimport data.a\nimport data.a\n\nr { a }\n"
    assert pyrego_outcome(Case("dup", read), rego_v0=True, strict=True) == [
        "x.rego:4: rego_compile_error: import must not shadow import data.a"
    ]
    shadow = "package p\n\ninput = 1 { true }\n"
    assert pyrego_outcome(Case("input", shadow), rego_v0=True) == []
    assert pyrego_outcome(Case("input", shadow), rego_v0=True, strict=True) == [
        "x.rego:3: rego_compile_error: rules must not shadow input (use a different rule name)"
    ]
    deprecated = "package p\n\nr { re_match(\"a\", \"a\") }\n"
    assert pyrego_outcome(Case("re_match", deprecated), rego_v0=True, strict=True) == [
        "x.rego:3: rego_type_error: deprecated built-in function calls in expression: re_match"
    ]


def test_set_strict_recompiles_and_clones_keep_it() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", "package p\n\nf(x) := 1\n\nr := f(2)\n")
    assert engine.eval_rule("data.p.r") == 1
    engine.set_strict(True)
    with pytest.raises(pyrego.RegoCompileError, match="unused argument x"):
        engine.eval_rule("data.p.r")
    with pytest.raises(pyrego.RegoCompileError, match="unused argument x"):
        engine.clone().eval_rule("data.p.r")
    engine.set_strict(False)
    assert engine.eval_rule("data.p.r") == 1


def test_check_modules_error_limit() -> None:
    modules = [parse_module(_body(*[f"input.a{i} := {i}" for i in range(5)]), "x.rego")]
    with pytest.raises(pyrego.RegoCompileError) as info:
        check_modules(modules, limit=3)
    errors = info.value.errors  # type: ignore[attr-defined]
    assert [e.message for e in errors] == ["cannot assign to ref"] * 3 + ["error limit reached"]
    with pytest.raises(pyrego.RegoCompileError) as info:
        check_modules(modules, limit=0)
    assert len(info.value.errors) == 5  # type: ignore[attr-defined]


#: Queries OPA refuses before evaluating them, and one it fails while evaluating.
QUERY_ERRORS = [
    "x := data.p.b[k]",
    "x := [1",
    'x := {"a": 1}\ny := x + 1',
    "x := data.p.f(1, 2)",
]


@pytest.mark.parametrize("query", QUERY_ERRORS)
def test_query_errors_read_as_opa_words_them(query: str, oracle: Any) -> None:
    # A query has no file name in OPA: its errors start `row:col:` and their
    # location's file is empty.
    policy = "package p\n\nb := 1\n\nf(x) := x\n"
    want = _HEADER.sub("", oracle.evaluate({"x.rego": policy}, query).error_message or "")
    engine = pyrego.Engine()
    engine.add_policy("x.rego", policy)
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_query(query)
    errors = getattr(info.value, "errors", None) or [info.value]
    assert "\n".join(e.format() for e in errors) == want
    location = errors[0].to_dict()["location"]
    assert isinstance(location, dict) and location["file"] == ""
