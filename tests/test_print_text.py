"""``print`` and template strings write values as Rego text, as OPA does:
``{"a": [1, 2]}`` with spaces, sets as ``{1, 2}`` or ``set()``, strings
quoted inside composites and bare at the top."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego

VALUES = [
    '{"a": [1, 2.5, "s"], "b": {"c": null}}',
    "{1, 2}",
    "set()",
    '"str"',
    "[true, false, null]",
    "{[1]: 2, {3}: {}}",
    '{"k": {"x", "y"}}',
    '["é", "tab\\there"]',
    "{{1, 2}, set()}",
]


@pytest.fixture(scope="module")
def opa_engine_class(oracle: Any) -> Any:
    from opa_bindings.engine import OpaEngine

    return OpaEngine


@pytest.mark.parametrize("value", VALUES)
def test_print_writes_values_as_opa_does(value: str, opa_engine_class: Any) -> None:
    policy = f"package p\n\nx if {{ print({value}) }}\n"
    opa = opa_engine_class()
    opa.print_handler = lambda message, location: None
    opa.add_policy("p.rego", policy)
    opa.eval_query("data.p.x")
    (theirs,) = [message for message, _ in opa.last_prints]
    e = pyrego.Engine()
    e.add_policy("p.rego", policy)
    assert e.eval_rule("data.p.x") is True
    assert e.take_prints() == [theirs]


@pytest.mark.parametrize("value", VALUES)
def test_template_strings_write_values_as_opa_does(value: str, oracle: Any) -> None:
    policy = f'package p\n\nx := $"<{{{value}}}>"\n'
    theirs = oracle.evaluate({"p.rego": policy}, "x := data.p.x")
    e = pyrego.Engine()
    e.add_policy("p.rego", policy)
    assert e.eval_rule("data.p.x") == theirs.bindings[0]["x"]
