"""Differences with OPA found on machine-written infrastructure-as-code checks
(CWE weakness rules over a parsed-script IR, in Rego v0 style, loaded as v1).
Each case is a minimal program written here, evaluated by OPA v1.20.2 and by
pyrego in every execution form, comparing the errors: every one OPA reports
(file, row, code, message) and, for a single error, the detail lines too."""

from __future__ import annotations

import re
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import HEADER


def _opa_errors(oracle: Any, modules: dict[str, str]) -> list[str]:
    res = oracle.evaluate(modules, "x := 1")
    assert res.is_error
    return HEADER.sub("", res.error_message or "").removeprefix("1 error occurred: ").split("\n")


def _pyrego_errors(modules: dict[str, str]) -> list[str]:
    engine = pyrego.Engine()
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        engine.eval_query("x := 1")
    except pyrego.RegoError as exc:
        found = getattr(exc, "errors", None) or [exc]
        if len(found) == 1:
            return str(exc).split("\n")
        return [str(e).split("\n")[0] for e in found]
    raise AssertionError("no error")


def _agree_errors(oracle: Any, modules: dict[str, str], *, unordered: bool = False) -> None:
    """``unordered``: OPA names one place's unsafe variables in no fixed order."""
    want = _opa_errors(oracle, modules)
    assert want and all(re.match(r"^\S+\.rego:\d+: rego_", line) for line in want if not line.startswith("\t")), want
    for form in EXECUTION_FORMS:
        with in_form(form):
            got = _pyrego_errors(modules)
            assert (sorted(got) if unordered else got) == (sorted(want) if unordered else want), form


# OPA's parseModule reads every statement before it gives up: a statement
# that is no rule (`"a"`, a call of a built-in function as a head), a
# package out of place and a missing one are each an error, and the v1
# checks (`if`, `contains`) still run on the rules that were read; all are
# reported, without detail lines. pyrego stopped at the first of them, with
# the source line and caret under it (a v0 helper library that defines its
# own `contains(str, substr) { ... }` showed 1 error where OPA has 16).
_MODULE_ERRORS = {
    "builtin-name head, then v0 rule": 'package p\n\nr := 2\n\n1 + 1\n\ns { true }\n',
    "non-rule statements": 'package p\n\n"a"\n\nr := 1\n\n[1]\n',
    "one non-rule statement": 'package p\n\n"a"\n',
    "built-in call alone": "package p\n\ncount(1)\n",
    "packages misplaced": "import data.x\n\npackage p\n\npackage q\n\nr := 1\n",
    "v0 function named contains": 'package p\n\nf(x) { x }\n\ncontains(s, t) {\n\tregex.match(t, s)\n}\n\ng[x] { x := 1 }\n',
    "v0 else chain after bad head": 'package p\n\nupper("a")\n\nf(x) = y {\n\ty := x\n} else = 2 {\n\ttrue\n}\n',
}


@pytest.mark.parametrize("name", sorted(_MODULE_ERRORS))
def test_module_errors_all_reported(oracle: Any, name: str) -> None:
    _agree_errors(oracle, {"a.rego": _MODULE_ERRORS[name]})


def test_module_errors_across_files(oracle: Any) -> None:
    # The errors of each file, in the order the files are read.
    _agree_errors(oracle, {"a.rego": 'package a\n\n"x"\n\nr { true }\n', "b.rego": "package b\n\ncount(1)\n"})


# A file cut short (its closing brace lost) ends in a newline: OPA's detail
# line is the last line with text, the caret under its last character (its
# detail moves back over whitespace across lines, in the whole text). pyrego
# showed the empty line after the last newline. An empty module is OPA's
# error with the file alone: row 0, no detail lines.
_CUT_SHORT = {
    "newline at eof": "package p\n\nr if {\n\tx := 1\n",
    "blank lines at eof": "package p\n\nr if {\n\tx := 1\n\n\n   ",
    "non-ascii before eof": 'package p\n\nr if {\n\tx := "\u00e9" +\n',
    "no newline at eof": "package p\n\nr if {\n\tx := 1",
    "empty module": "",
    "comment only": "# nothing here\n",
}


@pytest.mark.parametrize("name", sorted(_CUT_SHORT))
def test_cut_short_module_detail(oracle: Any, name: str) -> None:
    _agree_errors(oracle, {"a.rego": _CUT_SHORT[name]})


# OPA's column of the end of a query is the number of characters before it
# on its line: 0 after a final newline (pyrego said 1).
@pytest.mark.parametrize("query", ["x := 1 +\n", "x := 1 +\r\n", "x := [1,\n\t", "x := 1 + ", "\n\nx := ("])
def test_query_eof_column(oracle: Any, query: str) -> None:
    res = oracle.evaluate({"a.rego": "package p\n"}, query)
    want = HEADER.sub("", res.error_message or "").removeprefix("1 error occurred: ").split("\n")
    for form in EXECUTION_FORMS:
        with in_form(form):
            with pytest.raises(pyrego.RegoError) as exc:
                pyrego.Engine().eval_query(query)
            assert str(exc.value).split("\n") == want, form


# OPA reads an import's path with the future keywords off, and its scanner
# has then already read the next token: a future keyword right after the
# path (on the same line or the next) is a name, not the keyword. A check
# with ` if` left after its import gave OPA's "var cannot be used for rule
# name"; pyrego said "unexpected if keyword". After `as alias` the next
# token is read with the keywords on again.
_AFTER_IMPORT = {
    "if on the import's line": "package p\n\nimport data.x if\n\nr := 1\n",
    "if on the next line": "package p\n\nimport data.x\nif\n",
    "in on the next line": "package p\n\nimport data.x\nin\n",
    "every as a rule name": "package p\n\nimport data.x\nevery := 1\n",
    "after comments and blank lines": "package p\n\nimport data.x\n\n# c\nif := 1\n\nr := 2\n",
    "after an alias": "package p\n\nimport data.x as y\nif\n",
}


@pytest.mark.parametrize("name", sorted(_AFTER_IMPORT))
def test_future_keyword_after_import_path(oracle: Any, name: str) -> None:
    _agree_errors(oracle, {"a.rego": _AFTER_IMPORT[name]})


# A call written with an output argument whose input is a ref off an unsafe
# variable (a check's `walk(attr.value, [_, n])` after the line binding
# `attr` was lost): OPA does not name the output there (the call would bind
# it), but it is not safe afterwards either: OPA names it where it is next
# read, and what depends on it. pyrego took the output as bound and named
# `attr` alone. A call moved out of an expression (`h := count(attr.value)`)
# still binds its result at once, in OPA as before.
_CALL_OUTPUTS = {
    "walk output read after": "r contains x if {\n\twalk(attr.value, [_, h])\n\th.t == 1\n\te := h.v[_]\n\tx := e\n}\n",
    "count output read after": "r if {\n\tcount(attr.value, h)\n\th == 1\n}\n",
    "moved-out call": "r if {\n\th := count(attr.value)\n\th == 1\n}\n",
    "moved-out call in an array": "r if {\n\tx := [count(attr.value)]\n\tx == 1\n}\n",
    "unsafe input binds nothing": "r if {\n\tcount([b, input.a[c]], n)\n\tn == c\n}\n",
}


@pytest.mark.parametrize("name", sorted(_CALL_OUTPUTS))
def test_unsafe_call_output(oracle: Any, name: str) -> None:
    modules = {"a.rego": "package p\n\n" + _CALL_OUTPUTS[name]}
    want = sorted(_opa_errors(oracle, modules))  # (OPA names one place's variables in no fixed order)
    for form in EXECUTION_FORMS:
        with in_form(form):
            assert sorted(_pyrego_errors(modules)) == want, form


# A constant (`unrestricted := {...}`) renamed in its definition leaves it
# unsafe in every check that reads it, and the checks are definitions of one
# rule (`CxPolicy contains result if ...`): OPA names it in each; pyrego
# stopped at the rule's first definition.
_DEFINITIONS = {
    "partial set": "r contains 1 if { x == 1 }\n\nr contains 2 if { y == 1 }\n",
    "complete rule": "r if { x == 1 }\n\nr if { y == 1 }\n",
    "function": "f(a) if { x == a }\n\nf(a) if { y == a }\n",
    "object rule": 'o[k] := 1 if { k := x }\n\no["b"] := 2 if { z == 1 }\n',
    "across files": "r if { x == 1 }\n",
}


@pytest.mark.parametrize("name", sorted(_DEFINITIONS))
def test_unsafe_in_every_definition(oracle: Any, name: str) -> None:
    modules = {"a.rego": "package p\n\n" + _DEFINITIONS[name]}
    if name == "across files":
        modules["b.rego"] = "package p\n\nr if { y == 1 }\n"
    _agree_errors(oracle, modules, unordered=True)


# `some s in f(entry.value)` with `entry` unsafe: OPA moves the call out
# (its result bound at once, the ref's head not counted as an input) and
# names only `entry`; pyrego named `s` too.
@pytest.mark.parametrize(
    "body", ["some s in f(x.a)", "some s in [count(x.a)]", "some s in f(x)", "some s in x.a"]
)
def test_unsafe_some_in_call_domain(oracle: Any, body: str) -> None:
    _agree_errors(oracle, {"a.rego": f"package p\n\nr if {{ {body} }}\n\nf(y) := [y]\n"}, unordered=True)
