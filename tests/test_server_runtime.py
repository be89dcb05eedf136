"""The policy server's runtime (atomic activation, plugins, decision events) and its app mounted in other services."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from pyrego.errors import RegoError
from pyrego.server import ServerRuntime, create_app
from pyrego.server.runtime import rfc3339_nano
from server_helpers import serving

POLICY = "package authz\n\ndefault allow := false\n\nallow if input.user == data.admins[_]\n"


class Collect:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def log(self, event: dict[str, Any]) -> None:
        self.events.append(event)


def test_decision_events() -> None:
    logs = Collect()
    runtime = ServerRuntime({"a.rego": POLICY}, {"admins": ["alice"]}, decision_logger=logs)
    runtime.activate({"a.rego": POLICY}, {"admins": ["alice"]}, bundles={"main": "rev-7"})
    with serving(create_app(runtime)) as url:
        r = httpx.post(url + "/v1/data/authz/allow", json={"input": {"user": "alice"}})
        httpx.get(url + "/v1/data/nothing")
        httpx.post(url + "/v1/query", json={"query": "data.admins[_] = x", "input": {"a": 1}})
    first, second, third = logs.events
    assert third["query"] == "data.admins[_] = x" and third["result"] == [{"x": "alice"}] and third["input"] == {"a": 1}
    assert first["decision_id"] == r.json()["decision_id"]
    assert first["path"] == "authz/allow"
    assert first["input"] == {"user": "alice"}
    assert first["result"] is True
    assert first["bundles"] == {"main": {"revision": "rev-7"}}
    assert re.fullmatch(r"127\.0\.0\.1:\d+", first["requested_by"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z", first["timestamp"])
    assert first["metrics"]["timer_rego_query_eval_ns"] > 0
    assert first["labels"]["id"] == runtime.instance_id
    assert "result" not in second and "input" not in second  # undefined, and no input sent


def test_rfc3339_nano() -> None:
    assert rfc3339_nano(1_700_000_000_000_000_000) == "2023-11-14T22:13:20Z"
    assert rfc3339_nano(1_700_000_000_120_000_000) == "2023-11-14T22:13:20.12Z"
    assert rfc3339_nano(1_700_000_000_000_000_001) == "2023-11-14T22:13:20.000000001Z"


def test_activate_is_all_or_nothing() -> None:
    runtime = ServerRuntime({"a.rego": POLICY}, {"admins": ["alice"]})
    before = runtime.snapshot
    with pytest.raises(RegoError):
        runtime.activate({"a.rego": POLICY, "b.rego": "package b\n\np := q\n"}, {"admins": ["bob"]})
    assert runtime.snapshot is before
    with pytest.raises(RegoError):
        runtime.activate({"a.rego": POLICY}, {"authz": {"allow": 1}})  # data where a rule is
    assert runtime.snapshot is before
    runtime.activate({"a.rego": POLICY}, {"admins": ["bob"]}, bundles={"b": "r1"})
    snap = runtime.snapshot
    assert snap.engine.eval_rule("data.authz.allow", input={"user": "bob"}) is True
    assert before.engine.eval_rule("data.authz.allow", input={"user": "bob"}) is False  # (the old snapshot is intact)
    assert snap.bundles == {"b": "r1"}


def test_plugin_states() -> None:
    runtime = ServerRuntime()
    with pytest.raises(ValueError):
        runtime.set_plugin_status("bundle", "FINE")
    runtime.set_plugin_status("bundle", "ERROR", "download failed")
    assert runtime.plugin_statuses() == {"bundle": {"state": "ERROR", "message": "download failed"}}


def test_mounted_in_fastapi_and_starlette() -> None:
    from fastapi import FastAPI

    api = FastAPI()

    @api.get("/hello")
    def hello() -> dict[str, str]:
        return {"hello": "world"}

    api.mount("/opa", create_app(policies={"a.rego": POLICY}, data={"admins": ["alice"]}))
    with serving(api) as url:
        assert httpx.get(url + "/hello").json() == {"hello": "world"}
        r = httpx.post(url + "/opa/v1/data/authz/allow", json={"input": {"user": "alice"}})
        assert r.json()["result"] is True
        assert [p["id"] for p in httpx.get(url + "/opa/v1/policies").json()["result"]] == ["a.rego"]
        assert httpx.get(url + "/opa/v1/policies/a.rego").json()["result"]["id"] == "a.rego"
        assert httpx.put(url + "/opa/v1/data/admins", json=["bob"]).status_code == 204
        assert httpx.post(url + "/opa/v1/data/authz/allow", json={"input": {"user": "alice"}}).json()["result"] is False
