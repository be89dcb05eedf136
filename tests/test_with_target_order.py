"""A ``with`` target OPA refuses, next to a call of an undefined function, against OPA.

OPA checks ``with`` targets (its RewriteWithValues stage) before it looks
for undefined functions: in a query or a rule, a target that partly
replaces a rule's document is that error, not "undefined function".
Compared in every execution form.
"""

from __future__ import annotations

import pytest

import pyrego
from opa_oracle import Oracle

P = {"p.rego": 'package p\n\na[k] := 1 if k := "y"\n\nb := 1\n'}

CASES = [
    (P, "x := data.p.a.f(1) with data.p.b.x as 5"),
    (P, "x := data.p.a.x.f(1) with data.p.b.x as 5"),
    (P, "x := 1 with data.p.b.x as 5; y := data.p.f(1)"),
    (P, "x := data.p.f(1); y := 1 with data.p.b.x as 5"),
    (P, "x := data.p.f(1); y := 1 with foo.bar as 5"),
    (P, "x := data.p.f(1); y := 1 with data.p.b as 5"),
    (P, "x := data.p.a.x with data.p.a.x as 5"),
    (P, "x := data.p.b with data.p.b as 5"),
    ({**P, "q.rego": "package q\n\nr if { data.p.a.f(1) with data.p.b.x as 5 }\n"}, "x := data.q.r"),
    ({**P, "q.rego": "package q\n\nr if { data.p.f(1); 1 with data.p.b.x as 5 }\n"}, "x := data.q.r"),
    ({**P, "q.rego": "package q\n\nr if { data.p.f(1); 1 with data.p.b as 5 }\n"}, "x := data.q.r"),
    ({"p.rego": 'package p\n\na[k][j] := 1 if { k := "y"; j := "z" }\n'}, "x := data.p.a.f(1) with data.p.a.x as 5"),
]


@pytest.mark.parametrize(("modules", "query"), CASES)
def test_with_target_checked_before_undefined_functions(oracle: Oracle, execution_form: str, modules: dict[str, str], query: str) -> None:
    res = oracle.evaluate(modules, query)
    engine = pyrego.Engine()
    try:
        engine.add_policies(modules)
        got = [r["bindings"] for r in engine.eval_query(query).get("result") or []]
    except pyrego.RegoError as exc:
        assert res.is_error, (exc, res.bindings)
        assert exc.code == res.error_code
        # (OPA's message: its prefix, then the error as pyrego writes it)
        assert str(exc).split(": ", 1)[1] in (res.error_message or ""), (str(exc), res.error_message)
        return
    assert not res.is_error, (got, res.error_message)
    assert got == res.bindings
