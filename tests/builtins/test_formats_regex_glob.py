"""regex.*, re_match, glob.* builtins (expected values from OPA v1.20.2 / its conformance cases)."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def error(name: str, *args: Any) -> BuiltinError:
    with pytest.raises(BuiltinError) as info:
        call(name, *args)
    return info.value


@pytest.mark.parametrize(
    ("pattern", "value", "want"),
    [
        ("^[a-z]+\\[[0-9]+\\]$", "foo[1]", True),
        ("^$", "", True),
        ("", "x", True),
        ("^$", "something", False),
        ("(?i)FOO", "xfoo", True),
        ("é+", "aéé", True),
        ("^\\w+@\\w+\\.com$", "ab@cd.com", True),
        ("a.c", "a\nc", False),
        ("(?s)a.c", "a\nc", True),
    ],
)
def test_match(pattern: str, value: str, want: bool) -> None:
    assert call("regex.match", pattern, value) is want
    assert call("re_match", pattern, value) is want


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("$^[[[", "error parsing regexp: missing closing ]: `[[[`"),
        ("(", "error parsing regexp: missing closing ): `(`"),
        ("a)", "error parsing regexp: unexpected ): `a)`"),
        ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
        ("x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
        ("\\8", "error parsing regexp: invalid escape sequence: `\\8`"),
        ("\\C", "error parsing regexp: invalid escape sequence: `\\C`"),
        ("\\", "error parsing regexp: trailing backslash at end of expression: ``"),
        ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
        ("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        ("*a", "error parsing regexp: missing argument to repetition operator: `*`"),
        ("(?P<>a)", "error parsing regexp: invalid named capture: `(?P<>`"),
    ],
)
def test_bad_patterns(pattern: str, message: str) -> None:
    assert str(error("regex.match", pattern, "x")) == message
    assert call("regex.is_valid", pattern) is False


def test_is_valid_and_types() -> None:
    assert call("regex.is_valid", "^a+$") is True
    assert call("regex.is_valid", 1) is False
    assert str(error("regex.match", 1, "a")) == "operand 1 must be string but got number"
    assert isinstance(error("regex.match", "a", None), OperandTypeError)


def test_split() -> None:
    assert call("regex.split", "a*", "baaac") == ["b", "c"]
    assert call("regex.split", ",", "a,b,,c") == ["a", "b", "", "c"]
    assert call("regex.split", "", "") == []
    assert call("regex.split", "x", "") == [""]
    assert call("regex.split", "é", "aébéc") == ["a", "b", "c"]


def test_find() -> None:
    # an empty match right after a match is skipped, as in Go
    assert call("regex.find_n", "a*|b", "b", -1) == ["", ""]
    assert call("regex.find_n", "a", "aaa", 2) == ["a", "a"]
    assert call("regex.find_n", "a", "aaa", 0) == []
    assert call("regex.find_n", "a*", "baaac", -1) == ["", "aaa", ""]
    assert call("regex.find_n", "a", "aaa", 2.0) == ["a", "a"]
    assert (
        str(error("regex.find_n", "a", "aaa", 1.5)) == "operand 3 must be integer number but got floating-point number"
    )
    assert call("regex.find_all_string_submatch_n", "(a)(x)?", "aa", -1) == [["a", "a", ""], ["a", "a", ""]]
    assert call("regex.find_all_string_submatch_n", "([a-z]+)@(\\w+)", "a@b c@d", 1) == [["a@b", "a", "b"]]


def test_replace() -> None:
    assert call("regex.replace", "-wy-wxxy-", "w(x*)y", "0") == "-0-0-"
    assert call("regex.replace", "foo", "(foo)", "$1$1") == "foofoo"
    assert call("regex.replace", "aaa", "^a", "b") == "baa"
    assert call("regex.replace", "abc", "x*", "-") == "-a-b-c-"
    assert call("regex.replace", "abc", "b*", "-") == "-a-c-"
    # Go's template: $name takes the longest name, $$ is a dollar, a bad $ stays
    assert call("regex.replace", "abc", "(?P<n>b)", "[$n][${1}][$1x][$$][$][${n]") == "a[b][b][][$][$][${n]c"
    assert str(error("regex.replace", "foo", "[", "$1")) == "error parsing regexp: missing closing ]: `[`"


def test_template_match() -> None:
    assert call("regex.template_match", "urn:foo:{.*}", "urn:foo:bar:baz", "{", "}") is True
    assert call("regex.template_match", "urn:foo.bar.com:{.*}", "urn:foo.bar.com:bar:baz", "{", "}") is True
    assert call("regex.template_match", "a{[0-9]+}b{x|y}", "a12by", "{", "}") is True
    assert call("regex.template_match", "a{[0-9]+}b", "a1xb", "{", "}") is False
    assert str(error("regex.template_match", "urn:{a}}", "x", "{", "}")) == 'unbalanced braces in "urn:{a}}"'
    assert (
        str(error("regex.template_match", "x", "x", "{{", "}"))
        == "start delimiter has to be exactly one character long but is 2 long"
    )


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("a.a.", ".a.a", True),
        ("[a-z]*", "[0-9]+", False),
        ("abc", "a*", False),
        ("a+b", "a*b", True),
        ("", "", True),
        ("[ab]+c*", "b.", True),
    ],
)
def test_globs_match(a: str, b: str, want: bool) -> None:
    assert call("regex.globs_match", a, b) is want


def test_globs_match_errors() -> None:
    assert (
        str(error("regex.globs_match", "[a", "x"))
        == "input:[a, pos:2, found [ without matching ]: the input provided is invalid"
    )
    assert "range is out of order" in str(error("regex.globs_match", "[z-a]", "x"))


# ---------------------------------------------------------------- glob


@pytest.mark.parametrize(
    ("pattern", "delimiters", "value", "want"),
    [
        ("*:github:com", [":"], "api:github:com", True),
        ("*.github.com", ["."], "api.not-github.com", False),
        ("[abc]at", [], "fat", False),
        ("[!abc]at", [], "fat", True),
        ("[a-c]at", [], "bat", True),
        ("?at", ["f"], "fat", False),
        ("{cat,bat,[fr]at}", [], "rat", True),
        ("{cat,bat,[fr]at}", [], "at", False),
        ("*", [], "foo.bar", False),  # an empty list means the default "."
        ("*", None, "foo.bar", True),
        ("?", None, "", False),
        ("[!0-9]", None, "", False),
        ("a/*/b", None, "a/b", False),
        ("a/**/b", None, "a//b", True),
        ("**/x", None, "x", False),
        ("{**/,}x", None, "x", True),
        ("***", ["."], "", True),
        ("*?*", [".", "/"], "api.github.com", False),
        ("\\*", None, "*", True),
        ("a**b", ["."], "a.x.b", True),
        ("?", None, "é", True),
        ("{", None, "", True),  # an unclosed group ends with the pattern
    ],
)
def test_glob_match(pattern: str, delimiters: Any, value: str, want: bool) -> None:
    assert call("glob.match", pattern, delimiters, value) is want


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("[", "unexpected end of input"),
        ("[!]", "could not parse range"),
        ("[z-a]", "hi character 'a' should be greater than lo 'z'"),
        ("[a-z-0]", "expected close range character"),
        ("[a-]", "unexpected end of input"),
    ],
)
def test_glob_errors(pattern: str, message: str) -> None:
    assert str(error("glob.match", pattern, None, "x")) == message


def test_glob_operands() -> None:
    assert (
        str(error("glob.match", "*", ["ab"], "x")) == "operand 2 must be array of runes but got array containing string"
    )
    assert str(error("glob.match", "*", "x", "x")) == "operand 2 must be one of {array, null} but got string"
    assert str(error("glob.match", 1, None, "x")) == "operand 1 must be string but got number"
    assert call("glob.quote_meta", "*.github.com") == "\\*.github.com"
    assert call("glob.quote_meta", "a,b-c!d{}[]?\\") == "a,b-c!d\\{\\}\\[\\]\\?\\\\"
