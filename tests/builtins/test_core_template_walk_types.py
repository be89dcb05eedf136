"""strings.render_template, walk and the type builtins."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.values import make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


S = make_set


def render(template: str, variables: dict[Any, Any]) -> str:
    return call("strings.render_template", template, variables)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- render_template


@pytest.mark.parametrize(
    "template,variables,want",
    [
        ("{{.test}}", {"test": "hello world"}, "hello world"),
        ("{{.test}}", {"test": 2023}, "2023"),
        ("{{range $i, $name := .names}}{{if $i}},{{end}}hello {{$name}}{{end}}", {"names": ["rohan", "john doe"]}, "hello rohan,hello john doe"),
        ("{{.nope}}", {"test": "x"}, "<undefined>"),
        ("test {{.foo}} {{.bar}} {{.baz}}", {"baz": 1}, "test <undefined> <undefined> 1"),
        ("{{.a}}|{{.b}}|{{.c}}|{{.d}}|{{.e}}", {"a": 1.5, "b": [1, "x", {"k": 2}], "c": {"z": 1, "a": [True]}, "d": None, "e": True}, "1.5|[1 x map[k:2]]|map[a:[true] z:1]|<undefined>|true"),
        ("{{range $k, $v := .o}}{{$k}}={{$v}};{{end}}{{range .e}}x{{else}}empty{{end}}", {"o": {"b": 1, "a": "z"}, "e": []}, "a=z;b=1;empty"),
        # A number is a json.Number: a non-empty string, so always true.
        ("{{if .a}}A{{else if .b}}B{{end}}", {"a": "", "b": 0}, "B"),
        ("a  {{- .x -}}  b", {"x": "X"}, "aXb"),
        ("{{/* comment */}}x", {}, "x"),
        ("{{with .c}}{{.z}}{{else}}none{{end}}|{{with .q}}{{.}}{{else}}none{{end}}", {"c": {"z": 5}}, "5|none"),
        ("{{$x := .a}}{{$x}}{{$x = 5}}{{$x}}", {"a": "A"}, "A5"),
        ('{{eq .s "hi"}} {{eq .n "42"}} {{lt .s "z"}} {{and .s .e}} {{or .e .s}} {{not .e}}', {"s": "hi", "n": 42, "e": False}, "true true true false hi true"),
        ('{{printf "%05d" .n}} {{.s | printf "%q"}} {{print 1 2 "a" "b" 3}}', {"n": 42, "s": "hi"}, '%!d(json.Number=00042) "hi" 1 2ab3'),
        ('{{len .s}} {{index .l 0 1}} {{index .m "zz"}} {{slice .s 1 3}}', {"s": "héllo", "l": [[1, 2]], "m": {}}, "6 2 <undefined> é"),
        ('{{html "<a>&\'"}} {{js "a\'<"}} {{urlquery "a b&é"}}', {}, "&lt;a&gt;&amp;&#39; a\\'\\u003C a+b%26%C3%A9"),
        ('{{range .l}}{{if eq . "b"}}{{break}}{{end}}{{.}}{{end}}', {"l": ["a", "b", "c"]}, "a"),
        ("{{(index .l 0).k}} {{$.a}}", {"a": 1, "l": [{"k": "K"}]}, "K 1"),
        ("<no value>", {}, "<undefined>"),
    ],
)
def test_render(template: str, variables: dict[Any, Any], want: str) -> None:
    assert render(template, variables) == want


@pytest.mark.parametrize(
    "template,variables,message",
    [
        ("{{.a", {}, "template: template:1: unclosed action"),
        ("{{.a.b}}", {"a": 1}, 'template: template:1:4: executing "template" at <.a.b>: can\'t evaluate field b in type interface {}'),
        ("{{nosuch 1}}", {}, 'template: template:1: function "nosuch" not defined'),
        ("{{$x}}", {}, 'template: template:1: undefined variable "$x"'),
        ("{{eq .a 1}}", {"a": 1}, 'template: template:1:2: executing "template" at <eq .a 1>: error calling eq: incompatible types for comparison: json.Number and int'),
        ("{{not}}", {}, 'template: template:1:2: executing "template" at <not>: wrong number of args for not: want 1 got 0'),
        ("{{range .n}}{{end}}", {"n": 3}, 'template: template:1:8: executing "template" at <.n>: range can\'t iterate over 3'),
        ('{{template "x"}}', {}, 'template: template:1:11: executing "template" at <{{template "x"}}>: template "x" not defined'),
        ("{{if .a}}x", {}, "template: template:1: unexpected EOF"),
    ],
)
def test_render_errors(template: str, variables: dict[Any, Any], message: str) -> None:
    with pytest.raises(BuiltinError) as info:
        render(template, variables)
    assert str(info.value) == message


def test_render_operand_errors() -> None:
    with pytest.raises(OperandTypeError, match="^operand 1 must be string but got number$"):
        render(5, {})  # type: ignore[arg-type]
    with pytest.raises(OperandTypeError, match="^operand 2 must be object but got number$"):
        render("x", 5)  # type: ignore[arg-type]


# ---------------------------------------------------------------- walk


def test_walk_is_a_relation() -> None:
    b = lookup("walk")
    assert b is not None and b.relation
    assert list(b.fn(1)) == [[[], 1]]
    assert list(b.fn([1, [2]])) == [[[], [1, [2]]], [[0], 1], [[1], [2]], [[1, 0], 2]]
    doc = {"b": {"c": 1}, "a": 2}
    assert list(b.fn(doc)) == [[[], doc], [["a"], 2], [["b"], {"c": 1}], [["b", "c"], 1]]
    inner = S([1, 2, 3])
    got = list(b.fn(S([inner])))
    assert got[1] == [[inner], inner]
    assert got[2:] == [[[inner, 1], 1], [[inner, 2], 2], [[inner, 3], 3]]


def test_walk_deep_document() -> None:
    b = lookup("walk")
    assert b is not None
    doc: Any = 0
    for _ in range(5000):
        doc = [doc]
    pairs = list(b.fn(doc))
    assert len(pairs) == 5001 and len(pairs[-1][0]) == 5000


# ---------------------------------------------------------------- types


@pytest.mark.parametrize(
    "value,name",
    [(None, "null"), (True, "boolean"), (1, "number"), (1.5, "number"), ("s", "string"), ([1], "array"), ({}, "object"), (S([]), "set")],
)
def test_type_builtins(value: Any, name: str) -> None:
    assert call("type_name", value) == name
    for check, kind in [
        ("is_null", "null"),
        ("is_boolean", "boolean"),
        ("is_number", "number"),
        ("is_string", "string"),
        ("is_array", "array"),
        ("is_object", "object"),
        ("is_set", "set"),
    ]:
        assert call(check, value) is (kind == name), (check, value)
