"""``rego.metadata.rule()`` / ``chain()`` return annotations as OPA's parsed
``Annotations`` struct holds them, not as the YAML was written: ``schemas`` as
``path`` and ``schema`` name arrays (or the inline ``definition``), scalars
decoded into strings (``true``, not ``True``), empty fields and ``compile``
left out, a related resource's non-string description dropped; compared with
OPA in every execution form."""

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

_FIELD_BLOCKS = [
    "# title: 12\n# description: true",
    '# entrypoint: false\n# title: ""',
    "# organizations:\n# - 5\n# - x",
    "# related_resources:\n# - ref: https://a.b\n#   description: 7",
    '# authors:\n# - email: a@b\n# - name: N\n#   email: ""',
    "# authors:\n# - <a@b>\n# - x <>",
    '# custom: {}\n# description: ""',
    "# title: t\n# compile:\n#   unknowns: [input.x]",
]
for _i, _block in enumerate(_FIELD_BLOCKS):
    MODULES[f"fields_{_i}"] = f"package p\n\n# METADATA\n{_block}\nr := rego.metadata.rule()\n"


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
