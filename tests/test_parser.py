"""Tests for the Rego lexer and parser (pyrego.parse.lexer, pyrego.parse.parser)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyrego.ast import nodes as ast
from pyrego.errors import RegoParseError
from pyrego.parse.parser import parse_module, parse_query, parse_term
from shared_material import SHARED_DIR

S = ast.Scalar
V = ast.Var


SHARED = SHARED_DIR


def ref(head: str, *path: object) -> ast.Ref:
    return ast.Ref(V(head), tuple(p if isinstance(p, (ast.Var, ast.Ref, ast.Call)) else S(p) for p in path))  # type: ignore[arg-type]


def call(op: str, *args: ast.Term) -> ast.Call:
    return ast.Call(op, tuple(args))


def term(text: str) -> ast.Term:
    return parse_term(text)


def stmt(text: str) -> ast.Statement:
    body = parse_query(text)
    assert len(body) == 1
    return body[0].statement


def module(text: str, **kw: bool) -> ast.Module:
    return parse_module(text, "test.rego", **kw)


def rules(text: str, **kw: bool) -> tuple[ast.Rule, ...]:
    return module("package test\n" + text, **kw).rules


def error(fn: Callable[..., object], *args: Any, **kw: Any) -> Any:
    """The RegoParseError raised by fn(*args, **kw) (checked to have a location)."""
    with pytest.raises(RegoParseError) as info:
        fn(*args, **kw)
    err = info.value
    assert err.code == "rego_parse_error"
    assert err.location is not None
    return err


# ---------------------------------------------------------------- scalars


def test_scalars() -> None:
    assert term("null") == S(None)
    assert term("true") == S(True)
    assert term("false") == S(False)
    assert term('"hi"') == S("hi")
    assert term("`raw \\n`") == S("raw \\n")


@pytest.mark.parametrize(
    "text, value, typ",
    [
        ("1", 1, int),
        ("-1", -1, int),
        ("1.5", 1.5, float),
        ("-1.5e3", -1500, int),
        ("1e400", 10**400, int),
        ("12345678901234567890123456789", 12345678901234567890123456789, int),
        ("0.25", 0.25, float),
        ("1e-3", 0.001, float),
        ("0e5", 0, int),
        (".5", 0.5, float),
        ("- 7", -7, int),
    ],
)
def test_numbers(text: str, value: object, typ: type) -> None:
    t = term(text)
    assert isinstance(t, ast.Scalar)
    assert t.value == value and type(t.value) is typ
    assert t.text == text.replace(" ", "")


def test_number_errors() -> None:
    assert error(parse_term, "01").message == "unexpected number token: expected number without leading zero"
    assert error(parse_term, "1.").message == "expected fraction"
    assert error(parse_term, "1e").message == "expected exponent"
    assert error(parse_term, "12abc").message == "illegal number format"
    assert error(parse_term, "1e99999").message == "number too big"


def test_one_digit_numbers_next_to_other_tokens() -> None:
    # A lone digit is a number unless a name character or '.' follows it
    # (then the lexer's slow path reports OPA's error for the literal).
    assert [e.statement for e in parse_query("x := 1\ny := [2,3]")] == [
        ast.Assign(V("x"), S(1)),
        ast.Assign(V("y"), ast.Array((S(2), S(3)))),
    ]
    assert term("4+5") == call("plus", S(4), S(5))
    assert error(parse_term, "1a").message == "illegal number format"
    assert error(parse_term, "7_").message == "illegal number format"
    assert error(parse_term, "1.x").message == "expected fraction"
    assert error(parse_term, "12a").message == "illegal number format"


def test_braced_body_first_expression_read_once_is_the_same() -> None:
    # The first expression of `if { ... }` is read ahead to tell a body from
    # a set; the body takes that reading: it must equal a fresh one.
    for expr in ['input.a.b == "x"', "x in [1, 2]", "f(input.x) > 1 + 2 * 3", "_ = input.y", "k, v in input.m"]:
        first = parse_module(f"package p\np if {{\n\t{expr}\n\tinput.z\n}}\n", "f.rego").rules[0].body[0]
        second = parse_module(f"package p\np if {{\n\tinput.z\n\t{expr}\n}}\n", "f.rego").rules[0].body[1]
        assert repr(first).replace("row=3", "row=X") == repr(second).replace("row=4", "row=X")


def test_string_escapes() -> None:
    assert term(r'"a\n\t\"\\\/b"') == S('a\n\t"\\/b')
    assert term(r'"\u00e9\ud83d\ude00"') == S("é😀")
    assert term(r'"\ud800"') == S("\ufffd")  # lone surrogate, as Go decodes it
    assert term('"tab\there"') == S("tab\there")  # raw control characters pass without escapes
    err = error(parse_term, r'"a\qb"')
    assert err.message == "illegal escape sequence" and err.location.col == 1
    assert error(parse_term, r'"\u12zz"').message.startswith("illegal string literal")
    assert error(parse_term, r'"\u12"').message == "non-terminated string"  # \u takes 4 characters, as in OPA
    assert error(parse_term, r'"\u00e9' + "\t" + '"').message.startswith("illegal string literal")


def test_raw_string_spans_lines() -> None:
    body = parse_query("x := `a\nb`\ny := 1")
    assert body[0].statement == ast.Assign(V("x"), S("a\nb"))
    assert body[1].location.row == 3


def test_unterminated_strings() -> None:
    err = error(parse_module, 'package p\nx := "abc\n', "f.rego")
    assert (err.message, err.location.row, err.location.col) == ("non-terminated string", 2, 6)
    assert err.location.file == "f.rego"
    assert err.source_line == 'x := "abc'
    assert error(parse_term, "`abc").message == "non-terminated string"


# ---------------------------------------------------------------- composites


def test_collections() -> None:
    assert term("[1, 2,]") == ast.Array((S(1), S(2)))
    assert term("[]") == ast.Array(())
    assert term("{}") == ast.Object(())
    assert term("set()") == ast.SetTerm(())
    assert term("{1, 2}") == ast.SetTerm((S(1), S(2)))
    assert term('{"a": 1, [1]: {2}}') == ast.Object(((S("a"), S(1)), (ast.Array((S(1),)), ast.SetTerm((S(2),)))))
    assert term("{x + 1: y}") == ast.Object(((call("plus", V("x"), S(1)), V("y")),))
    assert term("[1 | 2, 3]") == ast.Array((call("or", S(1), S(2)), S(3)))


def test_comprehensions() -> None:
    t = term("[x | x := input[_]]")
    assert isinstance(t, ast.ArrayCompr) and t.term == V("x")
    assert isinstance(t.body[0].statement, ast.Assign)
    t = term("{x | some x in [1, 2]; x > 1}")
    assert isinstance(t, ast.SetCompr) and len(t.body) == 2
    t = term("{k: v | some k, v in input}")
    assert isinstance(t, ast.ObjectCompr) and (t.key, t.value) == (V("k"), V("v"))
    t = term("[x |\n  x := 1\n  x > 0\n]")
    assert isinstance(t, ast.ArrayCompr) and len(t.body) == 2


def test_refs_and_calls() -> None:
    assert term('a.b[c]["d"][0]') == ref("a", "b", V("c"), "d", 0)
    assert term("input") == ast.Ref(V("input"), ())
    assert term("data.x") == ref("data", "x")
    assert term("[1, 2][0]") == ast.Ref(ast.Array((S(1), S(2))), (S(0),))
    t = term("f(x)[0]")
    assert t == ast.Ref(call("f", V("x")), (S(0),))
    t = term('object.get(input, "a", 1).x')
    assert isinstance(t, ast.Ref) and isinstance(t.head, ast.Call) and t.head.op == "object.get"
    c = term("data.lib.f(x, 1)")
    assert isinstance(c, ast.Call) and c.op == "data.lib.f" and c.args == (V("x"), S(1))
    assert c.op_ref == ref("data", "lib", "f")
    assert term("count([])") == call("count", ast.Array(()))
    # A call is named by its ref's parts joined with dots, as the functions
    # it calls are, however the parts are written.
    c = term('data.p.fruit["color.name"](1)')
    assert isinstance(c, ast.Call) and c.op == "data.p.fruit.color.name"
    assert c.op_ref == ref("data", "p", "fruit", "color.name")
    c = term('fruit["x y"].z(1)')
    assert isinstance(c, ast.Call) and c.op == "fruit.x y.z"
    c = term('object["get"]({}, "a", 1)')
    assert isinstance(c, ast.Call) and c.op == "object.get"
    # whitespace ends a ref: `a [0]` is not `a[0]`
    assert len(parse_query("x\n[0]")) == 2


def test_keywords_in_refs() -> None:
    assert term("input.in") == ref("input", "in")
    assert term("input.if.contains.every") == ref("input", "if", "contains", "every")
    assert term("data.default.not.null.package") == ref("data", "default", "not", "null", "package")
    assert stmt("not.x") == ref("not", "x")


def test_wildcards_are_unique() -> None:
    t = term("[_, _, x[_]]")
    assert isinstance(t, ast.Array)
    names = [t.items[0].name, t.items[1].name, t.items[2].path[0].name]  # type: ignore[union-attr]
    assert len(set(names)) == 3 and all(n.startswith("$wildcard") for n in names)
    m = module("package p\nf(_) := 1 if { x := input[_] } else := 2\ng(_, _) := 3")
    found: set[str] = set()
    for top in m.rules:
        r: ast.Rule | None = top
        while r is not None:
            for a in r.head.args or ():
                assert isinstance(a, ast.Var)
                assert a.name not in found
                found.add(a.name)
            r = r.else_
    assert len(found) == 4  # the else branch gets its own wildcard


def test_parentheses_and_unary_minus() -> None:
    assert term("(1 + 2) * 3") == call("mul", call("plus", S(1), S(2)), S(3))
    assert term("-x") == call("minus", S(0), V("x"))
    assert term("-input.n") == call("minus", S(0), ref("input", "n"))
    assert term("-(1 + 2)") == call("minus", S(0), call("plus", S(1), S(2)))
    assert term("x - -1") == call("minus", V("x"), S(-1))
    assert error(parse_term, '-"a"').message == "unexpected string token: expected number"


# ---------------------------------------------------------------- operators


def test_precedence() -> None:
    assert term("1 + 2 * 3") == call("plus", S(1), call("mul", S(2), S(3)))
    assert term("1 - 2 - 3") == call("minus", call("minus", S(1), S(2)), S(3))
    assert term("a | b & c") == call("or", V("a"), call("and", V("b"), V("c")))
    assert term("a == b | c") == call("equal", V("a"), call("or", V("b"), V("c")))
    assert term("a < b == c") == call("equal", call("lt", V("a"), V("b")), V("c"))
    assert term("x in xs == true") == call("internal.member_2", V("x"), call("equal", V("xs"), S(True)))
    assert term("10 % 3 / 2") == call("div", call("rem", S(10), S(3)), S(2))
    ops = {"!=": "neq", "<=": "lte", ">": "gt", ">=": "gte"}
    for tok, name in ops.items():
        assert term(f"a {tok} b") == call(name, V("a"), V("b"))


def test_membership() -> None:
    assert term("x in xs") == call("internal.member_2", V("x"), V("xs"))
    assert stmt("k, v in {1: 2}") == call("internal.member_3", V("k"), V("v"), ast.Object(((S(1), S(2)),)))
    # inside a list, ',' separates items
    assert term("[k, v in xs]") == ast.Array((V("k"), call("internal.member_2", V("v"), V("xs"))))
    assert term("f(x in y)") == call("f", call("internal.member_2", V("x"), V("y")))


def test_operator_at_line_end_continues() -> None:
    body = parse_query("x := 1 +\n  2\ny := [\n 1,\n 2\n]")
    assert len(body) == 2
    assert body[0].statement == ast.Assign(V("x"), call("plus", S(1), S(2)))


# ---------------------------------------------------------------- expressions


def test_expressions() -> None:
    assert stmt("x := 1") == ast.Assign(V("x"), S(1))
    assert stmt("[a, b] = [1, 2]") == ast.Unify(ast.Array((V("a"), V("b"))), ast.Array((S(1), S(2))))
    e = parse_query("not data.a.b")[0]
    assert e.negated and e.statement == ref("data", "a", "b")
    e = parse_query('data.x with input as {"a": 1} with data.y as 2 with f as g')[0]
    assert [w.target for w in e.with_mods] == [ast.Ref(V("input"), ()), ref("data", "y"), ast.Ref(V("f"), ())]
    assert e.with_mods[1].value == S(2)
    assert e.with_mods[0].location.col == 8


def test_some() -> None:
    assert stmt("some x, y") == ast.SomeVars((V("x"), V("y")))
    assert stmt("some x in xs") == ast.SomeIn(None, V("x"), V("xs"))
    assert stmt("some k, v in xs") == ast.SomeIn(V("k"), V("v"), V("xs"))
    assert stmt("some [a, b] in xs") == ast.SomeIn(None, ast.Array((V("a"), V("b"))), V("xs"))
    e = parse_query("some x in xs with input as 1")[0]
    assert isinstance(e.statement, ast.SomeIn) and len(e.with_mods) == 1
    assert error(parse_query, "not some x").message == "unexpected some keyword: illegal negation of 'some'"
    assert (
        error(parse_query, "some f(x)").message == "unexpected eof token: expected `x in xs` or `x, y in xs` expression"
    )


def test_every() -> None:
    s = stmt("every k, v in input { v > k }")
    assert isinstance(s, ast.Every)
    assert (s.key, s.value, s.domain) == (V("k"), V("v"), ast.Ref(V("input"), ()))
    assert s.body[0].statement == call("gt", V("v"), V("k"))
    s = stmt("every x in [1] { x }")
    assert isinstance(s, ast.Every) and s.key is None
    assert error(parse_query, "every x in xs").message == "unexpected eof token: missing body"
    assert error(parse_query, "every [x] in xs { x }").message.endswith("expected value to be a variable")


def test_template_strings() -> None:
    t = term('$"Hello {input.name}, {1}!"')
    assert t == ast.TemplateString(("Hello ", ref("input", "name"), ", ", S(1), "!"))
    t = term('$"\\{literal} {x} }"')
    assert t == ast.TemplateString(("{literal} ", V("x"), " }"))
    t = term("$`multi\nline {x + 1}\\{`")
    assert t == ast.TemplateString(("multi\nline ", call("plus", V("x"), S(1)), "{"), raw=True)
    t = term('$"{ {"a": 1}.a } {$"{y}"}"')
    assert isinstance(t, ast.TemplateString) and isinstance(t.parts[2], ast.TemplateString)
    assert term('$""') == ast.TemplateString(())
    assert error(parse_term, '$"{x := 1}"').message == "unexpected assignment (':=') in template-string expression"
    assert error(parse_term, '$"{not x}"').message == "unexpected negation ('not') in template-string expression"
    assert error(parse_term, '$"{x"').message == "non-terminated string"
    assert error(parse_term, '$"{some x in y}"').message == "unexpected 'some' in template-string expression"


def test_template_string_with_modifiers() -> None:
    # `{t with ...}` is the first (only) element of `[v | v := t with ...]`:
    # the modifiers apply to that expression alone, undefined stays undefined.
    t = term('$"Hello {input.name with input as {"name": "world"}}!"')
    assert isinstance(t, ast.TemplateString) and t.parts[0] == "Hello " and t.parts[2] == "!"
    part = t.parts[1]
    assert isinstance(part, ast.Ref) and part.path == (S(0),)
    compr = part.head
    assert isinstance(compr, ast.ArrayCompr) and isinstance(compr.term, ast.Var)
    (e,) = compr.body
    assert e.statement == ast.Assign(compr.term, ref("input", "name"))
    assert [(w.target, w.value) for w in e.with_mods] == [(ref("input"), ast.Object(((S("name"), S("world")),)))]
    assert compr.term.name.startswith("$")  # never a name the policy can use
    t = term('$"{f(1) with f as g with input.a as 2} {x}"')
    assert isinstance(t, ast.TemplateString) and len(t.parts) == 3 and t.parts[2] == V("x")
    part = t.parts[0]
    assert isinstance(part, ast.Ref) and isinstance(part.head, ast.ArrayCompr)
    assert len(part.head.body[0].with_mods) == 2
    t = term('$`raw {input.n == 3 with input as {"n": 3}}`')
    assert isinstance(t, ast.TemplateString) and t.raw
    assert error(parse_term, '$"{x with input}"').message == "unexpected } token: expected as keyword"
    assert error(parse_term, '$"a\\q"').message == "illegal escape sequence"


def test_query_separators_and_locations() -> None:
    body = parse_query("data.generated.p = x; y := 1\n  not z", "q.rego")
    assert len(body) == 3
    assert [(e.location.row, e.location.col) for e in body] == [(1, 1), (1, 23), (2, 3)]
    assert body[2].negated
    assert body[0].location.file == "q.rego"
    assert parse_query("") == ()
    assert parse_query("# only a comment\n") == ()
    assert len(parse_query("x y")) == 2  # like OPA, top-level statements need no separator
    err = error(parse_query, "x := )")
    assert (err.message, err.location.row, err.location.col) == ("unexpected ) token", 1, 6)
    assert error(parse_query, "package p").message == "expected body but got package"


def test_parse_term_rejects_non_terms() -> None:
    assert error(parse_term, "x := 1").message == "expected term"
    assert error(parse_term, "1; 2").message == "expected exactly one term"


# ---------------------------------------------------------------- modules and rules (v1)


def test_package_and_imports() -> None:
    m = module(
        'package a.b["c"]\nimport data.x.y\nimport data.x as z\nimport input.foo\n'
        "import rego.v1\nimport future.keywords\nimport future.keywords.in\nimport future.keywords.or"
    )
    assert m.package == ref("data", "a", "b", "c")
    assert m.file == "test.rego" and m.rego_v1
    assert [i.path for i in m.imports][:3] == [ref("data", "x", "y"), ref("data", "x"), ref("input", "foo")]
    assert [i.alias for i in m.imports][:3] == [None, "z", None]
    assert len(m.imports) == 7
    assert m.imports[1].location.row == 3
    assert module("package p").package == ref("data", "p")
    # `import input` / `import data` alone are allowed and change nothing
    for text in ("import input", "import data", "import input as x", "import data as d"):
        for v1 in (True, False):
            m = module(f"package p\n{text}\np = 1", rego_v1=v1)
            assert len(m.imports) == 1 and len(m.rules) == 1
    assert module("package p\nimport input").imports[0].path == ast.Ref(V("input"), ())


@pytest.mark.parametrize("v1", [True, False], ids=["v1", "v0"])
@pytest.mark.parametrize("first", [True, False], ids=["rego-first", "future-first"])
@pytest.mark.parametrize("kw", ["", ".in", ".if", ".contains", ".every"])
def test_rego_v1_import_with_future_keywords(kw: str, first: bool, v1: bool) -> None:
    imports = ["import rego.v1", f"import future.keywords{kw}"]
    if not first:
        imports.reverse()
    text = "package p\n" + "\n".join(imports) + "\nr contains x if { some x in [1]; every y in [x] { y == 1 } }"
    m = module(text, rego_v1=v1)
    assert m.rego_v1 and len(m.imports) == 2
    (r,) = m.rules
    assert r.head.key == V("x")
    # ... and the v1 rules stay on in v0 whichever import came last
    err = error(parse_module, "\n".join(text.splitlines()[:3]) + "\np { true }", rego_v1=v1)
    assert err.message == "`if` keyword is required before rule body"


def test_package_and_import_errors() -> None:
    err = error(parse_module, "package foo.")
    assert err.message == "unexpected eof token: expected identifier"
    assert error(parse_module, "package foo[x]").message == "unexpected var token: expecting string"
    assert error(parse_module, "p := 1").message == "package expected"
    assert error(parse_module, "").message == "empty module"
    assert error(parse_module, "package a\npackage b").message == "unexpected package"
    err = error(parse_module, "package a\nimport foo.bar")
    assert err.message.startswith("unexpected import path, must begin with one of: {data, future, input, rego}")
    assert (err.location.row, err.location.col) == (2, 8)
    assert error(parse_module, "package a\nimport rego.v2").message == "invalid import `rego.v2`, must be `rego.v1`"
    assert error(parse_module, "package a\nimport future.x").message == "invalid import, must be `future.keywords`"
    assert (
        error(parse_module, "package a\nimport future.keywords.nope").message
        == "unexpected keyword, must be one of [and contains every if in not or]"
    )
    assert (
        error(parse_module, "package a\nimport data.foo.if").message
        == "unexpected import path, must not end with a keyword, got: if (hint: import a different path or use an alias)"
    )


def _head(r: ast.Rule) -> tuple[object, ...]:
    h = r.head
    return (h.ref, h.key, h.value, h.args, h.assign)


def test_constant_and_if_rules() -> None:
    r1, r2, r3, r4 = rules("p := 1\nq = 2\nr if { true }\ns if input.x == 1")
    assert _head(r1) == (ref("p"), None, S(1), None, True) and r1.body == ()
    assert _head(r2) == (ref("q"), None, S(2), None, False)
    assert _head(r3) == (ref("r"), None, S(True), None, False)
    assert r3.body[0].statement == S(True)
    assert r4.body[0].statement == call("equal", ref("input", "x"), S(1))
    assert r4.module_file == "test.rego"
    assert (r3.location.row, r3.location.col) == (4, 1)


def test_rule_kinds() -> None:
    rs = rules(
        "p := v if { v := 1 }\n"
        "default d := false\n"
        "s contains x if { x := 1 }\n"
        "t contains 1\n"
        "o[k] := v if { k := 1; v := 2 }\n"
        "a.b[c].d := v if { c := 1; v := 2 }\n"
        "q[x] if { x := 1 }\n"
        "f(x, y) := z if { z := x + y }\n"
        "g(x) if { x }\n"
        "default h(_) := 0\n"
    )
    p, d, s, t, o, ab, q, f, g, h = rs
    assert _head(p) == (ref("p"), None, V("v"), None, True)
    assert d.default and _head(d) == (ref("d"), None, S(False), None, True) and d.body == ()
    assert _head(s) == (ref("s"), V("x"), None, None, False)
    assert _head(t) == (ref("t"), S(1), None, None, False) and t.body == ()
    assert _head(o) == (ref("o", V("k")), None, V("v"), None, True)
    assert _head(ab) == (ref("a", "b", V("c"), "d"), None, V("v"), None, True)
    assert _head(q) == (ref("q", V("x")), None, S(True), None, False)
    assert _head(f) == (ref("f"), None, V("z"), (V("x"), V("y")), True)
    assert _head(g) == (ref("g"), None, S(True), (V("x"),), False)
    assert h.default and h.head.args is not None and len(h.head.args) == 1


def test_rules_from_bodies() -> None:
    f, o, s = rules("f(x) = x\no[1] = 2\ns[3]", rego_v1=False)
    assert _head(f) == (ref("f"), None, V("x"), (V("x"),), False)
    assert _head(o) == (ref("o", 1), None, S(2), None, False)
    assert _head(s) == (ref("s"), S(3), None, None, False)


def test_else_chains() -> None:
    (r,) = rules("p := 1 if { false } else := 2 if { false } else := 3")
    assert r.else_ is not None and r.else_.else_ is not None and r.else_.else_.else_ is None
    assert r.else_.head.value == S(2) and r.else_.head.assign
    assert r.else_.else_.head.value == S(3) and r.else_.else_.body == ()
    assert r.else_.head.ref == ref("p")
    assert (r.else_.location.row, r.else_.location.col) == (2, 21)
    (r,) = rules("p := 1 if { false } else if { true }")
    assert r.else_ is not None and r.else_.head.value == S(True)
    (r,) = rules("f(x) := 1 if { x } else := 2")
    assert r.else_ is not None and r.else_.head.args == (V("x"),)


def test_multiple_bodies() -> None:
    a, b = rules("p if { input.a } { input.b }")
    assert a.head.ref == b.head.ref == ref("p")
    assert (b.location.row, b.location.col) == (2, 18)


@pytest.mark.parametrize(
    "src, message, row, col",
    [
        ("p { true }", "`if` keyword is required before rule body", 2, 1),
        ("f(x) { x }", "`if` keyword is required before function body", 2, 1),
        ("p[x] if { x := 1 }\nq[x] { x := 1 }", "`if` keyword is required before rule body", 3, 1),
        ("s[x]", "`contains` keyword is required for partial set rules", 2, 1),
        ("a.b.c", "rule must have value assignment and/or body declaration", 2, 1),
        ("p", "var cannot be used for rule name", 2, 1),
        ("count(x)", "rule name conflicts with built-in function", 2, 1),
        ("x == 1", "rule name conflicts with built-in function", 2, 1),
        ("p := 1; q := 2", "multiple expressions cannot be used for rule head", 2, 1),
        ("p := 1 with input as 2", "expressions using with keyword cannot be used for rule head", 2, 1),
        ("not p", "negated expressions cannot be used for rule head", 2, 1),
        ("contains := 1", "contains keyword cannot be used for rule name", 2, 1),
        ("default p := x", "illegal default rule (value cannot contain var)", 2, 1),
        ("default p := input.x", "illegal default rule (value cannot contain ref)", 2, 1),
        ("default f(1) := 1", "illegal default rule (arguments cannot contain number)", 2, 1),
        ("p[x] if { x := 1 } else := 2", "else keyword cannot be used on rules with variables in head", 2, 20),
        ("p contains 1 if { true } else := 2", "else keyword cannot be used on multi-value rules", 2, 26),
        ("p := 1 if { true } else := 2 { true } { true }", "expected else keyword", 2, 39),
        ("p := [x | ]", "found empty body", 2, 11),
        ("p := [x | y z]", "unexpected identifier token: expected \\n or ; or ]", 2, 13),
        ("p if { x := 1 y := 2 }", "unexpected identifier token: expected \\n or ; or }", 2, 15),
        ("p := {1, 2 3}", 'unexpected number token: expected "," or "}"', 2, 12),
        ("p := [1 2]", 'unexpected number token: expected "," or "]"', 2, 9),
        ('p := {"a": 1, "b" 2}', "unexpected number token: non-terminated object", 2, 12),  # sic, as OPA
        ("p := f(1 2)", 'unexpected number token: expected "," or ")"', 2, 10),
        ("p := (1 + 2", "non-terminated expression", 2, 11),
        ("p := input. x", "unexpected whitespace token: expected identifier", 2, 12),
        ("p := x[1 2]", "unexpected number token: expected [", 2, 10),
        ('p := "a".b', "illegal ref (head cannot be string)", 2, 6),
        ("p := @", "illegal token", 2, 6),
        ("p := 1 !", "illegal ! character", 2, 8),
        ("p := 1 $", "illegal $ character", 2, 8),
        ("p := 1 ;", "unexpected eof token", 2, 8),
        ("p := \x00", "illegal null character", 2, 6),
        ("# \x00", "illegal null character", 2, 1),
        ("p := 1\ufeff", "illegal byte-order mark", 2, 7),
        ("p := {x | }", "found empty body", 2, 11),
        ("p if { every x in xs }", "unexpected } token: missing body", 2, 22),
    ],
)
def test_errors(src: str, message: str, row: int, col: int) -> None:
    err = error(parse_module, "package test\n" + src, "e.rego")
    assert (err.message, err.location.row, err.location.col) == (message, row, col)
    assert err.location.file == "e.rego"
    assert err.source_line == ("package test\n" + src).split("\n")[row - 1]
    assert err.to_dict()["code"] == "rego_parse_error"


def test_error_format_has_caret() -> None:
    err = error(parse_module, "package p\nx := [1 2]", "p.rego")
    expected = 'p.rego:2: rego_parse_error: unexpected number token: expected "," or "]"\n\tx := [1 2]\n\t        ^'
    assert err.format() == expected


def test_byte_order_mark_and_crlf() -> None:
    m = module("\ufeffpackage p\r\n\r\np := 1\r\n")
    assert m.rules[0].location.row == 3 and m.rules[0].head.value == S(1)


def test_nesting_limit() -> None:
    for opener, closer in (("[", "]"), ("(", ")"), ("{", "}"), ("[x | ", "]"), ('$"{', '}"')):
        deep = "package p\nx := " + opener * 3000 + "1" + closer * 3000
        assert "max parsing recursion depth exceeded" in error(parse_module, deep).message
    ok = "package p\nx := " + "[" * 900 + "1" + "]" * 900
    assert module(ok).rules[0].head.value is not None
    # Else chains are no nesting: any length parses (as in OPA).
    chain = "package p\np := 1 if { false } " + "else := 1 if { false } " * 30000
    rule, branches = module(chain).rules[0], 0
    while rule.else_ is not None:
        rule, branches = rule.else_, branches + 1
    assert branches == 30000


def test_backtracking_stays_linear() -> None:
    # Each level makes the parser retry a comprehension or a collection; the
    # memoised terms keep this linear instead of exponential.
    cases = [
        "[" * 25 + "1" + "] + 1" * 25,
        "[" * 25 + "1" + "] | 1" * 25,
        '{"a": ' * 25 + "1 | " * 25 + "}" * 25,
        "{1 | " * 25 + "1, 2" + "}" * 25,
    ]
    for c in cases:
        start = time.perf_counter()
        try:
            parse_query("x := " + c)
        except RegoParseError:
            pass
        assert time.perf_counter() - start < 2


# ---------------------------------------------------------------- and / or / body not (OPA 1.20)

LOGIC = "package p\nimport future.keywords.and\nimport future.keywords.or\nimport future.keywords.not\n"


def _logic_body(expr: str, header: str = LOGIC) -> ast.Body:
    (r,) = parse_module(header + "p if {\n\t" + expr + "\n}\n").rules
    return r.body


def _closure_op(e: ast.Expr) -> tuple[str, ast.Body, ast.Body]:
    """Undo the desugaring of `A or B` / `A and B` (see pyrego.parse.logic)."""
    s = e.statement
    assert isinstance(s, ast.Ref) and isinstance(s.head, ast.Call) and s.path == (S(True),)
    lhs, rhs = s.head.args
    assert isinstance(lhs, ast.SetCompr) and isinstance(rhs, ast.SetCompr)
    return s.head.op, lhs.body, rhs.body


def test_logical_or_and_precedence() -> None:
    (e,) = _logic_body("input.a or input.b and input.c")
    op, lhs, rhs = _closure_op(e)
    assert op == "or" and lhs[0].statement == ref("input", "a")
    op2, l2, r2 = _closure_op(rhs[0])
    assert op2 == "and" and (l2[0].statement, r2[0].statement) == (ref("input", "b"), ref("input", "c"))
    (e,) = _logic_body("a or b or c")  # left-associative
    op, lhs, rhs = _closure_op(e)
    assert _closure_op(lhs[0])[0] == "or" and rhs[0].statement == V("c")
    (e,) = _logic_body("(a or b) and c")
    assert _closure_op(e)[0] == "and" and _closure_op(_closure_op(e)[1][0])[0] == "or"


def test_logical_operands() -> None:
    (e,) = _logic_body("{ some x in input.xs; x > 1 } or input.d")  # explicit body operand
    _, lhs, _ = _closure_op(e)
    assert len(lhs) == 2 and isinstance(lhs[0].statement, ast.SomeIn)
    (e,) = _logic_body("not x or y")
    _, lhs, _ = _closure_op(e)
    assert lhs[0].negated and lhs[0].statement == V("x")
    (e,) = _logic_body("x\n\tor y")  # a line starting with `or` continues the expression
    assert _closure_op(e)[0] == "or"
    (e,) = _logic_body("a or b with input as 1")  # a trailing `with` covers the whole expression
    assert len(e.with_mods) == 1 and _closure_op(e)[0] == "or"
    (e,) = _logic_body("x := or({1}, {2})")  # `or(` is still the set-union builtin
    assert e.statement == ast.Assign(V("x"), call("or", ast.SetTerm((S(1),)), ast.SetTerm((S(2),))))
    assert _logic_body("input.or")[0].statement == ref("input", "or")


def test_body_not() -> None:
    (e,) = _logic_body("not input.x + input.y == input.z")
    # the nested call stays inside the negation: not [true | <expr>][0]
    assert e.negated and isinstance(e.statement, ast.Ref) and isinstance(e.statement.head, ast.ArrayCompr)
    assert e.statement.head.body[0].statement == call(
        "equal", call("plus", ref("input", "x"), ref("input", "y")), ref("input", "z")
    )
    (e,) = _logic_body("not { x := input.a; x > 1 }")
    assert e.negated and len(e.statement.head.body) == 2  # type: ignore[union-attr]
    (e,) = _logic_body("not input.x")  # nothing OPA would evaluate first: a plain negation means the same
    assert e == ast.Expr(ref("input", "x"), negated=True)
    (e,) = _logic_body("not input.x + 1 == 2", "package p\n")  # classic `not` without the import
    assert e.negated and isinstance(e.statement, ast.Call) and e.statement.op == "equal"


@pytest.mark.parametrize(
    "expr, message",
    [
        ("a with input as v or b", "`with` modifier is not allowed on operand of `or`"),
        ('{"a": 1} and z', "operand of `and` cannot begin with `{` unless the braces hold a body"),
        ("z and {}", "found empty body"),
        ("a or ()", "empty parenthesized group"),
        ("a and (b or c", "expected ) to close parenthesized group"),
        ("f(x or y)", 'unexpected or keyword: expected "," or ")"'),
        ("some x in xs and y", "unexpected and keyword"),
        ("not not x", "unexpected not keyword"),
    ],
)
def test_logical_errors(expr: str, message: str) -> None:
    assert message in error(_logic_body, expr).message


def test_logical_keywords_need_imports() -> None:
    assert "unexpected identifier token" in error(_logic_body, "a or b", "package p\n").message
    assert "unexpected identifier token" in error(_logic_body, "a or b", "package p\nimport rego.v1\n").message
    (e,) = _logic_body("a or b", "package p\nimport future.keywords\n")
    assert _closure_op(e)[0] == "or"
    assert (
        error(parse_module, "package p\nimport future.keywords.xor").message
        == "unexpected keyword, must be one of [and contains every if in not or]"
    )


def test_rule_head_rejects_logical_expressions() -> None:
    err = error(parse_module, LOGIC + "p := x or y")
    assert err.message == "expression cannot be used for rule head"


# ---------------------------------------------------------------- OPA quirks kept on purpose


def test_opa_quirks() -> None:
    # A comprehension's head is a plain term in OPA (issue #4215), so this is an error.
    err = error(parse_query, "xs := [x * 2 | some x in input]")
    assert err.message == "unexpected some keyword"
    # `p if {}` has a one-expression body: the empty object (always true).
    (r,) = rules("p if {}")
    assert r.body[0].statement == ast.Object(())
    # ... and `p if not {x}` negates the set `{x}` (without `import future.keywords.not`).
    (r,) = rules("p if not { true }")
    assert r.body[0].negated and r.body[0].statement == ast.SetTerm((S(True),))
    # An operator at the start of the next line still continues the expression.
    assert parse_query("x := 1\n-1")[0].statement == ast.Assign(V("x"), call("minus", S(1), S(1)))
    # `f()` without arguments is a plain rule, not a function.
    (r,) = rules("f() := 1")
    assert r.head.args is None and r.head.ref == ref("f")
    # `x + 1 = 2` at the top of a module defines a function named `plus`.
    (r,) = rules("x + 1 = 2", rego_v1=False)
    assert r.head.ref == ref("plus") and r.head.args == (V("x"), S(1))


# ---------------------------------------------------------------- Rego v0


def test_v0_rules() -> None:
    rs = rules(
        "p { true }\n"
        "s[x] { x := 1 }\n"
        'o[k] = v { k := "a"; v := 1 }\n'
        "f(x) = y { y := x }\n"
        "g(x) { x }\n"
        "default d = false\n"
        "e = 1 { false } else = 2 { true } else = 3\n"
        "c = 7\n",
        rego_v1=False,
    )
    p, s, o, f, g, d, e, c = rs
    assert _head(p) == (ref("p"), None, S(True), None, False)
    assert _head(s) == (ref("s"), V("x"), None, None, False)
    assert _head(o) == (ref("o", V("k")), None, V("v"), None, False)
    assert _head(f) == (ref("f"), None, V("y"), (V("x"),), False)
    assert _head(g) == (ref("g"), None, S(True), (V("x"),), False)
    assert d.default and d.head.value == S(False)
    assert e.else_ is not None and e.else_.head.value == S(2) and e.else_.else_ is not None
    assert e.else_.else_.head.value == S(3)
    assert _head(c) == (ref("c"), None, S(7), None, False)
    assert not module("package p", rego_v1=False).rego_v1


def test_v0_keywords_need_imports() -> None:
    # without imports, `if`/`contains`/`in` are plain names in v0
    (r,) = rules("contains := 1", rego_v1=False)
    assert r.head.ref == ref("contains")
    err = error(parse_module, "package p\np { 1 in [1] }", rego_v1=False)
    assert err.message == "unexpected identifier token: expected \\n or ; or }"
    (r,) = rules("import future.keywords.in\np { 1 in [1] }", rego_v1=False)
    assert r.body[0].statement == call("internal.member_2", S(1), ast.Array((S(1),)))
    (r,) = rules("import future.keywords.every\np { every x in [1] { x } }", rego_v1=False)
    assert isinstance(r.body[0].statement, ast.Every)
    (r,) = rules("import future.keywords\np contains x if { x := 1 }", rego_v1=False)
    assert r.head.key == V("x")
    # rego.v1 turns the v1 rules on
    m = module("package p\nimport rego.v1\np contains 1 if { true }", rego_v1=False)
    assert m.rego_v1
    err = error(parse_module, "package p\nimport rego.v1\np { true }", rego_v1=False)
    assert err.message == "`if` keyword is required before rule body"


def test_v0_quirks_follow_opa() -> None:
    # `p.q { }` is the partial set p containing "q" in v0
    (r,) = rules("p.q { true }", rego_v1=False)
    assert (r.head.ref, r.head.key, r.head.value) == (ref("p"), S("q"), None)
    # statements may share a line
    assert len(rules("p = 1 q = 2", rego_v1=False)) == 2


@pytest.mark.skipif(SHARED is None or not (SHARED / "bench" / "aci").is_dir(), reason="shared ACI policies not found")
def test_aci_policies_parse_in_v0() -> None:
    assert SHARED is not None
    files = sorted((SHARED / "bench" / "aci").glob("*.rego"))
    assert len(files) == 3
    texts = [(f.name, f.read_text()) for f in files]
    mods = [parse_module(t, name, rego_v1=False) for name, t in texts]
    by_name = {m.file: m for m in mods}
    fw = by_name["framework.rego"]
    assert fw.package == ref("data", "framework")
    # `errors["..."] { ... }` are partial sets in v0
    errors = [r for r in fw.rules if r.head.ref == ref("errors")]
    assert errors and all(r.head.key is not None and r.head.value is None for r in errors)
    assert sum(len(m.rules) for m in mods) > 200
    best = min(_timed(lambda: [parse_module(t, n, rego_v1=False) for n, t in texts]) for _ in range(5))
    assert best < 1.0, best  # typically ~40 ms; generous for loaded CI machines


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# ---------------------------------------------------------------- annotations


def test_metadata_annotations() -> None:
    m = module(
        "# METADATA\n# title: The package\n# custom:\n#  on: yes\n#  when: 2020-01-01\npackage p\n\n"
        "# METADATA\n# title: Rule p\n# entrypoint: true\np := 1\n\n"
        "# a plain comment\n# METADATA\n# description: q\nq := 2\n"
    )
    a, b, c = m.annotations
    assert a.scope == "package" and a.data["title"] == "The package"
    assert a.data["custom"] == {"on": "yes", "when": "2020-01-01T00:00:00Z"}  # YAML 1.2 scalars; dates as OPA gives them
    assert (a.location.row, a.location.col) == (1, 1)
    assert b.scope == "document" and b.data["entrypoint"] is True
    assert c.scope == "rule" and c.data == {"description": "q"} and c.location.row == 14


@pytest.mark.parametrize(
    "src, message",
    [
        ("# METADATA\n# title: [\npackage p", "yaml: line"),
        ("# METADATA\npackage p", "expected METADATA block, found whitespace"),
        ("# METADATA\n# scope: rule\npackage p", "annotation scope 'rule' must be applied to rule (have package)"),
        ("# METADATA\n# scope: nope\npackage p", "invalid annotation scope 'nope'"),
        ("# METADATA\n# - 1\npackage p", "yaml: unmarshal errors"),
        ("package p\n# METADATA\n# title: x\nimport data.x", "invalid annotation scope 'import'"),
        (
            "package p\n# METADATA\n# entrypoint: true\n# scope: rule\np := 1",
            "annotation entrypoint applied to non-document or package scope 'rule'",
        ),
    ],
)
def test_metadata_errors(src: str, message: str) -> None:
    assert error(parse_module, src).message.startswith(message)


# ---------------------------------------------------------------- OPA conformance modules


@pytest.mark.skipif(
    SHARED is None or not (SHARED / "opa-conformance" / "v1").is_dir(), reason="no OPA conformance cases"
)
def test_conformance_modules_parse() -> None:
    assert SHARED is not None
    parsed = 0
    failures: list[str] = []
    unexpected_success: list[str] = []
    for path in sorted((SHARED / "opa-conformance" / "v1").glob("*/*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for case in doc.get("cases") or []:
            expect_error = case.get("want_error_code") == "rego_parse_error"
            for i, text in enumerate(case.get("modules") or []):
                try:
                    parse_module(text, f"test-{i}.rego")
                    parsed += 1
                    if expect_error:
                        unexpected_success.append(case.get("note", ""))
                except RegoParseError as e:
                    if not expect_error:
                        failures.append(f"{path.name} {case.get('note')}: {e.message}")
            parse_query(case["query"])
            if "input_term" in case:
                parse_term(case["input_term"])
    print(f"\nconformance modules parsed: {parsed}; failures: {len(failures)}")
    assert parsed > 1400
    assert failures == []


# ---------------------------------------------------------------- robustness (hypothesis)

_SEEDS = [
    'package p\nimport rego.v1\n\nallow if {\n\tsome x in input.xs\n\tx.role == "admin"\n}\n',
    'package p\ndefault d := {"a": [1, 2.5, null]}\nf(x) := y if { y := x * 2 } else := 0\n',
    'package p\ns contains v if { v := [k | some k, _ in input][_] }\no[k] := v if { v := $"{k}" ; k := 1 }\n',
    "package p\np { not q with input as {1, 2} }\nq[x] = y { x := `raw`; y := {z | z := x} }\n",
    "package p\n# METADATA\n# title: t\nr := every x in [1] { x > 0 }\nt := -input.n + 1e3 - 0.5\n",
    LOGIC + "p if {\n\tinput.a or input.b and not input.c\n\t{ some x in input.xs; x > 1 } or (input.d)\n}\n",
]
_FRAGMENTS = list('{}[]()|,:;.=+-*/%&<>!$"`#\\_ \n\t0123456789') + [
    " and ",
    " or ",
    "import future.keywords\n",
    ":=",
    "==",
    "if",
    "else",
    "contains",
    "in",
    "every",
    "some",
    "not",
    "with",
    "as",
    "default",
    "import",
    "package",
    "set()",
    '$"{',
    "\\u00",
    "\x00",
    "\ufeff",
    "é",
    "1e999999",
]


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(_SEEDS))
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(text)))
        j = min(len(text), i + draw(st.integers(0, 12)))
        op = draw(st.integers(0, 3))
        if op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:i] + draw(st.sampled_from(_FRAGMENTS)) + text[i:]
        elif op == 2:
            text = text[:i] + text[i:j] * draw(st.integers(2, 4)) + text[j:]
        else:
            text = text[:i] + draw(st.text(max_size=8)) + text[j:]
    return text


def _only_parse_errors(text: str) -> None:
    for fn in (
        lambda: parse_module(text, "f.rego"),
        lambda: parse_module(text, "f.rego", rego_v1=False),
        lambda: parse_query(text),
        lambda: parse_term(text),
    ):
        try:
            fn()
        except RegoParseError as e:
            # (OPA's column of EOF at the start of a line is 0; an empty module is at row 0)
            assert e.location is not None and e.location.row >= 0 and e.location.col >= 0
            assert not e.message.startswith("internal parser error"), e.message
            e.format()


@settings(max_examples=2500, deadline=None, suppress_health_check=list(HealthCheck))
@given(_mutated())
def test_fuzz_mutated_policies_only_raise_parse_errors(text: str) -> None:
    _only_parse_errors(text)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_FRAGMENTS + list("abcxyz")), max_size=40).map("".join) | st.text(max_size=40))
def test_fuzz_random_text_only_raises_parse_errors(text: str) -> None:
    _only_parse_errors(text)
