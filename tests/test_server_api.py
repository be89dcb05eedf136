"""The policy server's REST API through real HTTP (uvicorn on 127.0.0.1): OPA's status codes and bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from pyrego.server import ServerOptions, ServerRuntime, create_app
from server_helpers import serving

# The scenario of OPA's REST API documentation: servers, networks and ports.
EXAMPLE = """package opa.examples

import data.networks
import data.ports
import data.servers

public_servers contains server if {
	some k, m
	server := servers[_]
	server.ports[_] == ports[k].id
	ports[k].networks[_] == networks[m].id
	networks[m].public == true
}

violations contains server if {
	server := servers[_]
	server.protocols[_] == "http"
	public_servers[server]
}
"""

DATA = {
    "servers": [
        {"id": "s1", "name": "app", "protocols": ["https", "ssh"], "ports": ["p1", "p2", "p3"]},
        {"id": "s2", "name": "db", "protocols": ["mysql"], "ports": ["p3"]},
        {"id": "s3", "name": "cache", "protocols": ["memcache", "http"], "ports": ["p3"]},
        {"id": "s4", "name": "dev", "protocols": ["http"], "ports": ["p1", "p2"]},
    ],
    "networks": [{"id": "n1", "public": False}, {"id": "n2", "public": False}, {"id": "n3", "public": True}],
    "ports": [{"id": "p1", "networks": ["n1"]}, {"id": "p2", "networks": ["n3"]}, {"id": "p3", "networks": ["n2"]}],
}

AUTHZ = """package example.authz

default allow := false

allow if input.user == "alice"

allow if {
	input.method == "GET"
	input.path == ["salary", input.user]
}
"""


@pytest.fixture
def runtime() -> ServerRuntime:
    return ServerRuntime({"example.rego": EXAMPLE, "authz.rego": AUTHZ}, DATA)


@pytest.fixture
def base(runtime: ServerRuntime) -> Iterator[str]:
    with serving(create_app(runtime, options=ServerOptions(max_body=32 * 1024 * 1024))) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=30) as c:
        yield c


def _sid(servers: list[dict]) -> list[str]:
    return sorted(s["id"] for s in servers)


# -- Data API: reads ----------------------------------------------------------------------------


def test_get_document_from_the_docs_example(client: httpx.Client) -> None:
    r = client.get("/v1/data/opa/examples/violations")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert _sid(body["result"]) == ["s4"]
    assert len(body["decision_id"]) == 36


def test_get_with_input_parameter_and_post_with_input(client: httpx.Client) -> None:
    r = client.get("/v1/data/example/authz/allow", params={"input": json.dumps({"user": "alice"})})
    assert r.json()["result"] is True
    r = client.post("/v1/data/example/authz/allow", json={"input": {"user": "bob", "method": "GET", "path": ["salary", "bob"]}})
    assert r.json()["result"] is True and "warning" not in r.json()
    r = client.post("/v1/data/example/authz/allow", json={"input": {"user": "bob", "method": "POST", "path": []}})
    assert r.json()["result"] is False


def test_post_without_input_key_warns(client: httpx.Client) -> None:
    r = client.post("/v1/data/example/authz/allow", json={"user": "alice"})
    body = r.json()
    assert r.status_code == 200
    assert body["result"] is False
    assert body["warning"] == {"code": "api_usage_warning", "message": "'input' key missing from the request"}
    # GET sends no body: no warning
    assert "warning" not in client.get("/v1/data/example/authz/allow").json()


def test_undefined_document_is_an_empty_object(client: httpx.Client) -> None:
    r = client.get("/v1/data/no/such/doc")
    assert r.status_code == 200
    assert set(r.json()) == {"decision_id"}
    r = client.post("/v1/data/no/such/doc", json={"input": {}})
    assert set(r.json()) == {"decision_id"}


def test_post_v1_data_without_path_is_all_of_data(client: httpx.Client) -> None:
    r = client.post("/v1/data", json={"input": {"user": "alice"}})
    result = r.json()["result"]
    assert result["example"]["authz"]["allow"] is True
    assert result["servers"] == DATA["servers"]


def test_metrics_provenance_pretty_and_explain(client: httpx.Client) -> None:
    r = client.get("/v1/data/opa/examples/public_servers?metrics&provenance&pretty=true")
    assert r.text.startswith("{\n  ")
    body = r.json()
    assert {"timer_rego_query_eval_ns", "timer_server_handler_ns", "timer_rego_input_parse_ns"} <= set(body["metrics"])
    assert body["provenance"]["version"]
    r = client.get("/v1/data/example/authz/allow", params={"explain": "full", "pretty": "true", "input": '{"user": "alice"}'})
    lines = r.json()["explanation"]
    assert any("Enter data.example.authz.allow" in line for line in lines), lines
    r = client.get("/v1/data/example/authz/allow", params={"explain": "full", "input": '{"user": "alice"}'})
    events = r.json()["explanation"]
    assert events[0]["op"] == "enter" and events[0]["type"] == "body"
    assert {"enter", "eval", "exit"} <= {e["op"] for e in events}
    r = client.post("/v1/query?explain=notes&pretty", json={"query": 'trace("hi")'})
    assert any("Note \"hi\"" in line for line in r.json()["explanation"]), r.json()


def test_strict_builtin_errors_parameter(client: httpx.Client) -> None:
    r = client.put("/v1/policies/strict", content='package strict\n\nx := to_number("nope")\n')
    assert r.status_code == 200, r.text
    assert set(client.get("/v1/data/strict/x").json()) == {"decision_id"}
    r = client.get("/v1/data/strict/x?strict-builtin-errors")
    assert r.status_code == 500
    body = r.json()
    assert body["code"] == "internal_error"
    assert body["message"] == "error(s) occurred while evaluating query"
    assert body["errors"][0]["code"] == "eval_builtin_error"


def test_conflict_error_in_evaluation_is_500(client: httpx.Client) -> None:
    client.put("/v1/policies/conflict", content="package conflict\n\np := 1 if input.a\np := 2 if input.a\n")
    r = client.post("/v1/data/conflict/p", json={"input": {"a": True}})
    assert r.status_code == 500
    assert r.json()["errors"][0]["code"] == "eval_conflict_error"


def test_malformed_json_input(client: httpx.Client) -> None:
    r = client.post("/v1/data/example", content=b'{"input": {"a": ')
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "invalid_parameter"
    assert body["message"].startswith("body contains malformed input document")
    r = client.get("/v1/data/example", params={"input": "{nope"})
    assert r.status_code == 400
    assert r.json()["message"].startswith("parameter contains malformed input document")


def test_big_numbers_stay_exact(client: httpx.Client) -> None:
    client.put("/v1/policies/nums", content="package nums\n\ndouble := input.n * 2\n\nsame := input.f\n")
    big = "123456789012345678901234567890"
    r = client.post("/v1/data/nums", content=f'{{"input": {{"n": {big}, "f": 0.1000000000000000000000001}}}}')
    assert r.status_code == 200
    assert '"double":246913578024691357802469135780' in r.text.replace(" ", "")
    assert '"same":0.1000000000000000000000001' in r.text.replace(" ", "")
    r = client.put("/v1/data/bigdata", content=f'{{"n": {big}}}')
    assert r.status_code == 204
    assert f'"n":{big}' in client.get("/v1/data/bigdata").text.replace(" ", "")


def test_ten_megabyte_body(client: httpx.Client) -> None:
    items = ["x" * 100] * (10 * 1024 * 1024 // 104)
    body = json.dumps({"input": {"items": items}}).encode()
    assert len(body) > 10_000_000
    client.put("/v1/policies/count", content="package count\n\nn := count(input.items)\n")
    r = client.post("/v1/data/count/n", content=body)
    assert r.status_code == 200
    assert r.json()["result"] == len(items)


def test_body_over_the_limit_is_413() -> None:
    with serving(create_app(ServerRuntime({"a.rego": "package a\n\np := true\n"}), options=ServerOptions(max_body=1000))) as url:
        r = httpx.post(url + "/v1/data/a/p", content=json.dumps({"input": "x" * 2000}))
        assert r.status_code == 413
        assert r.json() == {"code": "invalid_parameter", "message": "request body too large"}
        assert httpx.post(url + "/v1/data/a/p", json={"input": 1}).json()["result"] is True


def test_gzip_body() -> None:
    import gzip

    runtime = ServerRuntime({"a.rego": "package a\n\nn := count(input.s)\n"})
    with serving(create_app(runtime, options=ServerOptions(max_body=10_000, gzip_max_body=100_000))) as url:
        hdr = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
        body = gzip.compress(json.dumps({"input": {"s": "x" * 50_000}}).encode())
        r = httpx.post(url + "/v1/data/a/n", content=body, headers=hdr)
        assert r.status_code == 200 and r.json()["result"] == 50_000
        body = gzip.compress(json.dumps({"input": {"s": "x" * 200_000}}).encode())
        r = httpx.post(url + "/v1/data/a/n", content=body, headers=hdr)
        assert r.status_code == 413
        assert r.json() == {"code": "invalid_parameter", "message": "compressed request body too large"}
        r = httpx.post(url + "/v1/data/a/n", content=b"not gzip", headers=hdr)
        assert r.status_code == 400


def test_gzip_responses(client: httpx.Client) -> None:
    assert client.put("/v1/data/blob", json={"s": "x" * 5000}).status_code == 204
    big = client.get("/v1/data/blob", headers={"Accept-Encoding": "gzip"})
    assert big.headers["content-encoding"] == "gzip" and big.json()["result"] == {"s": "x" * 5000}
    assert int(big.headers["content-length"]) < 1000
    small = client.get("/v1/data/networks/0", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    plain = client.get("/v1/data/blob", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers


# -- Data API: writes ---------------------------------------------------------------------------


def test_put_patch_delete_data(client: httpx.Client) -> None:
    r = client.put("/v1/data/a/b/c", json={"x": 1})
    assert r.status_code == 204 and r.content == b""
    assert client.get("/v1/data/a").json()["result"] == {"b": {"c": {"x": 1}}}
    r = client.put("/v1/data/a/b/c", json={"x": 2}, headers={"If-None-Match": "*"})
    assert r.status_code == 304
    assert client.get("/v1/data/a/b/c/x").json()["result"] == 1
    patch = [
        {"op": "add", "path": "/y", "value": [1]},
        {"op": "add", "path": "/y/-", "value": 2},
        {"op": "replace", "path": "/x", "value": 3},
        {"op": "remove", "path": "/y/0"},
    ]
    r = client.patch("/v1/data/a/b/c", json=patch)
    assert r.status_code == 204, r.text
    assert client.get("/v1/data/a/b/c").json()["result"] == {"x": 3, "y": [2]}
    r = client.patch("/v1/data/a/b/c", json=[{"op": "move", "path": "/x"}])
    assert r.status_code == 400
    assert r.json() == {"code": "invalid_parameter", "message": "bad patch operation: move"}
    r = client.patch("/v1/data/a/b/c", json=[{"op": "remove", "path": "/nope"}])
    assert r.status_code == 404
    assert r.json()["code"] == "resource_not_found"
    r = client.put("/v1/data/a/m?metrics", json=1)
    assert r.status_code == 200 and r.json()["metrics"]["timer_server_handler_ns"] > 0
    r = client.delete("/v1/data/a/b")
    assert r.status_code == 204
    assert client.get("/v1/data/a").json()["result"] == {"m": 1}
    r = client.delete("/v1/data/a/b")
    assert r.status_code == 404
    assert r.json() == {"code": "resource_not_found", "message": "storage_not_found_error: /a/b: document does not exist"}


def test_write_that_conflicts_with_a_rule_is_refused(client: httpx.Client) -> None:
    r = client.put("/v1/data/example/authz/allow", json=True)
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "invalid_parameter"
    assert "rego_compile_error" in body["message"] and "conflicting rule" in body["message"]
    # nothing changed
    assert client.get("/v1/data/example/authz/allow", params={"input": '{"user": "bob"}'}).json()["result"] is False


def test_malformed_json_on_put(client: httpx.Client) -> None:
    r = client.put("/v1/data/x", content=b"{nope")
    assert r.status_code == 400
    assert r.json()["code"] == "invalid_parameter"


# -- Policy API ----------------------------------------------------------------------------------


def test_policy_put_get_list_delete(client: httpx.Client) -> None:
    text = "package hello\n\ngreeting := sprintf(\"hello %s\", [input.name])\n"
    r = client.put("/v1/policies/hello", content=text)
    assert r.status_code == 200 and r.json() == {}
    r = client.get("/v1/policies/hello")
    got = r.json()["result"]
    assert got["id"] == "hello" and got["raw"] == text
    assert got["ast"]["package"]["path"][1]["value"] == "hello"
    ids = [p["id"] for p in client.get("/v1/policies").json()["result"]]
    assert ids == sorted(["example.rego", "authz.rego", "hello"])
    assert client.post("/v1/data/hello/greeting", json={"input": {"name": "bob"}}).json()["result"] == "hello bob"
    assert set(client.put("/v1/policies/hello?metrics", content=text).json()) == {"metrics"}
    assert client.delete("/v1/policies/hello").json() == {}
    r = client.get("/v1/policies/hello")
    assert r.status_code == 404
    assert r.json() == {"code": "resource_not_found", "message": 'storage_not_found_error: policy id "hello"'}
    assert client.delete("/v1/policies/hello").status_code == 404
    assert set(client.get("/v1/data/hello/greeting").json()) == {"decision_id"}


def test_bad_policy_is_refused_and_nothing_changes(client: httpx.Client) -> None:
    before = client.get("/v1/policies").json()
    r = client.put("/v1/policies/bad", content="package bad\n\np := \n")
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "invalid_parameter"
    assert body["message"] == "error(s) occurred while compiling module(s)"
    err = body["errors"][0]
    assert err["code"] == "rego_parse_error" and err["location"]["file"] == "bad"
    r = client.put("/v1/policies/bad", content="package bad\n\np := x\n")
    assert r.status_code == 400
    assert r.json()["errors"][0]["code"] == "rego_unsafe_var_error"
    # replacing a good policy by a bad one keeps the good one
    r = client.put("/v1/policies/authz.rego", content="package example.authz\n\nallow if undefined_fn(1)\n")
    assert r.status_code == 400
    assert client.get("/v1/policies").json() == before
    assert client.get("/v1/data/example/authz/allow", params={"input": '{"user": "alice"}'}).json()["result"] is True


def test_deleting_a_policy_others_need_is_refused(client: httpx.Client) -> None:
    client.put("/v1/policies/lib", content="package lib\n\nf(x) := x + 1\n")
    client.put("/v1/policies/use", content="package use\n\nimport data.lib\n\ny := lib.f(1)\n")
    r = client.delete("/v1/policies/lib")
    assert r.status_code == 400
    assert r.json()["code"] == "invalid_operation"
    assert r.json()["message"] == "error(s) occurred while compiling module(s)"
    assert client.get("/v1/data/use/y").json()["result"] == 2


def test_policy_that_clashes_with_data_is_refused(client: httpx.Client) -> None:
    r = client.put("/v1/policies/clash", content="package servers\n\nx := 1\n")
    assert r.status_code == 400
    assert r.json()["message"] == "error(s) occurred while compiling module(s)"


# -- Query, Compile, v0, index ---------------------------------------------------------------------


def test_query_api(client: httpx.Client) -> None:
    r = client.get("/v1/query", params={"q": "data.servers[i].ports[_] = \"p2\"; data.servers[i].id = id"})
    assert r.status_code == 200
    rows = r.json()["result"]
    assert sorted(row["id"] for row in rows) == ["s1", "s4"]
    r = client.post("/v1/query", json={"query": "input.x = y", "input": {"x": 7}})
    assert r.json() == {"result": [{"y": 7}]}
    assert client.post("/v1/query", json={"query": "x := 1; x == 2"}).json() == {}
    assert client.post("/v1/query", json={"query": "1 == 2"}).json() == {"result": [{}]}  # (as OPA: a false constant is a result)
    r = client.get("/v1/query")
    assert r.status_code == 400 and r.json() == {"code": "invalid_parameter", "message": "missing parameter 'q'"}
    r = client.get("/v1/query", params={"q": "x = ["})
    assert r.status_code == 400 and r.json()["message"] == "error(s) occurred while parsing query"
    r = client.get("/v1/query", params={"q": "x = y"})
    assert r.status_code == 400 and r.json()["message"] == "error(s) occurred while compiling query"
    assert client.put("/v1/query").status_code == 405


def test_compile_api_partial_evaluation(client: httpx.Client) -> None:
    r = client.post(
        "/v1/compile",
        json={"query": "data.example.authz.allow == true", "input": {"method": "GET"}, "unknowns": ["input.user", "input.path"]},
    )
    assert r.status_code == 200, r.text
    queries = r.json()["result"]["queries"]
    assert len(queries) == 2
    r = client.post("/v1/compile", json={"query": ""})
    assert r.status_code == 400 and r.json()["message"] == "missing required 'query' value"


FILTERS = """package filters

# METADATA
# scope: document
# compile:
#   unknowns: [input.fruits]
include if input.fruits.name == input.favorite
"""


def test_compile_api_filters_sql_and_ucast(client: httpx.Client) -> None:
    client.put("/v1/policies/filters", content=FILTERS)
    r = client.post(
        "/v1/compile/filters/include",
        json={"input": {"favorite": "pineapple"}},
        headers={"Accept": "application/vnd.opa.sql.postgresql+json"},
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"result": {"query": "WHERE fruits.name = E'pineapple'"}}
    r = client.post(
        "/v1/compile/filters/include",
        json={"input": {"favorite": "pineapple"}},
        headers={"Accept": "application/vnd.opa.ucast.all+json"},
    )
    assert r.json()["result"]["query"] == {"type": "field", "field": "fruits.name", "operator": "eq", "value": "pineapple"}


def test_v0_data_and_default_decision(client: httpx.Client) -> None:
    r = client.post("/v0/data/example/authz/allow", json={"user": "alice"})
    assert r.status_code == 200 and r.json() is True
    r = client.post("/v0/data/example/authz/nothing", json={})
    assert r.status_code == 404
    assert r.json() == {"code": "undefined_document", "message": "document missing: data.example.authz.nothing"}
    r = client.post("/", json={"user": "alice"})
    assert r.status_code == 404
    assert r.json()["message"] == "document missing: data.system.main"
    client.put("/v1/policies/main", content="package system\n\nmain := {\"hello\": input.user}\n")
    r = client.post("/", json={"user": "alice"})
    assert r.json() == {"hello": "alice"}


def test_default_decision_from_config() -> None:
    runtime = ServerRuntime({"m.rego": "package my.entry\n\nd := input.x\n"})
    opts = ServerOptions.from_config({"default_decision": "/my/entry/d"})
    with serving(create_app(runtime, options=opts)) as url:
        assert httpx.post(url + "/", json={"x": 5}).json() == 5


# -- Health, config, status, metrics, routing --------------------------------------------------------


def test_health(runtime: ServerRuntime, client: httpx.Client) -> None:
    assert client.get("/health").json() == {}
    assert client.get("/health?bundles").status_code == 200
    runtime.set_plugin_status("decision_logs", "NOT_READY")
    r = client.get("/health?plugins")
    assert r.status_code == 500 and r.json() == {"error": "one or more plugins are not up"}
    assert client.get("/health?plugins&exclude-plugin=decision_logs").status_code == 200
    runtime.set_plugin_status("bundle", "NOT_READY")
    r = client.get("/health?bundles")
    assert r.status_code == 500 and r.json() == {"error": "one or more bundles are not activated"}
    r = client.get("/health/live")
    assert r.status_code == 500 and r.json() == {"error": "health check (data.system.health.live) was undefined"}
    client.put("/v1/policies/health", content="package system.health\n\nlive := true\n\nready if input.plugins_ready\n")
    assert client.get("/health/live").status_code == 200
    assert client.get("/health/ready").status_code == 500
    runtime.set_plugin_status("bundle", "OK")
    runtime.set_plugin_status("decision_logs", "OK")
    assert client.get("/health/ready").json() == {}


def test_config_redacts_secrets() -> None:
    config = {
        "services": {"acme": {"url": "https://example.com", "credentials": {"bearer": {"token": "s3cret"}}}},
        "keys": {"k": {"key": "private"}},
        "labels": {"team": "a"},
    }
    with serving(create_app(ServerRuntime(config=config))) as url:
        result = httpx.get(url + "/v1/config").json()["result"]
    assert "s3cret" not in json.dumps(result) and "private" not in json.dumps(result)
    assert result["services"]["acme"]["url"] == "https://example.com"
    assert result["labels"]["team"] == "a" and result["labels"]["id"] and result["labels"]["version"]
    assert result["default_decision"] == "/system/main"


def test_status_and_metrics(runtime: ServerRuntime, client: httpx.Client) -> None:
    runtime.set_plugin_status("bundle", "OK")
    status = client.get("/v1/status").json()["result"]
    assert status["plugins"] == {"bundle": {"state": "OK"}}
    client.get("/v1/data/servers")
    client.get("/v1/policies")
    text = client.get("/metrics").text
    assert 'http_request_duration_seconds_count{code="200",handler="v1/data",method="GET"}' in text
    assert 'http_request_duration_seconds_bucket{code="200",handler="v1/policies",le="0.005",method="GET"}' in text


def test_method_not_allowed_and_unknown_paths(client: httpx.Client) -> None:
    for method, path in [("PUT", "/v1/policies"), ("POST", "/v1/policies/x"), ("GET", "/v0/data/x"), ("POST", "/v1/query/x")]:
        r = client.request(method, path)
        assert r.status_code == 405, (method, path)
        assert r.content == b""
    r = client.get("/v2/whatever")
    assert r.status_code == 404
    assert r.text == "404 page not found\n"


def test_escaped_path_segments(client: httpx.Client) -> None:
    assert client.put("/v1/data/odd/a%2Fb", json=1).status_code == 204
    assert client.get("/v1/data/odd").json()["result"] == {"a/b": 1}
    assert client.get("/v1/data/odd/a%2Fb").json()["result"] == 1
