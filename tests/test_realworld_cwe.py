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
    return HEADER.sub("", res.error_message or "").split("\n")


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


def _agree_errors(oracle: Any, modules: dict[str, str]) -> None:
    want = _opa_errors(oracle, modules)
    assert want and all(re.match(r"^\S+\.rego:\d+: rego_", line) for line in want if not line.startswith("\t"))
    for form in EXECUTION_FORMS:
        with in_form(form):
            assert _pyrego_errors(modules) == want, form


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
