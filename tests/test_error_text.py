"""Error text byte for byte as OPA prints it: ``file:row: code: message``, and
for a parse error the offending line without its leading tabs and a caret
under the offending byte (OPA's ParserErrorDetail), whatever the indentation."""

from __future__ import annotations

import re
from typing import Any

import pytest

import pyrego
from pyrego.errors import Location, RegoCompileError, RegoParseError, detail_lines, parser_detail

_HEADER = re.compile(r"^(?:bundle activation failed: )?\d+ errors? occurred:[ \n]")

PARSE_ERRORS = {
    "tabs": "package p\n\nr if {\n\t\tx := [1 2]\n}\n",
    "spaces": "package p\n\nr if {\n    x := [1 2]\n}\n",
    "tab-then-space": "package p\n\nr if {\n\t \tx := [1 2]\n}\n",
    "space-then-tab": "package p\n\nr if {\n \tx := [1 2]\n}\n",
    "no-indent": "package p\n\nx := [1 2]\n",
    "multibyte-before": 'package p\n\nr if {\n\tx := "é" 2\n}\n',
    "at-end-of-text": "package a\n\np := \n",
    "trailing-spaces": "package p\n\nr if {\n\tx := [1 2]   \n}\n",
}


def _pyrego_parse_error(text: str) -> pyrego.RegoError:
    engine = pyrego.Engine()
    with pytest.raises(pyrego.RegoError) as info:
        engine.add_policy("x.rego", text)
    return info.value


def _opa_first_entry(oracle: Any, text: str) -> str:
    res = oracle.evaluate({"x.rego": text}, "data")
    assert res.is_error
    entries: list[str] = []
    for line in _HEADER.sub("", res.error_message or "").split("\n"):
        if line.startswith("\t") and entries:
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries[0]


@pytest.mark.parametrize("name", sorted(PARSE_ERRORS))
def test_parse_error_text_is_opas(name: str, oracle: Any) -> None:
    text = PARSE_ERRORS[name]
    err = _pyrego_parse_error(text)
    err.attach_text(text)  # the whole text: OPA moves back over whitespace across lines
    assert str(err) == _opa_first_entry(oracle, text)


@pytest.mark.parametrize("name", ["tabs", "spaces", "tab-then-space", "multibyte-before", "no-indent"])
def test_caret_without_the_whole_text(name: str, oracle: Any) -> None:
    """Errors keep only their line: the caret is still where OPA puts it when
    the offending byte is on that line."""
    text = PARSE_ERRORS[name]
    assert str(_pyrego_parse_error(text)) == _opa_first_entry(oracle, text)


def test_detail_lines() -> None:
    assert detail_lines("\t\tnot x", 2) == ("not x", "^")
    assert detail_lines("\t\tnot x", 6) == ("not x", "    ^")
    assert detail_lines("    not x", 8) == ("    not x", "        ^")
    assert detail_lines("\t \tx", 3) == (" \tx", "  ^")
    assert parser_detail("a\n  \n", 2, 2) == ("a", 0)  # back over blank text to the last byte that is not
    assert parser_detail("", 1, 1) == ("", 0)


def test_compile_errors_have_no_detail_lines() -> None:
    err = RegoCompileError("var x assigned above", Location("x.rego", 4, 2), source_line="\tx := 2")
    assert str(err) == "x.rego:4: rego_compile_error: var x assigned above"
    assert str(RegoCompileError("error limit reached")) == "rego_compile_error: error limit reached"
    assert str(RegoParseError("unexpected eof token", Location("", 1, 5))) == "1:5: rego_parse_error: unexpected eof token"
