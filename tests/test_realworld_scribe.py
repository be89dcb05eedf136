"""Differences with OPA found on a public set of supply-chain policies (Rego
v0 rules over SBOMs, SARIF reports, SLSA provenance and source-control API
evidence: allow/violations/reason documents built with time, string, regex
and conversion builtins). Each case is a minimal program written here,
evaluated by OPA v1.20.2 and by pyrego in every execution form, with strict
builtin errors on and off (off: only where OPA raised no error), comparing
the value, undefined, or the error's code and message."""

from __future__ import annotations

from typing import Any

import pytest

from opa_compare import agree as _agree

_P = "package p\n\nimport rego.v1\n\n"

# OPA's rule index takes ``x in coll`` as a requirement on ``coll`` only
# where ``coll`` is a ref into input or base data (or a local bound to one):
# a function's argument is not a root document, so a definition testing
# membership in an argument is not indexed and keeps its place in the source
# order. pyrego indexed it, moved the definition after the untested ones and,
# as a function of one value stops at its first definition that succeeds,
# skipped a definition whose builtin raises in OPA (a helper checking a
# required value against a list, with ``to_number`` first).
MEMBER_OF_ARGUMENT_CASES = {
    "local value in an argument": (
        "f(r, a) if {\n\tn := to_number(a)\n\tn in r\n}\n\nf(r, a) if {\n\ta in r\n}\n",
        {"r": ["s"], "a": "s"},
    ),
    "call's value in an argument": (
        "f(r, a) if {\n\tto_number(a) in r\n}\n\nf(r, a) if {\n\ta in r\n}\n",
        {"r": ["s"], "a": "s"},
    ),
    "constant in an argument": (
        'f(r, a) if {\n\tto_number(a) > 0\n\t"s" in r\n}\n\nf(r, a) if {\n\ta == "s"\n}\n',
        {"r": ["s"], "a": "s"},
    ),
    "an input ref is indexed (the other definition first)": (
        "f(r, a) if {\n\tn := to_number(a)\n\tn in input.r\n}\n\nf(r, a) if {\n\ta in r\n}\n",
        {"r": ["s"], "a": "s"},
    ),
    "a number that converts": (
        "f(r, a) if {\n\tn := to_number(a)\n\tn in r\n}\n\nf(r, a) if {\n\ta in r\n}\n",
        {"r": [1], "a": "1"},
    ),
}


@pytest.mark.parametrize("name", sorted(MEMBER_OF_ARGUMENT_CASES))
def test_membership_in_a_function_argument_is_not_indexed(oracle: Any, name: str) -> None:
    body, input = MEMBER_OF_ARGUMENT_CASES[name]
    _agree(oracle, _P + body + "\ny := 1 if f(input.r, input.a)\n\nz if not f(input.r, input.a)\n", "data.p.y", input)
    _agree(oracle, _P + body + "\ny := 1 if f(input.r, input.a)\n\nz if not f(input.r, input.a)\n", "data.p.z", input)
