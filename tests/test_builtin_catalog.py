"""The builtin registry covers OPA's capabilities file, and docs/builtins.md says so
(with a signature and a description for every builtin)."""

from __future__ import annotations

import json
from pathlib import Path

from pyrego.builtins.catalog import opa_builtins, render, render_type
from pyrego.builtins.descriptions import DESCRIPTIONS
from pyrego.builtins.registry import all_builtins
from shared_material import CAPABILITIES, need_shared

REPO = Path(__file__).resolve().parent.parent


def _capabilities() -> Path:
    return need_shared(*CAPABILITIES)


def test_every_opa_builtin_is_registered_with_its_arity() -> None:
    wanted = opa_builtins(_capabilities())
    registry = all_builtins()
    missing = sorted(set(wanted) - set(registry))
    assert missing == []
    wrong = {n: (registry[n].arity, a) for n, a in wanted.items() if registry[n].arity != a}
    assert wrong == {}


def test_docs_table_matches_the_registry() -> None:
    expected = render(_capabilities())
    assert (REPO / "docs" / "builtins.md").read_text() == expected


def test_every_registered_builtin_has_a_description() -> None:
    registry = all_builtins()
    undescribed = sorted(name for name in registry if not DESCRIPTIONS.get(name, "").strip())
    assert undescribed == []
    # An entry for a name the registry does not know is a typo or a removed builtin.
    assert sorted(set(DESCRIPTIONS) - set(registry)) == []


def test_descriptions_are_single_sentences() -> None:
    bad = {n: d for n, d in DESCRIPTIONS.items() if "\n" in d or not d.endswith(".") or d != d.strip()}
    assert bad == {}


def test_deprecated_builtins_say_so() -> None:
    data = json.loads(_capabilities().read_text())
    deprecated = [b["name"] for b in data["builtins"] if b.get("deprecated")]
    assert deprecated  # the capabilities file marks some
    silent = [n for n in deprecated if not DESCRIPTIONS[n].startswith("Deprecated")]
    assert silent == []


def test_signatures_render_the_declared_types() -> None:
    data = json.loads(_capabilities().read_text())
    decls = {b["name"]: b["decl"] for b in data["builtins"]}
    assert render_type(decls["startswith"]) == "(string, string) → boolean"
    assert render_type(decls["count"]) == "(any<string, array[any], object[any: any], set[any]>) → number"
    assert render_type(decls["io.jwt.decode"]) == "(string) → [object[any: any], object[any: any], string]"
    assert render_type(decls["urlquery.decode_object"]) == "(string) → object[string: array[string]]"
    assert render_type(decls["print"]) == "(any...)"
    assert render_type(decls["json.marshal_with_options"]) == (
        '(any, {"indent": string, "prefix": string, "pretty": boolean, [string]: any}) → string'
    )
    # a one-member union is just that member
    assert render_type(decls["net.cidr_merge"]) == "(any<array[string], set[string]>) → set[string]"
