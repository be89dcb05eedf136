"""Methods as OPA's router answers them, through a real server.

Expected answers follow OPA v1.20.2's router (v1/server/server.go: Go 1.22 ``http.ServeMux``
patterns ``GET /v1/data/{path...}`` etc., catch-all ``/v1/data`` handlers writing a bare 405)
and Go's ServeMux rules: a ``GET`` pattern also serves ``HEAD`` (net/http then sends the
headers without the body); a path no pattern serves with that method gets Go's 405
(``Method Not Allowed\\n``, ``Allow`` listing the methods of the path and of the path with a
slash appended, ``HEAD`` added to ``GET``); a path without a trailing slash whose slashed form
is served is redirected (301) there; everything sits behind authorization."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pyrego.server import ServerOptions, ServerRuntime, create_app
from server_helpers import serving

POLICY = "package app\n\nx := 1\n\nlist := [1, 2, 3]\n"
AUTHZ = 'package system.authz\n\ndefault allow := false\n\nallow if input.identity == "secret"\n\nallow if input.method == "HEAD"\n'


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(create_app(ServerRuntime({"app.rego": POLICY}))) as url:
        yield url


@pytest.mark.parametrize("path", ["/v1/data/app/x", "/v1/data", "/v1/data/app/list?pretty", "/health", "/v1/config", "/v1/status", "/v1/policies", "/v1/policies/app.rego", "/metrics", "/", "/v1/query?q=x%20%3D%201"])
def test_head_answers_as_get_without_body(base: str, path: str) -> None:
    get = httpx.get(base + path)
    head = httpx.head(base + path)
    assert head.status_code == get.status_code
    assert head.content == b""
    assert head.headers.get("content-type") == get.headers.get("content-type")
    if path not in ("/metrics", "/v1/status", "/v1/data/app/x", "/v1/data") and "decision_id" not in get.text:
        # (the same body length; /metrics and /v1/status change between two requests)
        assert head.headers.get("content-length") == get.headers.get("content-length")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v1/data"),
        ("OPTIONS", "/v1/data"),
        ("OPTIONS", "/v1/data/app/x"),
        ("GET", "/v0/data"),
        ("HEAD", "/v0/data/app/x"),
        ("PUT", "/v0/data/app/x"),
        ("POST", "/v1/policies"),
        ("PATCH", "/v1/policies/app.rego"),
        ("POST", "/v1/policies/app.rego"),
        ("PUT", "/v1/query"),
        ("GET", "/v1/query/x"),
        ("POST", "/v1/query/x"),
        ("TRACE", "/v1/data/app/x"),
    ],
)
def test_catch_all_405_has_no_body(base: str, method: str, path: str) -> None:
    r = httpx.request(method, base + path)
    assert r.status_code == 405
    assert r.content == b""
    assert "allow" not in r.headers and "content-type" not in r.headers


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/health", "GET, HEAD"),
        ("DELETE", "/health/live", "GET, HEAD"),
        ("POST", "/v1/config", "GET, HEAD"),
        ("PUT", "/v1/status", "GET, HEAD"),
        ("POST", "/metrics", "GET, HEAD"),
        ("PUT", "/", "GET, HEAD, POST"),
        ("DELETE", "/", "GET, HEAD, POST"),
        ("PUT", "/v1/compile", "GET, HEAD, POST"),
        ("DELETE", "/v1/compile/app/x", "GET, HEAD, POST"),
        ("OPTIONS", "/v1/config", "GET, HEAD"),
    ],
)
def test_go_router_405(base: str, method: str, path: str, allow: str) -> None:
    r = httpx.request(method, base + path)
    assert r.status_code == 405
    assert r.text == "Method Not Allowed\n"
    assert r.headers["allow"] == allow
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["x-content-type-options"] == "nosniff"


def test_get_compile_redirects_to_the_slashed_path(base: str) -> None:
    r = httpx.get(base + "/v1/compile?a=1&b=2")
    assert r.status_code == 301
    assert r.headers["location"] == "/v1/compile/?a=1&b=2"
    assert r.text == '<a href="/v1/compile/?a=1&amp;b=2">Moved Permanently</a>.\n\n'
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    r = httpx.head(base + "/v1/compile")
    assert (r.status_code, r.headers["location"], r.content) == (301, "/v1/compile/", b"")


def test_unknown_path_is_404(base: str) -> None:
    for method in ("GET", "HEAD", "POST", "DELETE"):
        r = httpx.request(method, base + "/v2/nothing")
        assert r.status_code == 404
        assert r.content == (b"" if method == "HEAD" else b"404 page not found\n")


def test_catch_all_is_counted_and_go_405_is_not(base: str) -> None:
    def count(text: str, handler: str, method: str) -> float:
        prefix = f'http_request_duration_seconds_count{{code="405",handler="{handler}",method="{method}"}} '
        return sum(float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix))

    def count_405(text: str, method: str) -> float:
        lines = [line for line in text.splitlines() if line.startswith("http_request_duration_seconds_count{") and 'code="405"' in line and f'method="{method}"' in line]
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines)

    before = httpx.get(base + "/metrics").text
    httpx.request("PATCH", base + "/v1/policies/app.rego")
    httpx.request("PUT", base + "/v1/config")
    after = httpx.get(base + "/metrics").text
    assert count(after, "catchall", "PATCH") == count(before, "catchall", "PATCH") + 1
    assert count_405(after, "PUT") == count_405(before, "PUT")


def test_authorization_comes_first() -> None:
    runtime = ServerRuntime({"app.rego": POLICY, "authz.rego": AUTHZ})
    with serving(create_app(runtime, options=ServerOptions(authentication="token", authorization="basic"))) as url:
        # the policy sees HEAD (OPA's authorizer runs before the router)
        assert httpx.head(url + "/v1/data/app/x").status_code == 200
        assert httpx.get(url + "/v1/data/app/x").status_code == 401
        for method, path in [("GET", "/v2/nothing"), ("PUT", "/v1/config"), ("DELETE", "/v1/data"), ("GET", "/v1/compile")]:
            r = httpx.request(method, url + path)
            assert r.status_code == 401, (method, path)
            assert r.json() == {"code": "unauthorized", "message": "request rejected by administrative policy"}
        secret = {"Authorization": "Bearer secret"}
        assert httpx.get(url + "/v2/nothing", headers=secret).status_code == 404
        assert httpx.put(url + "/v1/config", headers=secret).status_code == 405
        assert httpx.delete(url + "/v1/data", headers=secret).status_code == 405
