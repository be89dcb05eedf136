"""Rego v0: ``input := ...`` (or ``data := ...``) in a body declares a local.

OPA's v0 compiler takes a root document assigned with ``:=`` for a local
variable: the rest of the body reads the local, while a ``with input as ...``
target still names the document. Policy test files lean on this
(``input := {...}; results := deny with input as input``). The oracle parses
Rego v1 only, where that name is refused, so each case is compared with OPA
on the same policy with the local renamed, which is what v0 means by it.
"""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import in_form

RULES = "package p\n\nr[x] { x := input.a }\n\n"
INPUT = {"a": 5}

#: (body of ``t = res { ... }`` in v0, the same in v1 with the local renamed)
CASES = [
    ('input := {"a": 1}\n  res := input', 'inp := {"a": 1}\n  res := inp'),
    ('input := {"a": 1}\n  res := input.a', 'inp := {"a": 1}\n  res := inp.a'),
    ('input := {"a": 1}\n  res := r with input as input', 'inp := {"a": 1}\n  res := r with input as inp'),
    ('input := {"a": 1}\n  res := [y | y := input.a]', 'inp := {"a": 1}\n  res := [y | y := inp.a]'),
    ('x := input.a\n  res := x', 'x := input.a\n  res := x'),
    ('data := {"p": 2}\n  res := data.p', 'dat := {"p": 2}\n  res := dat.p'),
]


def _v1(body: str) -> str:
    return "package p\n\nr contains x if { x := input.a }\n\nt := res if {\n  " + body + "\n}\n"


@pytest.mark.parametrize("form", ["closures", "compact", "fast"])
@pytest.mark.parametrize("v0, v1", CASES, ids=[c[0].split("\n")[0] + " / " + c[0].split("\n")[-1].strip() for c in CASES])
def test_local_root_reads_as_opa_reads_it(v0: str, v1: str, form: str, oracle: Any) -> None:
    want = oracle.evaluate({"p.rego": _v1(v1)}, "x := data.p.t", input=INPUT)
    assert not want.is_error and want.bindings, want
    with in_form(form):
        engine = pyrego.Engine()
        engine.set_rego_v0(True)
        engine.add_policy("p.rego", RULES + "t = res {\n  " + v0 + "\n}\n")
        got = engine.eval_query("x := data.p.t", input=INPUT)["result"]
    assert [r["bindings"] for r in got] == want.bindings


def test_rego_v1_still_refuses_the_name(oracle: Any) -> None:
    text = _v1('input := {"a": 1}\n  res := input')
    engine = pyrego.Engine()
    with pytest.raises(pyrego.RegoCompileError) as err:
        engine.add_policy("p.rego", text)
        engine.eval_query("x := data.p.t")
    want = oracle.evaluate({"p.rego": text}, "x := data.p.t")
    assert want.error_code == err.value.code
    assert "variables must not shadow input" in str(err.value) and "variables must not shadow input" in (want.error_message or "")
