"""String builtins (builtins/strings.py) and conversions (builtins/conversions.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.values import make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


S = make_set


def test_search() -> None:
    assert call("contains", "abcdefgh", "defg") is True
    assert call("contains", "abc", "") is True
    assert call("startswith", "abcdefgh", "abcd") is True
    assert call("endswith", "abcdefgh", "fgh") is True
    assert call("endswith", "abc", "x") is False
    for name in ("contains", "startswith", "endswith"):
        with pytest.raises(OperandTypeError, match="^operand 1 must be string but got number$"):
            call(name, 1, "a")
        with pytest.raises(OperandTypeError, match="^operand 2 must be string but got null$"):
            call(name, "a", None)


def test_indexof() -> None:
    assert call("indexof", "μx", "x") == 1
    assert call("indexof", "μ", "μμ") == -1
    assert call("indexof", "skön var våren", "vår") == 9
    assert call("indexof", "🍧🍨🧁🍰🍮", "🍮") == 4
    assert call("indexof_n", "dogcatdogcat", "cat") == [3, 9]
    assert call("indexof_n", "😇😀😇😀😇😀", "😀") == [1, 3, 5]
    assert call("indexof_n", "aaa", "aa") == [0, 1]  # overlapping
    assert call("indexof_n", "dogcat", "rabbit") == []
    for name in ("indexof", "indexof_n"):
        with pytest.raises(BuiltinError, match="^empty search character$"):
            call(name, "abc", "")


def test_count_and_reverse() -> None:
    assert call("strings.count", "cheese", "e") == 3
    assert call("strings.count", "11111", "11") == 2
    assert call("strings.count", "dummy", "") == 6
    assert call("strings.count", "", "") == 1
    assert call("strings.count", "héé", "") == 4
    assert call("strings.reverse", "héllo😀") == "😀olléh"


def test_any_prefix_suffix_match() -> None:
    assert call("strings.any_prefix_match", ["a/b/c", "e/f/g"], ["x/", "e/f"]) is True
    assert call("strings.any_prefix_match", S(["a/b/c"]), S(["a/b/"])) is True
    assert call("strings.any_prefix_match", "a/b/c", ["g/", "d/"]) is False
    assert call("strings.any_prefix_match", [], ["a"]) is False
    assert call("strings.any_prefix_match", ["a"], []) is False
    assert call("strings.any_prefix_match", ["abc"], [""]) is True
    assert call("strings.any_suffix_match", ["a/b/c", "a/b/d"], ["/d"]) is True
    assert call("strings.any_suffix_match", "a/b/g", ["/c", "/a"]) is False
    with pytest.raises(OperandTypeError, match="^operand 1 must be array of strings but got array containing number$"):
        call("strings.any_prefix_match", [1, 2, 3], ["f/"])
    with pytest.raises(OperandTypeError, match=r"^operand 2 must be one of \{string, set, array\} but got number$"):
        call("strings.any_suffix_match", ["a"], 1)
    with pytest.raises(OperandTypeError, match="^operand 2 must be set of strings but got set containing boolean$"):
        call("strings.any_suffix_match", ["a"], S([1, True, "a"]))  # the first bad one in sorted order


def test_concat() -> None:
    assert call("concat", "/", ["", "foo", "bar", "0", "baz"]) == "/foo/bar/0/baz"
    assert call("concat", ",", S(["b", "a", "c"])) == "a,b,c"
    assert call("concat", ",", []) == ""
    assert call("concat", ",", S([])) == ""
    assert call("concat", "é", ["x", "y"]) == "xéy"
    with pytest.raises(OperandTypeError, match="^operand 2 must be array of strings but got array containing number$"):
        call("concat", ",", [1])
    with pytest.raises(OperandTypeError, match="^operand 2 must be set of strings but got set containing number$"):
        call("concat", ",", S([1]))
    with pytest.raises(OperandTypeError, match="^operand 1 must be string but got number$"):
        call("concat", 1, [])
    with pytest.raises(OperandTypeError, match=r"^operand 2 must be one of \{set, array\} but got string$"):
        call("concat", ",", "ab")


def test_substring() -> None:
    assert call("substring", "abcdefgh", 2, -1) == "cdefgh"
    assert call("substring", "aåäö", 2, -1) == "äö"
    assert call("substring", "abcdefgh", 2, 10000) == "cdefgh"
    assert call("substring", "åäö", 4, -1) == ""
    assert call("substring", "abc", 1, 1) == "b"
    assert call("substring", "", 0, 5) == ""
    with pytest.raises(BuiltinError, match="^negative offset$"):
        call("substring", "abc", -1, 2)
    with pytest.raises(OperandTypeError, match="^operand 2 must be integer number but got floating-point number$"):
        call("substring", "abc", 1.5, 1)


def test_case_mapping_follows_go() -> None:
    assert call("lower", "AbCdEf") == "abcdef"
    assert call("upper", "AbCdEf") == "ABCDEF"
    # Go maps each character alone: no expansion, no final-sigma rule.
    assert call("upper", "straße") == "STRAßE"
    assert call("lower", "ΣΑΣ") == "σασ"
    assert call("lower", "İ") == "i"
    assert call("upper", "ﬀ") == "ﬀ"
    assert call("upper", "héllo") == "HÉLLO"


def test_split() -> None:
    assert call("split", "foo.bar.baz", ".") == ["foo", "bar", "baz"]
    assert call("split", "", ".") == [""]
    assert call("split", "test", "") == ["t", "e", "s", "t"]
    assert call("split", "", "") == []
    assert call("split", "héé", "é") == ["h", "", ""]


@pytest.mark.parametrize(
    "text,sep,n,want",
    [
        ("a.b.c.d", ".", 2, ["a", "b"]),
        ("a.b.c.d", ".", 1, ["a"]),
        ("a.b.c.d", ".", 10, ["a", "b", "c", "d"]),
        ("a.b.c.d", ".", 0, []),
        ("a.b.c.d", ".", -2, ["c", "d"]),
        ("a.b.c.d", ".", -10, ["a", "b", "c", "d"]),
        ("a..b", ".", -2, ["", "b"]),
        ("abc", "", 2, ["a", "b"]),
        ("abc", "", -2, ["b", "c"]),
        ("", ".", 2, [""]),
        ("", "", 2, []),
    ],
)
def test_split_n(text: str, sep: str, n: int, want: list[str]) -> None:
    assert call("strings.split_n", text, sep, n) == want


def test_split_n_errors() -> None:
    with pytest.raises(OperandTypeError, match="^operand 3 must be integer number but got floating-point number$"):
        call("strings.split_n", "a.b", ".", 1.5)
    with pytest.raises(OperandTypeError, match="^operand 3 must be number but got string$"):
        call("strings.split_n", "a.b", ".", "x")


def test_replace() -> None:
    assert call("replace", "foo.bar.baz", ".", ",") == "foo,bar,baz"
    assert call("replace", "foo...bar", "..", ",,") == "foo,,.bar"
    assert call("replace", "ab", "", "-") == "-a-b-"
    with pytest.raises(OperandTypeError, match="^operand 3 must be string but got array$"):
        call("replace", "a", "b", [])


@pytest.mark.parametrize(
    "patterns,text,want",
    [
        ({"info": "X", "anotherinfo": "Y"}, "anotherinfo", "Y"),
        ({"a": "YY", "bba": "bX"}, "bbab", "bXb"),
        ({"ab": "b", "b": "Y"}, "baaabbbba", "YaabYYYa"),
        ({"a": "b", "b": "a"}, "abba", "baab"),
        ({"a": "Xa", "ab": "X", "ba": "bYa", "aaa": "X"}, "aaaaab", "XaXaXaXaXab"),
        ({"aab": "Y", "a": "", "b": ""}, "bbaab", ""),
        ({"": "X"}, "", "X"),
        ({"": "X"}, "ab", "XaXbX"),
        ({"": "X", "a": "Y"}, "ab", "XYXbX"),
        ({"": "-", "é": "e"}, "aéb", "-a-e-b-"),
        ({"a.b": "*", "(": ")"}, "a.b(axb", "*)axb"),
        ({}, "abc", "abc"),
    ],
)
def test_replace_n(patterns: dict[str, str], text: str, want: str) -> None:
    assert call("strings.replace_n", patterns, text) == want


def test_replace_n_errors() -> None:
    with pytest.raises(OperandTypeError, match="^operand 1 non-string key found in pattern object$"):
        call("strings.replace_n", {2: "x"}, "foo")
    with pytest.raises(OperandTypeError, match="^operand 1 non-string value found in pattern object$"):
        call("strings.replace_n", {"f": 100}, "foo")
    with pytest.raises(OperandTypeError, match="^operand 2 must be string but got number$"):
        call("strings.replace_n", {"foo": "baz"}, 100)


def test_trim() -> None:
    assert call("trim", "...foo.bar...", ".") == "foo.bar"
    assert call("trim", "...foo.bar...", ".o") == "foo.bar"
    assert call("trim", "¡¡¡foo, bar!!!", "i") == "¡¡¡foo, bar!!!"
    assert call("trim", "abc", "") == "abc"
    assert call("trim_left", "!!!foo, bar¡¡¡", "¡") == "!!!foo, bar¡¡¡"
    assert call("trim_left", "¡¡x¡", "¡") == "x¡"
    assert call("trim_right", "¡¡x¡", "¡") == "¡¡x"
    assert call("trim_prefix", "¡¡¡foo, bar!!!", "¡¡¡foo") == ", bar!!!"
    assert call("trim_prefix", "abc", "") == "abc"
    assert call("trim_suffix", "¡¡¡foo, bar!!!", ", bar!!!") == "¡¡¡foo"
    assert call("trim_suffix", "¡¡¡foo, bar!!!", ", foo!!!") == "¡¡¡foo, bar!!!"
    # Go's unicode.IsSpace: NBSP and em space are spaces, U+001C is not.
    assert call("trim_space", " \t\u00a0\u2003x y\n\r\u3000") == "x y"
    assert call("trim_space", "\x1cx\x1c") == "\x1cx\x1c"


# ---------------------------------------------------------------- conversions


@pytest.mark.parametrize(
    "text,want",
    [
        ("3", 3),
        ("-0", 0),
        ("1.50", 1.5),
        ("1e3", 1000),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("1e-400", Decimal("1e-400")),  # OPA keeps the number's text
        ("1_000", 1000),
        ("0x1p-2", 0.25),
        (".5", 0.5),
    ],
)
def test_to_number_strings(text: str, want: Any) -> None:
    assert call("to_number", text) == want


def test_to_number_other() -> None:
    assert call("to_number", None) == 0
    assert call("to_number", True) == 1
    assert call("to_number", False) == 0
    assert call("to_number", 2.5) == 2.5
    for bad in ("broken", "0x10", " 1", "", "0b101", "1__0"):
        with pytest.raises(BuiltinError, match="invalid syntax$"):
            call("to_number", bad)
    with pytest.raises(BuiltinError, match=r'^strconv.ParseFloat: parsing "1e400": value out of range$'):
        call("to_number", "1e400")
    for bad in ("Inf", "-infinity", "NaN"):
        with pytest.raises(OperandTypeError, match="^operand 1 must be valid number string but got string$"):
            call("to_number", bad)
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{null, boolean, number, string\} but got array$"):
        call("to_number", [1])


def test_format_int() -> None:
    assert call("format_int", 15.5, 16) == "f"
    assert call("format_int", -3.7, 16) == "-3"
    assert call("format_int", 255, 2) == "11111111"
    assert call("format_int", 8, 8) == "10"
    assert call("format_int", 3.1, 10) == "3"
    assert call("format_int", -10**30, 16) == "-c9f2c9cd04674edea40000000"
    with pytest.raises(OperandTypeError, match=r"^operand 2 must be one of \{2, 8, 10, 16\}$"):
        call("format_int", 1, 3)
    with pytest.raises(OperandTypeError, match="^operand 1 must be number but got string$"):
        call("format_int", "a", 10)


def test_casts() -> None:
    assert call("cast_array", S([3, 1, 2])) == [1, 2, 3]
    assert call("cast_array", [1, 1]) == [1, 1]
    assert call("cast_set", [1, 2, 2]) == S([1, 2])
    assert call("cast_string", "s") == "s"
    assert call("cast_boolean", False) is False
    assert call("cast_null", None) is None
    assert call("cast_object", {"a": 1}) == {"a": 1}
    with pytest.raises(OperandTypeError, match=r"^operand 1 must be one of \{array, set\} but got string$"):
        call("cast_array", "s")
    with pytest.raises(OperandTypeError, match="^operand 1 must be boolean but got number$"):
        call("cast_boolean", 1)
    with pytest.raises(OperandTypeError, match="^operand 1 must be null but got boolean$"):
        call("cast_null", False)


def test_template_string() -> None:
    from pyrego.builtins.registry import BuiltinHalt

    got = call("internal.template_string", ["a", S([1]), S([]), 5, "b", S(["x"]), S([[1, "q"]]), S([None]), S([S([1, 2])]), S([4.2])])
    assert got == 'a1<undefined>5bx[1, "q"]null{1, 2}4.2'
    assert call("internal.template_string", [True, None, S(["é\n"]), S([S([])]), S([{"a": S([])}])]) == 'truenullé\nset(){"a": set()}'
    assert call("internal.template_string", []) == ""
    with pytest.raises(BuiltinHalt, match="^template-strings must not produce multiple outputs$") as info:
        call("internal.template_string", ["a", S([1, 2])])
    assert info.value.code == "eval_conflict_error"
    with pytest.raises(BuiltinHalt, match="^illegal argument type: array$"):
        call("internal.template_string", ["a", [1]])
