"""``rego.metadata.rule()`` / ``chain()`` return a ``schemas`` annotation in
OPA's parsed form (``path`` and ``schema`` as name arrays, or the inline
``definition``), not as the YAML was written; compared with OPA in every
execution form."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from pyrego.conformance import canonical

MODULES = {
    "package_ref": """# METADATA
# scope: package
# title: Critical
# schemas:
# - input: schema["dependency-vulnerability-schema"]
# custom:
#  version: 0.6.5
package p

r := rego.metadata.chain()
""",
    "rule_ref": """package p

# METADATA
# schemas:
# - input.x: schema.foo.bar
# - data.q["a b"]: schema.baz
r := rego.metadata.rule()
""",
    "definition": """package p

# METADATA
# schemas:
# - input.items: {"type": "array", "items": {"type": "string"}, "maxItems": 3}
r := rego.metadata.rule()
""",
}


def _pyrego(text: str) -> Any:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", text)
    return [canonical(b["bindings"]) for b in engine.eval_query("x := data.p.r")["result"]]


@pytest.mark.parametrize("form", EXECUTION_FORMS)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_schema_annotations_match_opa(oracle: Any, name: str, form: str) -> None:
    text = MODULES[name]
    want = oracle.evaluate({"p.rego": text}, "x := data.p.r")
    assert not want.is_error, want.error_message
    with in_form(form):
        assert _pyrego(text) == [canonical(b) for b in want.bindings]


def test_schema_annotation_shape() -> None:
    """The written answer (so the test means something without OPA)."""
    got = _pyrego(MODULES["rule_ref"])
    assert got == [
        canonical(
            {
                "x": {
                    "scope": "rule",
                    "schemas": [
                        {"path": ["input", "x"], "schema": ["schema", "foo", "bar"]},
                        {"path": ["data", "q", "a b"], "schema": ["schema", "baz"]},
                    ],
                }
            }
        )
    ]
