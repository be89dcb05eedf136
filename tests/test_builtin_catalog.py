"""The builtin registry covers OPA's capabilities file, and docs/builtins.md says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED_DIR
from pyrego.builtins.catalog import opa_builtins, render
from pyrego.builtins.registry import all_builtins

REPO = Path(__file__).resolve().parent.parent


def _capabilities() -> Path:
    if SHARED_DIR is None:
        pytest.skip("../shared (OPA capabilities file) is not present")
    return SHARED_DIR / "opa" / "capabilities-v1.20.2.json"


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
