"""base64, hex, json.*, yaml.*, urlquery.* and uri.* builtins (expected values from OPA v1.20.2)."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.values import UNDEF, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def error(name: str, *args: Any) -> BuiltinError:
    with pytest.raises(BuiltinError) as info:
        call(name, *args)
    return info.value


# ---------------------------------------------------------------- base64 / hex


@pytest.mark.parametrize(
    ("name", "arg", "want"),
    [
        ("base64.encode", "there", "dGhlcmU="),
        ("base64.encode", "", ""),
        ("base64.encode", "é", "w6k="),
        ("base64.decode", "aGVsbG8=", "hello"),
        ("base64.decode", "c3ViamVjdHM/X2Q=", "subjects?_d"),
        ("base64.decode", "aGVs\r\nbG8=\n", "hello"),  # Go skips CR and LF
        ("base64url.encode", "subjects?_d", "c3ViamVjdHM_X2Q="),
        ("base64url.encode_no_pad", "hello", "aGVsbG8"),
        ("base64url.decode", "aGVsbG8", "hello"),
        ("base64url.decode", "aGVsbG8=", "hello"),
        ("hex.encode", "abc", "616263"),
        ("hex.decode", "6869", "hi"),
    ],
)
def test_encodings(name: str, arg: str, want: str) -> None:
    assert call(name, arg) == want


@pytest.mark.parametrize(
    ("name", "arg", "message"),
    [
        ("base64.decode", "!!", "illegal base64 data at input byte 0"),
        ("base64.decode", "aGVsbG8", "illegal base64 data at input byte 4"),
        ("base64.decode", "ab=c", "illegal base64 data at input byte 2"),
        ("base64.decode", "aGVsbG8=\nx", "illegal base64 data at input byte 9"),
        ("base64url.decode", "aaaaa", "illegal base64url string: aaaaa"),
        ("hex.decode", "fghijkl", "encoding/hex: invalid byte: U+0067 'g'"),
        ("hex.decode", "686", "encoding/hex: odd length hex string"),
    ],
)
def test_decode_errors(name: str, arg: str, message: str) -> None:
    assert str(error(name, arg)) == message


def test_binary_results_keep_their_bytes() -> None:
    # Go strings are bytes: decoding to non-UTF-8 and encoding again round-trips
    raw = call("base64.decode", "/+I=")
    assert call("hex.encode", raw) == "ffe2"
    assert len(raw) == 2  # one character per invalid byte, as Go counts runes
    assert call("base64.encode", call("hex.decode", "ff00fe")) == "/wD+"
    assert call("json.marshal", call("hex.decode", "ff")) == '"\\ufffd"'


def test_is_valid_and_types() -> None:
    assert call("base64.is_valid", "aGVsbG8=") is True
    assert call("base64.is_valid", "aGVsbG8") is False
    assert call("base64.is_valid", 1) is False
    assert str(error("base64.encode", 1)) == "operand 1 must be string but got number"
    assert isinstance(error("hex.encode", None), OperandTypeError)


# ---------------------------------------------------------------- json


def test_json_marshal() -> None:
    assert call("json.marshal", [{"foo": make_set([3, 1, 2])}]) == '[{"foo":[1,2,3]}]'
    assert call("json.marshal", {"b": 1, "a": None}) == '{"a":null,"b":1}'
    assert call("json.marshal", "<a&b>\u2028") == '"\\u003ca\\u0026b\\u003e\\u2028"'
    assert call("json.marshal", {1: 2, "x": True}) == '{"1":2,"x":true}'
    assert call("json.marshal", 123456789012345678901234567890) == "123456789012345678901234567890"


def test_json_marshal_with_options() -> None:
    doc = {"a": [1, 2], "b": {}}
    assert call("json.marshal_with_options", doc, {}) == '{"a":[1,2],"b":{}}'
    assert call("json.marshal_with_options", doc, {"pretty": True}) == '{\n\t"a": [\n\t\t1,\n\t\t2\n\t],\n\t"b": {}\n}'
    assert (
        call("json.marshal_with_options", {"a": [1]}, {"indent": "  ", "prefix": "--"})
        == '--{\n--  "a": [\n--    1\n--  ]\n--}'
    )
    assert call("json.marshal_with_options", [1], {"indent": " ", "pretty": False}) == "[1]"
    assert str(error("json.marshal_with_options", [1], {"bad": 1})) == 'operand 2 object contained unknown key "bad"'
    assert str(error("json.marshal_with_options", [1], {"pretty": 1})) == 'operand 2 key "pretty" failed cast to bool'


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
        ("  [1]  ", [1]),
        ('{"a":1,"a":2}', {"a": 2}),
        ('"\\ud800"', "\ufffd"),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("1 null", 1),  # OPA reads one more token after the value; null is no token
    ],
)
def test_json_unmarshal(text: str, want: Any) -> None:
    assert call("json.unmarshal", text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "EOF"),
        ("{", "unexpected EOF"),
        ("1e", "unexpected EOF"),
        ('{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ("01", "error: invalid character '1' after top-level value"),
        ("1 2", "error: invalid character '2' after top-level value"),
        ('{"a":1}x', "invalid character 'x' looking for beginning of value"),
        ('"\\x"', "invalid character 'x' in string escape code"),
        ('"\t"', "invalid character '\\t' in string literal"),
        ("1.x", "invalid character 'x' after decimal point in numeric literal"),
        ("trUe", "invalid character 'U' in literal true (expecting 'u')"),
        ("NaN", "invalid character 'N' looking for beginning of value"),
    ],
)
def test_json_unmarshal_errors(text: str, message: str) -> None:
    assert str(error("json.unmarshal", text)) == message


def test_json_is_valid() -> None:
    assert [call("json.is_valid", d) for d in ["plainstring", "{", '{"json": "ok"}', "1 null", "NaN"]] == [
        False,
        False,
        True,
        False,
        False,
    ]
    assert call("json.is_valid", 1) is False


# ---------------------------------------------------------------- yaml


def test_yaml_unmarshal_go_yaml_scalars() -> None:
    doc = "a: yes\nb: on\nc: y\nd: 017\ne: 0x1F\nf: 1_000\ng: 1e3\nh: 2001-12-14\ni: 1:20\nj: ~\nk: .5\n"
    assert call("yaml.unmarshal", doc) == {
        "a": True,
        "b": True,
        "c": True,
        "d": 15,
        "e": 31,
        "f": 1000,
        "g": 1000,
        "h": "2001-12-14",
        "i": "1:20",
        "j": None,
        "k": 0.5,
    }


def test_yaml_unmarshal_keys_and_documents() -> None:
    assert call("yaml.unmarshal", "1: a\ntrue: b\n1.5: c\n") == {"1": "a", "true": "b", "1.5": "c"}
    assert call("yaml.unmarshal", "a: 1\n---\nb: 2\n") == {"a": 1}
    assert call("yaml.unmarshal", "") is None
    assert call("yaml.unmarshal", "base: &b {a: 1}\nd:\n  <<: *b\n  c: 2\n") == {
        "base": {"a": 1},
        "d": {"a": 1, "c": 2},
    }
    assert call("yaml.unmarshal", "a: -9223372036854775809\n") == {"a": -9223372036854776000}


def test_yaml_unmarshal_errors() -> None:
    assert str(error("yaml.unmarshal", "a: [1, 2]: 3\n")) == "yaml: mapping values are not allowed in this context"
    assert str(error("yaml.unmarshal", "[1,2,")) == "yaml: line 1: did not find expected node content"
    assert str(error("yaml.unmarshal", "a: .nan\n")) == "json: unsupported value: NaN"
    assert "unsupported map key" in str(error("yaml.unmarshal", "~: e\n"))


def test_yaml_is_valid() -> None:
    assert call("yaml.is_valid", "foo:\n  - qux: bar\n  - baz: 2") is True
    assert call("yaml.is_valid", "foo:\n  - qux: bar\n  - baz: {") is False
    # every document must parse, and content outside the first document counts
    assert call("yaml.is_valid", "  test:\ntest1: hello\n") is False
    assert call("yaml.is_valid", "a: 1\n---\n\tb: 2\n") is False
    assert call("yaml.is_valid", "a: 1\n---\nb: 2\n") is True
    assert call("yaml.is_valid", 1) is False


def test_yaml_marshal() -> None:
    value = {
        "a": [1, 2, {"b": None}],
        "c": "x: y",
        "g": "yes",
        "h": "1",
        "i": make_set([2, 1]),
        "j": {},
        "l": "a\nb",
        "y": "\t",
    }
    assert call("yaml.marshal", value) == (
        'a:\n- 1\n- 2\n- b: null\nc: \'x: y\'\ng: "yes"\nh: "1"\ni:\n- 1\n- 2\nj: {}\nl: |-\n  a\n  b\n"y": "\\t"\n'
    )
    assert call("yaml.marshal", "hello") == "hello\n"
    assert call("yaml.marshal", [1.5, 1e-05, 12345678901234567890123]) == "- 1.5\n- 1e-05\n- 1.2345678901234568e+22\n"
    # go-yaml orders keys with numbers compared as numbers, letters last
    assert call("yaml.marshal", {"a10": 1, "a9": 2, "B": 3, "_": 4}) == "_: 4\nB: 3\na9: 2\na10: 1\n"
    assert call("yaml.unmarshal", call("yaml.marshal", [{"foo": make_set([1, 2, 3])}])) == [{"foo": [1, 2, 3]}]


# ---------------------------------------------------------------- urlquery / uri


def test_urlquery() -> None:
    assert call("urlquery.encode", "a=b+1 é") == "a%3Db%2B1+%C3%A9"
    assert call("urlquery.decode", "a%3Db%2B1+c") == "a=b+1 c"
    assert str(error("urlquery.decode", "%zz")) == 'invalid URL escape "%zz"'
    assert str(error("urlquery.decode", "ab%2")) == 'invalid URL escape "%2"'
    assert (
        call("urlquery.encode_object", {"c": "d", "a": ["b+1", "c+2"], "e": make_set(["x"])})
        == "a=b%2B1&a=c%2B2&c=d&e=x"
    )
    assert (
        str(error("urlquery.encode_object", {"a": 1}))
        == "operand 1 values must be string, array[string], or set[string]"
    )
    assert call("urlquery.decode_object", "a=value_a1&b=value_b&a=value_a2&c") == {
        "a": ["value_a1", "value_a2"],
        "b": ["value_b"],
        "c": [""],
    }
    assert call("urlquery.decode_object", "") == {}
    assert str(error("urlquery.decode_object", "a=1;b=2")) == "invalid semicolon separator in query"


def test_uri() -> None:
    assert call("uri.parse", "http://user:pw@a.com:80/b%20c?c=d#e") == {
        "fragment": "e",
        "hostname": "a.com",
        "path": "/b c",
        "port": "80",
        "raw_path": "/b c",
        "raw_query": "c=d",
        "scheme": "http",
    }
    assert call("uri.parse", "http://a.com/%2f%20?q#f%2F")["raw_path"] == "/%2f%20"
    assert call("uri.parse", "mailto:joe@x.com") == {"scheme": "mailto"}
    assert call("uri.parse", "http://[::1]:8080/")["hostname"] == "::1"
    assert (
        str(error("uri.parse", "http://a.com:port/")) == 'parse "http://a.com:port/": invalid port ":port" after host'
    )
    assert str(error("uri.parse", ":foo")) == 'parse ":foo": missing protocol scheme'
    assert call("uri.is_valid", "/rel/path?x") is True
    assert call("uri.is_valid", "") is False
    assert call("uri.is_valid", "http://a b.com/") is False
    assert call("uri.is_valid", 5) is False
    assert call("uri.parse", "") == {}
    assert lookup("uri.parse").fn("x") is not UNDEF  # type: ignore[union-attr]
