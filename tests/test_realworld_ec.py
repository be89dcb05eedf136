"""Differences with OPA found on a policy library built around rule metadata
(rules and helper functions returning ``rego.metadata.chain()`` and
``rule()``, ``with`` mocks of data and of functions); each case is a minimal
program written here, evaluated by OPA v1.20.2 and by pyrego in every
execution form, with strict builtin errors on and off (off: only where OPA
raised no error), comparing the value, undefined, or the error's code and
message."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import agree as _agree
from pyrego.conformance import canonical

Outcome = tuple[str, Any]

_P = "package p\n\nimport rego.v1\n\n"

# The metadata calls are typed by the annotations they return (OPA checks the
# constants it puts in their place): a function whose value is the call had
# no result type (every call of it a type error), a ref into the value was
# not checked, and the value's keys and types were unknown to later checks.
METADATA_TYPE_CASES = {
    "function value is the chain": (
        "# METADATA\n# title: F\nf(x) := rego.metadata.chain() if x\n\n# METADATA\n# title: R\nr := f(true)\n",
        "data.p.r",
    ),
    "function value is the rule's annotations": ("f(_) := rego.metadata.rule()\nr := f(1)\n", "data.p.r"),
    "a key of a function's annotations": ("# METADATA\n# title: T\nf(_) := rego.metadata.rule()\nr := upper(f(1).title)\n", "data.p.r"),
    "annotations in a function's object value": ('f(x) := {"a": rego.metadata.chain()} if x\nr := f(true).a[0].path\n', "data.p.r"),
    "annotations in an array head": ("# METADATA\n# title: T\nr := [rego.metadata.rule()]\ns := r[0].title\n", "data.p.s"),
    "a missing key of the annotations": ("# METADATA\n# title: T\nr := rego.metadata.rule().custom.short_name\n", "data.p.r"),
    "a missing key under not": ("# METADATA\n# title: T\nr if not rego.metadata.rule().nope\n", "data.p.r"),
    "an index past the chain": ("# METADATA\n# title: T\nr := rego.metadata.chain()[5]\n", "data.p.r"),
    "annotations added to a number": ("# METADATA\n# title: T\nr if { x := rego.metadata.rule(); x + 1 }\n", "data.p.r"),
    "a function's annotations added to a number": ("# METADATA\n# title: T\nf(_) := rego.metadata.rule()\nr := f(1) + 1\n", "data.p.r"),
    "custom values keep their types": (
        '# METADATA\n# custom:\n#   n: 3\n#   l: [1, "a"]\nr := rego.metadata.rule().custom.n + rego.metadata.rule().custom.l[0]\n',
        "data.p.r",
    ),
    "an unannotated rule's key": ("r := rego.metadata.rule().title\n", "data.p.r"),
    "an else branch's annotations": ("# METADATA\n# title: A\nr := rego.metadata.rule() if {\n\tfalse\n} else := rego.metadata.rule()\n", "data.p.r"),
}


@pytest.mark.parametrize("name", list(METADATA_TYPE_CASES))
def test_metadata_calls_typed_as_opa(oracle: Any, name: str) -> None:
    body, ref = METADATA_TYPE_CASES[name]
    _agree(oracle, _P + body, ref)


# A rule that is not a function, called with arguments: OPA takes its arity
# as 0 when it checks calls (``function data.p.a has arity 0, got 1
# argument``), and the type check finds no function there when the count
# fits (``undefined function``); pyrego said "undefined function" for all.
RULE_CALLED_CASES = {
    "a complete rule, nested call": ("a := 1\nr := a(1)\n", "data.p"),
    "a partial set": ("a contains 1\nr := a(1)\n", "data.p"),
    "a partial object": ("a[x] := 1 if x := 2\nr := a(2)\n", "data.p"),
    "a default rule": ("default a := 1\nr := a(1)\n", "data.p"),
    "a ref head": ("a.b := 1\nr := a.b(1)\n", "data.p"),
    "two arguments as a statement": ("a := 1\nr if a(1, 2)\n", "data.p"),
    "one argument as a statement": ("a := 1\nr if a(1)\n", "data.p"),
    "no argument": ("a := 1\nr := a()\n", "data.p"),
    "a prefix of rules": ("a.b.c := 1\nr := a.b(1)\n", "data.p"),
    "a package": ("r := data.p(1)\n", "data.p"),
    "in a comprehension": ("a := 1\nr := [x | x := a(1)]\n", "data.p"),
}


@pytest.mark.parametrize("name", list(RULE_CALLED_CASES))
def test_rule_called_as_function_as_opa(oracle: Any, name: str) -> None:
    body, ref = RULE_CALLED_CASES[name]
    _agree(oracle, _P + body, ref)


# OPA checks with targets and body safety before types: a variable only a
# comprehension's head mentions made pyrego's type check fail first (``match
# error``), where OPA reports the unsafe variable; so did a genuine type
# error beside one, and a refused with target in a program that fails the
# type check.
UNSAFE_BEFORE_TYPES_CASES = {
    "a set comprehension's head": ("r := {x | y := 1}\n", "data.p"),
    "an object comprehension's key": ("r := {x: 1 | y := 1}\n", "data.p"),
    "an object comprehension's value": ("r := {1: x | y := 1}\n", "data.p"),
    "a comprehension in a body": ("r if { s := {x | y := 1}; count(s) > 0 }\n", "data.p"),
    "a nested array": ("r := [[x] | y := 1]\n", "data.p"),
    "a type error in another rule": ('r := {x | y := 1}\ns := 1 + "a"\n', "data.p"),
    # (OPA checks with targets before both)
    "a with target in a rule's value, read past it": ("a := 5\ng := data.p.a.b\nr := z if z := g with data.p.a.b as 1\n", "data.p"),
    "a with target and an unsafe variable": ("a := 5\nr := {x | y := 1}\ns := z if z := a with data.p.a.b as 1\n", "data.p"),
}


@pytest.mark.parametrize("name", list(UNSAFE_BEFORE_TYPES_CASES))
def test_unsafe_variables_before_types_as_opa(oracle: Any, name: str) -> None:
    body, ref = UNSAFE_BEFORE_TYPES_CASES[name]
    _agree(oracle, _P + body, ref)


# rego.metadata.chain() in an else branch: OPA gives the rule's path and the
# document, package and subpackages annotations (the branch has none of its
# own); pyrego gave an entry with an empty path and nothing more.
_ELSE_MODULE = """# METADATA
# title: PKG
package p

import rego.v1

# METADATA
# scope: document
# title: DOC

# METADATA
# title: A
r := rego.metadata.chain() if {
	false
} else := rego.metadata.chain()

# METADATA
# title: F
f(x) := rego.metadata.chain() if {
	x
} else := rego.metadata.chain() if {
	true
} else := 1

s := f(false)

t := rego.metadata.chain()[1].annotations.title if {
	false
} else := rego.metadata.chain()[1].annotations.title
"""


@pytest.mark.parametrize("ref", ["data.p.r", "data.p.s", "data.p.t"])
def test_metadata_chain_in_else_branch_as_opa(oracle: Any, ref: str) -> None:
    _agree(oracle, _ELSE_MODULE, ref)


# OPA keeps a function's defined value per arguments for the evaluation: a
# second call with equal arguments runs nothing, so a function that prints
# prints once (an undefined value is not kept; a with starts afresh).
# pyrego ran the function again and printed twice.
_MEMO = """package p

import rego.v1

f(x) := y if {
	print("f", x)
	y := x
}

g(x) := y if {
	print("g", x)
	y := f(x) + f(x)
}

u(x) := y if {
	print("u", x)
	y := x
	false
}

h(x) := 1 if {
	print("h1", x)
	x < 0
} else := 2 if print("h2", x)

m(x) := x * 10

k(x) := y if {
	print("k", x)
	y := f(x)
}
"""

MEMO_CASES = {
    "two calls": "r if { f(1); f(1); f(2) }",
    "equal object arguments": 'r if { f({"a": {1, 2}}); f({"a": {2, 1}}) }',
    "numbers and booleans": 'r := [f(1), f(1.0), f(true), f("1")]',
    "across rules": "a := f(1)\nb := f(1)\nr if { a; b }",
    "nested calls": "r if { g(1); g(1) }",
    "undefined values run again": "r if { not u(1); not u(1) }",
    "else branches": "r if { h(1); h(1) }",
    "in a comprehension": "r := [f(1) | some _ in [1, 2]]",
    "with an output argument": "r if { f(1, a); f(1, b); a == b }",
    "with starts afresh": "r := [k(1), a, k(1)] if { a := k(1) with f as m }",
    "with input": "r := [a, k(2)] if { k(2); a := k(2) with input.q as 5 }",
}


@pytest.mark.parametrize("name", list(MEMO_CASES))
def test_function_values_kept_per_arguments_as_opa(oracle: Any, name: str) -> None:
    module = _MEMO + "\n" + MEMO_CASES[name] + "\n"
    want, want_prints = _opa_prints(oracle, module, "data.p.r")
    for form in EXECUTION_FORMS:
        for strict in (True, False):
            with in_form(form):
                got, got_prints = _pyrego_prints(module, "data.p.r", strict)
            assert (got, got_prints) == (want, want_prints), f"{form}, strict={strict}"


def _opa_prints(oracle: Any, module: str, ref: str) -> tuple[Outcome, list[str]]:
    prints: list[str] = []
    res = oracle.evaluate({"p.rego": module}, f"x := {ref}", prints=prints)
    assert not res.is_error, res.error_message
    return (("value", canonical(res.bindings[0]["x"])) if res.bindings else ("undefined", None)), prints


def _pyrego_prints(module: str, ref: str, strict: bool) -> tuple[Outcome, list[str]]:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    engine.add_policy("p.rego", module)
    value = engine.eval_rule(ref)
    got: Outcome = ("undefined", None) if value is pyrego.UNDEFINED else ("value", canonical(pyrego.json_ready(value)))
    return got, engine.take_prints()
