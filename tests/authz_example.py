"""What the FastAPI and Django example tests share: the examples' policies
(examples/fastapi_authz/policy, used by both), their data, the salary rule
written in Python, and the requests whose decisions are compared with OPA's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service_servers import EXAMPLES

POLICY = EXAMPLES / "fastapi_authz" / "policy"
DATA = json.loads((POLICY / "data.json").read_text(encoding="utf-8"))


def may_read_salary(viewer: str | None, target: str, managers: dict[str, list[str]] = DATA["managers"]) -> bool:
    """policy/authz.rego's salary rules."""
    return viewer is not None and (viewer == target or target in managers.get(viewer, []))


#: Requests the FastAPI and Django examples (the same policies) answer, with
#: who asks: their decisions are compared with OPA's on the inputs recorded.
AGREEMENT_REQUESTS = [
    ("GET", "/finance/salary/alice", "bob"),
    ("GET", "/finance/salary/bob", "alice"),
    ("GET", "/finance/salary/zo%C3%AB", "bob"),
    ("GET", "/finance/salary/carol/", "carol"),
    ("POST", "/admin/reload", "carol"),
    ("POST", "/admin/reload", "bob"),
    ("GET", "/reports/q1?x=1&x=2", "dora"),
    ("GET", "//finance//salary/alice", "alice"),
]


def oracle() -> Any:
    """OPA, to compare decisions with (the test fails without it)."""
    from opa_oracle import OracleUnavailable, get_oracle

    try:
        return get_oracle()
    except OracleUnavailable as exc:
        pytest.fail(f"the OPA oracle is needed to compare decisions: {exc}")


def modules(folder: Path) -> dict[str, str]:
    """The Rego modules of ``folder``, by file name."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.rego"))}
