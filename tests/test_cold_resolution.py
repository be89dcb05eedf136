"""Name resolution tries each rule first as if it had no local variable (the
commonest rule, ``allow if input.x == 1``), giving up at the first local,
declaration or closure it meets and resolving the rule again with its
scope; the rules it finds without locals skip later searches for
variables, comprehensions and head terms to move. Each case is a minimal
program written here, evaluated by OPA v1.20.2 and by pyrego in every
execution form, with strict builtin errors on and off (off: only where OPA
raised no error), comparing the value, undefined, or the error's code and
message. Also: a program whose compilation gave something up (the
resolver's first try, the type checker's screen) is freed with its engine."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

import pyrego
from opa_compare import agree

_INPUT = {"x": 1, "xs": [1, 2, 3], "user": {"role": "admin", "name": "ann"}, "k": "a"}


_P = "package p\n\n"

CASES = {
    "no locals": "r if {\n  input.x == 1\n  count(input.xs) > 2\n}\n",
    "a rule name and an import, no locals": "import data.p.s as t\n\ns := 2\n\nr := t + s if input.user.role == \"admin\"\n",
    "a local in the last expression": 'r if {\n  input.x == 1\n  upper(input.user.name) == "ANN"\n  x := input.x\n  x > 0\n}\n',
    "a local in the head only": "r[k] := 1 if {\n  input.x == 1\n  k := input.k\n}\n",
    "a local bound by iteration at the end": "r contains v if {\n  input.x == 1\n  v := input.xs[_]\n}\n",
    "some declared after calls": "r if {\n  count(input.xs) == 3\n  some i\n  input.xs[i] == 2\n}\n",
    "some in after calls": "r if {\n  input.x == 1\n  some v in input.xs\n  v > 2\n}\n",
    "every after calls": "r if {\n  input.x == 1\n  every v in input.xs { v > 0 }\n}\n",
    "a comprehension after calls": "r := n if {\n  input.x == 1\n  n := count([v | some v in input.xs; v > 1])\n}\n",
    "a comprehension in the head": "r := [v | some v in input.xs; v > 1] if input.x == 1\n",
    "else chain, locals in one branch": 'r := "a" if {\n  input.x == 2\n} else := y if {\n  y := input.k\n} else := "c"\n',
    "else chain without locals": 'r := "a" if input.x == 2\nelse := "b" if input.x == 1\n',
    "function with and without locals": "f(a) := a + 1\n\ng(a) := b if {\n  b := a * 2\n}\n\nr := f(1) + g(input.x)\n",
    "print in a rule without locals": 'r if {\n  print("x", input.x)\n  input.x == 1\n}\n',
    "metadata call without locals": "# METADATA\n# title: T\nr := rego.metadata.rule().title if input.x == 1\n",
    "assignment in a negation, after calls": "r if {\n  input.x == 1\n  not x := 1\n}\n",
    "variable assigned twice": "r if {\n  input.x == 1\n  x := 1\n  x := 2\n}\n",
    "an unsafe local": "r if {\n  input.x == 1\n  y > 0\n}\n",
    "unsafe head variable": "r[k] := 1 if input.x == 1\n",
    "a builtin name as a with value and as a local": "f(x) := count(x)\n\nr := f([1]) with count as upper if {\n  upper := 1\n  upper == 1\n}\n",
    "a local named like a rule": "s := 1\n\nr := s if {\n  s := 2\n  s > 1\n}\n",
    "a template string with a local": 'r := $"{x}-{input.k}" if {\n  x := input.x\n}\n',
    "an undefined function after calls": "r if {\n  input.x == 1\n  nope(input.x)\n}\n",
}


# A rule with an unsafe variable in its head, beside rules without locals
# whose bodies are the same empty tuple as its own: what is known of their
# bodies is not known of it. The compile error is the program's, whichever
# rule is asked for.
UNSAFE_BESIDE = {
    "a constant": "c := 1\n\nr := nput.users[0]\n",
    "a ref into input": "c := input.x\n\nr := nput.users[0].name\n",
    "a function": "f(x) := x + 1\n\nc := f(1)\n\nr := nput.users[0]\n",
}


def _agree(oracle: Any, module: str, ref: str) -> None:
    agree(oracle, module, ref, _INPUT)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rules_with_and_without_locals_agree_with_opa(oracle: Any, name: str) -> None:
    _agree(oracle, _P + CASES[name], "data.p.r")


@pytest.mark.parametrize("name", sorted(UNSAFE_BESIDE))
def test_unsafe_head_beside_rules_without_locals_agrees_with_opa(oracle: Any, name: str) -> None:
    _agree(oracle, _P + UNSAFE_BESIDE[name], "data.p.c")


@pytest.mark.parametrize(
    "policy",
    [
        # (the type checker's screen gives `every` up to the full check)
        "package p\n\nr if {\n  every v in input.xs { v > 0 }\n}\n",
        # (name resolution's first try gives up at the local)
        "package p\n\nr if {\n  input.x == 1\n  some v in input.xs\n  v > 2\n}\n",
    ],
)
def test_program_compiled_after_giving_something_up_is_freed_with_its_engine(policy: str) -> None:
    # The program is compiled by the first evaluation, while an exception
    # (the engine's lookup of the rule) is being handled: an exception kept
    # from compiling would hold that frame, and so the engine, in its context.
    pyrego.clear_compile_cache()
    enabled = gc.isenabled()
    gc.disable()
    try:
        engine = pyrego.Engine()
        engine.add_policy("p.rego", policy)
        engine.set_input(_INPUT)
        assert engine.eval_rule("data.p.r") is True
        tree = weakref.ref(engine._get_program().tree.root)
        del engine
        # (no cyclic collection: nothing but the engine held it)
        assert tree() is None
    finally:
        if enabled:
            gc.enable()
