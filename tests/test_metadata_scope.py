"""``rego.metadata.rule()`` and ``rego.metadata.chain()`` as OPA answers them:
several METADATA blocks above one rule, document-scope annotations, and calls
outside any rule."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego

POLICIES = {
    "two_blocks": "# METADATA\n# title: first\n# METADATA\n# description: second\n",
    "three_blocks": "# METADATA\n# title: first\n# METADATA\n# description: second\n# METADATA\n# title: third\n",
    "document_scope": "# METADATA\n# scope: document\n# title: doc\n",
    "rule_and_document": "# METADATA\n# scope: document\n# title: doc\n# METADATA\n# title: own\n",
    "none": "",
}


@pytest.mark.parametrize("name", sorted(POLICIES))
@pytest.mark.parametrize("call", ["rule", "chain"])
def test_metadata_values_agree_with_opa(name: str, call: str, oracle: Any) -> None:
    policy = f"package p\n\n{POLICIES[name]}r := rego.metadata.{call}()\n"
    theirs = oracle.evaluate({"p.rego": policy}, "x := data.p.r")
    assert theirs.error_code is None, theirs.error_message
    e = pyrego.Engine()
    e.add_policy("p.rego", policy)
    assert e.eval_rule("data.p.r") == theirs.bindings[0]["x"]


@pytest.mark.parametrize("call", ["rule", "chain"])
def test_calls_outside_a_rule_are_errors(call: str, oracle: Any) -> None:
    theirs = oracle.evaluate({"p.rego": "package p\n"}, f"x := rego.metadata.{call}()")
    e = pyrego.Engine()
    e.add_policy("p.rego", "package p\n")
    assert e.eval_query(f"x := rego.metadata.{call}()") == {"result": []}
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.RegoError) as info:
        e.eval_query(f"x := rego.metadata.{call}()")
    assert info.value.code == theirs.error_code == "eval_builtin_error"
    assert theirs.error_message.endswith(info.value.message)
