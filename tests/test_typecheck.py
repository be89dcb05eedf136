"""The type checker (Engine.set_type_check): OPA's rego_type_error, word for word.

Each case holds a policy (and a query) and the errors OPA v1.20.2 reports for
it, written out as OPA prints them (``file:row: code: message`` and the
detail lines). ``test_pyrego_reports`` checks that pyrego, with the type
check on, reports exactly those; ``test_opa_reports`` checks with the OPA
oracle (:mod:`opa_oracle`) that they are what OPA reports, so no expectation
here is pyrego's own invention. Cases with no errors are programs OPA accepts
that a stricter checker could wrongly refuse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import pyrego
from pyrego.typecheck import static_types as T
from pyrego.typecheck.unify import unifies
from test_typecheck_opa import opa_outcome, pyrego_outcome

WANT = "want: (collection: any<string, array[any], object[any: any], set[any]>, n: number)"


@dataclass
class Case:
    id: str
    policy: str
    errors: list[str] = field(default_factory=list)
    query: str = "true"
    code: str = "rego_type_error"


CASES = [
    Case("plus-string", "package p\n\nr if {\n\tx := 1 + \"a\"\n\tx\n}\n",
         ["p.rego:4: rego_type_error: plus: invalid argument(s)\n\thave: (number, string, ???)\n\twant: (x: number, y: number, z: number)"]),
    Case("count-number", "package p\n\nr if count(1) > 0\n",
         ["p.rego:3: rego_type_error: count: invalid argument(s)\n\thave: (number, ???)\n\t" + WANT]),
    Case("assigned-then-compared", "package p\n\nr if {\n\tx := 1\n\tx == \"a\"\n}\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : number\n\tright : string"]),
    Case("object-missing-key", "package p\n\nq := {\"a\": 1}\n\nr if q.b\n",
         ["p.rego:5: rego_type_error: undefined ref: data.p.q.b\n\tdata.p.q.b\n\t         ^\n\t         have: \"b\"\n\t         want (one of): [\"a\"]"]),
    Case("scalar-rule-deref", "package p\n\nq := 1\n\nr if data.p.q.z\n",
         ["p.rego:5: rego_type_error: undefined ref: data.p.q.z\n\tdata.p.q.z\n\t^^^^^^^^\n\thave: number"]),
    Case("array-string-key", "package p\n\nr if {\n\tx := [[1]]\n\tx[_].foo\n}\n",
         ["p.rego:5: rego_type_error: undefined ref: x[_].foo\n\tx[_].foo\n\t     ^\n\t     have: \"foo\"\n\t     want (type): number"]),
    Case("set-string-key", "package p\n\nr if {\n\tx := {1, 2}\n\tx[\"a\"]\n}\n",
         ["p.rego:5: rego_type_error: undefined ref: x.a\n\tx.a\n\t  ^\n\t  have: \"a\"\n\t  want (type): number"]),
    Case("function-argument-type", "package p\n\nf(x) := x + 1\n\nr := f(\"a\")\n",
         ["p.rego:5: rego_type_error: data.p.f: invalid argument(s)\n\thave: (string, ???)\n\twant: (number, number)"]),
    Case("function-nested-arity", "package p\n\nf(x) := x\n\nr := f(1, 2)\n",
         ["p.rego:5: rego_type_error: function data.p.f has arity 1, got 2 arguments"]),
    Case("function-arity", "package p\n\nf(x) := x\n\nr if f(1, 2, 3)\n",
         ["p.rego:5: rego_type_error: function data.p.f has arity 1, got 3 arguments"]),
    Case("builtin-arity", "package p\n\nr := count(1, 2, 3)\n",
         ["p.rego:3: rego_type_error: count: arity mismatch\n\thave: (number, number, number, ???)\n\twant: (collection: any<string, array[any], object[any: any], set[any]>)"]),
    Case("comprehension-element", "package p\n\nr if {\n\txs := [x | some x in [1, 2]]\n\txs[0] == \"a\"\n}\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : number\n\tright : string"]),
    Case("error-inside-comprehension", "package p\n\nr if {\n\txs := [y | some x in [1]; y := upper(x)]\n\txs\n}\n",
         ["p.rego:4: rego_type_error: upper: invalid argument(s)\n\thave: (number, ???)\n\twant: (x: string, y: string)"]),
    Case("partial-set-elements", "package p\n\ns contains x if x := 1\n\nr if s[_] == \"a\"\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : number\n\tright : string"]),
    Case("partial-object-values", "package p\n\no[k] := v if {\n\tk := \"a\"\n\tv := 1\n}\n\nr if o.a == \"x\"\n",
         ["p.rego:8: rego_type_error: match error\n\tleft  : number\n\tright : string"]),
    Case("partial-object-key-type", "package p\n\no[k] := 1 if k := \"a\"\n\nr if o[1]\n",
         ["p.rego:5: rego_type_error: undefined ref: data.p.o[1]\n\tdata.p.o[1]\n\t         ^\n\t         have: 1\n\t         want (type): string"]),
    Case("ref-head-rule", "package p\n\na.b.c := 1\n\nr if a.b.c == \"x\"\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : number\n\tright : string"]),
    Case("some-in-element", "package p\n\nr if {\n\tsome k, x in {\"a\": 1}\n\tk == 1\n\tx\n}\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : string\n\tright : number"]),
    Case("composite-ref-head", "package p\n\nr if [1][\"a\"]\n",
         ["p.rego:3: rego_type_error: undefined ref: [1].a\n\t[1].a\n\t    ^\n\t    have: \"a\"\n\t    want (type): number"]),
    Case("call-ref-head", "package p\n\nr if {\n\tx := [1]\n\ty := count(x).foo\n\ty\n}\n",
         ["p.rego:5: rego_type_error: undefined ref: count(x).foo\n\tcount(x).foo\n\t^^^^^^^^\n\thave: number"]),
    Case("print-arguments", "package p\n\nr if print(count(1))\n",
         ["p.rego:3: rego_type_error: count: invalid argument(s)\n\thave: (number, ???)\n\t" + WANT]),
    Case("with-function-arity", "package p\n\nf(x) := x\n\nr := y if {\n\ty := f(1) with f as startswith\n}\n",
         ["p.rego:6: rego_type_error: data.p.f: arity mismatch\n\thave: (string, string)\n\twant: (any)"] * 2),
    Case("failing-rule-is-any", "package p\n\nq := count(1)\n\nr if q.a.b\n",
         ["p.rego:3: rego_type_error: count: invalid argument(s)\n\thave: (number, ???)\n\t" + WANT]),
    Case("failed-call-operands-before", "package p\n\nc := {\"a\": 1}\n\nr if plus(count(true), c)\n",
         ["p.rego:5: rego_type_error: plus: invalid argument(s)\n\thave: (???, object<a: number>)\n\twant: (x: number, y: number, z: number)",
          "p.rego:5: rego_type_error: count: invalid argument(s)\n\thave: (boolean, ???)\n\t" + WANT]),
    Case("errors-sorted-by-line", "package p\n\nr if {\n\tx := [1, \"a\"]\n\tx[0] == \"a\"\n\tx[1] == 1\n}\n\ns if upper(1)\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : number\n\tright : string",
          "p.rego:6: rego_type_error: match error\n\tleft  : string\n\tright : number",
          "p.rego:9: rego_type_error: upper: invalid argument(s)\n\thave: (number)\n\twant: (x: string, y: string)"]),
    Case("rule-ref-located-at-last-name", "package p\n\nc := 1\n\nr if {\n\tc.a\n}\n\nq if {\n\tc\n}\n",
         ["p.rego:10: rego_type_error: undefined ref: data.p.c.a\n\tdata.p.c.a\n\t^^^^^^^^\n\thave: number"]),
    Case("error-limit", "package p\n\n" + "".join(f"r{i} if upper({i})\n" for i in range(11)),
         [f"p.rego:{3 + i}: rego_type_error: upper: invalid argument(s)\n\thave: (number)\n\twant: (x: string, y: string)" for i in range(10)]
         + ["rego_compile_error: error limit reached"]),
    Case("query-match", "package p\n\nr := 1\n",
         ["1:15: rego_type_error: match error\n\tleft  : number\n\tright : string"], query="x = data.p.r; x = \"a\""),
    Case("query-call-value", "package p\n\nr := 1\n",
         ["1:1: rego_type_error: upper: invalid argument(s)\n\thave: (number, ???)\n\twant: (x: string, y: string)"], query="upper(data.p.r)"),
    Case("some-in-key", "package p\n\nr if {\n\tn := 1\n\tsome v in n\n\tv\n}\n",
         ["p.rego:5: rego_type_error: undefined ref: n[__local1__]\n\tn[__local1__]\n\t^\n\thave: number"]),
    Case("query-some-in-key", "package p\n\nr := 1\n",
         ["1:19: rego_type_error: undefined ref: n[__localq1__]\n\tn[__localq1__]\n\t^\n\thave: number"], query="n := 1; some x in n; x"),
    Case("function-key-with-dot", "package p\n\nfruit[\"color.name\"](f) := f\n\nr := fruit[\"color.name\"](1, 2)\n",
         ["p.rego:5: rego_type_error: function data.p.fruit[\"color.name\"] has arity 1, got 2 arguments"]),
    Case("function-as-value", "package p\n\nf(x) := x + 1\n\nr := data.p.f\n",
         ["p.rego:5: rego_type_error: function data.p.f used as reference, not called\n\tdata.p.f\n\t^^^^^^^^\n\thave: (number) => number"]),
    Case("non-string-object-keys", "package p\n\nr if {\n\tx := {{1: 2}: 1}\n\tx = 1\n}\n",
         ["p.rego:5: rego_type_error: match error\n\tleft  : object<map[1:2]: number>\n\tright : number"]),
    # Programs OPA accepts.
    Case("every-body-unchecked", "package p\n\nr if {\n\tevery x in [1] {\n\t\tx\n\t\tx == \"a\"\n\t}\n}\n"),
    Case("missing-key-with-dynamic-side", "package p\n\nh[\"a\"] := 1\n\nr if {\n\tx := h\n\tx == {\"b\": 1}\n}\n"),
    Case("input-is-any", "package p\n\nr if {\n\tinput.x.y[0] + 1 > input.z\n\tcount(input.s) > 0\n}\n"),
    Case("unknown-data-is-any", "package p\n\nr if data.q.r.s.t == \"x\"\n"),
    Case("query-double-equals-compares", "package p\n\nr := 1\n", query="data.p.r == \"a\""),
    Case("union-types", "package p\n\nv := 1 if input.a\n\nv := \"s\" if not input.a\n\nr if upper(v) == \"S\"\n"),
]


def _ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_pyrego_reports(case: Case) -> None:
    code, errors = pyrego_outcome({"p.rego": case.policy}, case.query)
    assert errors == case.errors
    assert code == (case.code if case.errors else None)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_opa_reports(case: Case, oracle: Any) -> None:
    code, errors = opa_outcome(oracle, {"p.rego": case.policy}, case.query)
    assert errors == case.errors
    assert code == (case.code if case.errors else None)


# ---------------------------------------------------------------- the engine switch


def test_on_by_default() -> None:
    """As OPA: a policy its type checker refuses does not load, unless the check is turned off."""
    engine = pyrego.Engine()
    text = "package p\n\nr if {\n\tx := 1\n\tx == \"a\"\n}\n"
    engine.add_policy("p.rego", text)
    with pytest.raises(pyrego.RegoTypeError, match="match error"):
        engine.compile()
    engine = pyrego.Engine()
    engine.set_type_check(False)
    engine.add_policy("p.rego", text)
    assert engine.eval_query("x = data.p.r")["result"] == []


def test_switching_recompiles() -> None:
    engine = pyrego.Engine()
    engine.set_type_check(False)
    engine.add_policy("p.rego", "package p\n\nr := upper(1)\n")
    assert engine.eval_rule("data.p.r") is pyrego.UNDEFINED
    engine.set_type_check(True)
    with pytest.raises(pyrego.RegoTypeError, match="upper: invalid argument"):
        engine.eval_rule("data.p.r")
    engine.set_type_check(False)
    assert engine.eval_rule("data.p.r") is pyrego.UNDEFINED


def test_error_lists_every_error() -> None:
    engine = pyrego.Engine()
    engine.set_type_check(True)
    engine.add_policy("p.rego", "package p\n\na if upper(1)\n\nb if lower(2)\n")
    with pytest.raises(pyrego.RegoTypeError) as info:
        engine.compile()
    err = info.value
    assert [e.message.split(":")[0] for e in err.errors] == ["upper", "lower"]  # type: ignore[attr-defined]
    assert err is err.errors[0]  # type: ignore[attr-defined]
    assert str(err).startswith("p.rego:3: rego_type_error: upper: invalid argument(s)")


def test_extensions_are_typed_any() -> None:
    engine = pyrego.Engine()
    engine.set_type_check(True)
    engine.add_extension("my.ext", 1, lambda x: x)
    engine.add_policy("p.rego", "package p\n\nr if {\n\tx := my.ext(1)\n\tx.a == upper(x.b)\n}\n")
    assert engine.eval_query("data.p.r")["result"] == []


def test_unsafe_bodies_are_reported_as_unsafe() -> None:
    """OPA checks safety before types: an unsafe body is not type-checked."""
    engine = pyrego.Engine()
    engine.set_type_check(True)
    engine.add_policy("p.rego", "package p\n\nr if {\n\tx == 1 + \"a\"\n}\n")
    with pytest.raises(pyrego.RegoError) as info:
        engine.compile()
    assert info.value.code == "rego_unsafe_var_error"


def test_capabilities_still_decide_undefined_functions() -> None:
    engine = pyrego.Engine()
    engine.set_type_check(True)
    engine.set_capabilities({"builtins": [{"name": "plus"}, {"name": "eq"}, {"name": "assign"}]})
    engine.add_policy("p.rego", "package p\n\nr := upper(\"a\")\n")
    with pytest.raises(pyrego.RegoTypeError, match="undefined function upper"):
        engine.compile()


# ---------------------------------------------------------------- the types themselves


def test_type_texts() -> None:
    obj = T.ObjectType([("a", T.STRING)], (T.STRING, T.ANY))
    assert str(T.new_any(T.STRING, T.NUMBER)) == "any<number, string>"
    assert str(T.ArrayType((), T.ANY)) == "array[any]"
    assert str(obj) == "object<a: string>[string: any]"
    assert str(T.SetType(T.ANY)) == "set[any]"
    assert str(T.ArrayType((T.NUMBER, None))) == "array<number, ???>"
    assert str(T.ObjectType([(T.JNum("1.0"), T.NULL), (None, T.BOOLEAN), (True, T.STRING)])) == "object<<nil>: boolean, true: string, 1.0: null>"


def test_union_keeps_the_superset() -> None:
    assert T.or_(T.NUMBER, T.NUMBER) is T.NUMBER
    assert T.or_(T.ANY, T.NUMBER) is T.ANY
    assert str(T.or_(T.or_(T.STRING, T.NUMBER), T.BOOLEAN)) == "any<boolean, number, string>"
    assert T.or_(T.FunctionType((T.ANY,), T.ANY), T.NUMBER) is None


def test_unification_of_types() -> None:
    assert unifies(T.ANY, T.NUMBER)
    assert not unifies(T.NUMBER, T.STRING)
    assert not unifies(T.NUMBER, None)
    assert unifies(T.ArrayType((T.NUMBER,)), T.ArrayType((), T.ANY))
    assert not unifies(T.ArrayType((T.NUMBER,)), T.ArrayType((T.NUMBER, T.NUMBER)))
    closed = T.ObjectType([("a", T.NUMBER), ("b", T.ANY)])
    assert not unifies(closed, T.ObjectType([("a", T.NUMBER)]))
    assert unifies(T.ObjectType([("a", T.NUMBER)], (T.STRING, T.ANY)), T.ObjectType([("b", T.NUMBER)]))


# ---------------------------------------------------------------- the builtin declarations


def test_signatures_are_current(oracle: Any) -> None:
    """The shipped declarations are OPA's (capabilities file, names from OPA's messages)."""
    import json

    from pyrego.typecheck.signatures_data import SIGNATURES
    from shared_material import CAPABILITIES, need_shared
    from typecheck_signatures import build

    fresh = build(need_shared(*CAPABILITIES))
    shipped = {name: json.loads(json.dumps(list(entry))) for name, entry in SIGNATURES.items()}
    assert shipped == json.loads(json.dumps(fresh))


def test_deeply_nested_comprehensions_do_not_hang_the_checker() -> None:
    """Checking a comprehension's closures and then its type checks every inner
    comprehension twice per level (as OPA's checker does): 60 levels would be
    2^60 body checks. Answers are kept per comprehension and context, and
    comprehensions nested past typecheck.env.MAX_CHECKED_NESTING are not checked."""
    import threading

    outcome: list[object] = []

    def compile_it(depth: int) -> None:
        inner = "1"
        for _ in range(depth):
            inner = f"[x | x := {inner}]"
        engine = pyrego.Engine()
        engine.set_type_check(True)
        engine.add_policy("deep.rego", f"package t\n\np := {inner}\n")
        outcome.append(engine.eval_rule("data.t.p"))

    for depth in (20, 60, 300):
        worker = threading.Thread(target=compile_it, args=(depth,), daemon=True)
        worker.start()
        worker.join(120)  # (a hang, not a speed measure: each takes well under a second)
        assert not worker.is_alive(), f"type checking {depth} nested comprehensions did not finish"
    assert len(outcome) == 3
    assert outcome[0] == [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]


def test_extensions_are_checked_against_their_declared_type() -> None:
    """add_extension(decl=...) gives an extension a type in OPA's form (as a capabilities file does)."""
    decl = {"type": "function", "args": [{"type": "string"}], "result": {"type": "boolean"}}
    e = pyrego.Engine()
    e.set_type_check(True)
    e.add_extension("acme.is_admin", 1, lambda s: s == "root", decl=decl)
    e.add_policy("p.rego", 'package p\n\nr if acme.is_admin("root")\n')
    assert e.eval_rule("data.p.r") is True
    with pytest.raises(pyrego.RegoTypeError) as info:
        e.add_policy("p.rego", "package p\n\nr if acme.is_admin(1)\n")
        e.eval_rule("data.p.r")
    assert info.value.message == "acme.is_admin: invalid argument(s)\n\thave: (number)\n\twant: (string, boolean)"
    with pytest.raises(pyrego.RegoTypeError) as info:
        e.add_policy("p.rego", 'package p\n\nr if {\n\tx := acme.is_admin("a")\n\tx + 1 > 0\n}\n')
        e.eval_rule("data.p.r")
    assert info.value.message.startswith("plus: invalid argument(s)\n\thave: (boolean, number, ???)")
    # Undeclared, an extension takes and returns any.
    e.add_extension("acme.any", 1, lambda s: s)
    e.add_policy("p.rego", "package p\n\nr if acme.any(1) + 1 > 0\n")
    assert e.eval_rule("data.p.r") is True
    for bad in ({"type": "function", "args": [], "result": {"type": "boolean"}}, {"type": "string"}, {"args": []}):
        with pytest.raises(pyrego.ArgumentError):
            e.add_extension("acme.bad", 1, lambda s: s, decl=bad)
