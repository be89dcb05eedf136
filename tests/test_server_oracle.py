"""Decisions of the policy server against OPA's (the oracle), asked through the real OPA REST client (opa-python-client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from pyrego.server import ServerRuntime, create_app
from server_helpers import serving

POLICIES: dict[str, tuple[str, str, list[Any]]] = {
    "rbac": (
        """package rbac

default allow := false

allow if {
	some grant in user_grants
	grant.action == input.action
	grant.type == input.type
}

user_grants contains grant if {
	some role in data.user_roles[input.user]
	some grant in data.role_grants[role]
}
""",
        "allow",
        [
            {"user": "alice", "action": "read", "type": "dog"},
            {"user": "bob", "action": "update", "type": "cat"},
            {"user": "bob", "action": "read", "type": "cat"},
            {"user": "nobody", "action": "read", "type": "dog"},
        ],
    ),
    "numbers": (
        """package numbers

total := sum(input.xs)

ratio := total / count(input.xs)

big := input.n * input.n

sorted_keys := sort(object.keys(input.obj))
""",
        "",
        [
            {"xs": [1, 2, 3.5], "n": 12345678901234567890, "obj": {"b": 1, "a": 2}},
            {"xs": [0.1, 0.2], "n": 3, "obj": {}},
        ],
    ),
    "strings": (
        """package strings

greeting := sprintf("%s <%d>", [input.name, count(input.name)])

parts := split(input.path, "/")

m := {p: upper(p) | some p in parts; p != ""}
""",
        "",
        [{"name": "zoë & co", "path": "/a/b/c"}, {"name": "", "path": ""}],
    ),
}

DATA = {
    "user_roles": {"alice": ["admin"], "bob": ["employee", "billing"]},
    "role_grants": {
        "admin": [{"action": "read", "type": "dog"}, {"action": "read", "type": "cat"}],
        "billing": [{"action": "read", "type": "finance"}],
        "employee": [{"action": "read", "type": "cat"}],
    },
}


@pytest.fixture(scope="module")
def opa() -> Iterator[Any]:
    from opa_client.opa import OpaClient

    with serving(create_app(ServerRuntime(data=DATA))) as url:
        u = urlparse(url)
        client = OpaClient(host=u.hostname or "127.0.0.1", port=u.port or 0, timeout=30)
        yield client
        client.close_connection()


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_decisions_match_opa(opa: Any, oracle: Any, name: str) -> None:
    text, rule, inputs = POLICIES[name]
    assert opa.update_policy_from_string(text, name) is True
    for input in inputs:
        ours = opa.query_rule(input, name, rule or None)
        want = oracle.evaluate({f"{name}.rego": text}, f"x := data.{name}{'.' + rule if rule else ''}", input=input, data=DATA)
        assert not want.is_error, want
        expected = want.bindings[0]["x"] if want.bindings else None
        assert ours.get("result") == _plain(expected), (name, input, ours)


def _plain(v: Any) -> Any:
    """The oracle reads numbers as Decimal: as the JSON reader of the client does (int or float)."""
    from decimal import Decimal

    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() and "." not in str(v) and "E" not in str(v).upper() else float(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def test_opa_client_calls(opa: Any) -> None:
    assert opa.check_health() is True
    assert opa.update_or_create_data({"limit": 3}, "settings") is True
    assert opa.get_data("settings")["result"] == {"limit": 3}
    assert opa.patch_data("settings", [{"op": "replace", "path": "/limit", "value": 4}]) is True
    assert opa.get_data("settings/limit")["result"] == 4
    assert opa.ad_hoc_query("data.settings.limit = x")["result"] == [{"x": 4}]
    assert opa.update_policy_from_string("package cfg\n\nok := data.settings.limit > 1\n", "cfg") is True
    assert "cfg" in opa.get_policies_list()
    assert opa.get_policy("cfg")["result"]["id"] == "cfg"
    assert opa.delete_policy("cfg") is True
    assert opa.delete_data("settings") is True
    assert "http_request_duration_seconds" in opa.get_metrics()
    assert opa.get_config()["result"]["labels"]["version"]
    assert opa.get_status()["result"]["labels"]["version"]
