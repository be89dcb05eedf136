"""The policy server's runtime (atomic activation, plugins, decision events) and its app mounted in other services."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from pyrego import UNDEFINED
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


def test_activate_bundles_replaces_only_what_bundles_own() -> None:
    import io

    from pyrego.bundle.activate import plan_activation
    from pyrego.bundle.model import Bundle
    from pyrego.bundle.reader import read_bundle_bytes
    from pyrego.bundle.writer import write_bundle

    def bundle(rev: str, roots: list[str], modules: dict[str, str], data: dict[str, Any], v0: bool = False) -> Bundle:
        b = Bundle()
        b.manifest.revision, b.manifest.roots = rev, roots
        if v0:
            b.manifest.rego_version = 0
        b.modules.update(modules)
        b.data = data
        buf = io.BytesIO()
        write_bundle(b, buf)
        return read_bundle_bytes(buf.getvalue())

    runtime = ServerRuntime({"local.rego": "package local\n\nx := data.other.v\n"}, {"other": {"v": 1}, "app": {"old": True}})
    one = bundle("1", ["app"], {"/app/p.rego": "package app\n\nr = data.app.rev { true }\n"}, {"app": {"rev": "1"}}, v0=True)
    runtime.activate_bundles(plan_activation({"b": one}))
    snap = runtime.snapshot
    assert snap.engine.eval_rule("data.app.r") == "1" and snap.engine.eval_rule("data.local.x") == 1
    assert snap.data == {"other": {"v": 1}, "app": {"rev": "1"}}  # (app.old was under the new root)
    assert snap.bundles == {"b": "1"} and snap.roots == {"b": ["app"]} and set(snap.policies) == {"local.rego", "b/app/p.rego"}
    # Writes outside the roots keep the bundle's modules as parsed (Rego v0 here).
    runtime.write_data([("add", ["other", "v"], 2)])
    runtime.put_policy("more.rego", "package more\n\ny := 3\n")
    assert runtime.snapshot.engine.eval_rule("data.local.x") == 2 and runtime.snapshot.engine.eval_rule("data.app.r") == "1"
    with pytest.raises(RegoError, match="is owned by bundle"):
        runtime.check_path_scope(["app", "x"])
    with pytest.raises(RegoError, match="can't write to document root"):
        runtime.check_path_scope([])
    runtime.check_path_scope(["apple"])
    # The next revision replaces the bundle's modules and data; a failing one changes nothing.
    two = bundle("2", ["app"], {"/app/q.rego": "package app\n\ns := data.app.rev\n"}, {"app": {"rev": "2"}})
    runtime.activate_bundles(plan_activation({"b": two}))
    snap = runtime.snapshot
    assert snap.engine.eval_rule("data.app.s") == "2" and snap.engine.eval_rule("data.app.r") is UNDEFINED
    assert set(snap.policies) == {"local.rego", "more.rego", "b/app/q.rego"} and snap.data["other"] == {"v": 2}
    bad = bundle("3", ["app"], {"/app/q.rego": "package app\n\ns := y\n"}, {"app": {"rev": "3"}})
    with pytest.raises(RegoError):
        runtime.activate_bundles(plan_activation({"b": bad}))
    assert runtime.snapshot is snap
