"""The FastAPI example (examples/fastapi_authz) through real HTTP: the ASGI
middleware and the per-route dependency of pyrego.integrations.

The app runs under uvicorn in a thread on a free localhost port, on a copy
of its policy folder (tests change it: reloads, a conflicting rule). What
the service decides is checked against the policy's rules written out in
Python here (``may_read_salary``) and, for the inputs the middleware built,
against OPA itself (the oracle).
"""

from __future__ import annotations

import json
import random
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from authz_example import AGREEMENT_REQUESTS, DATA, POLICY, may_read_salary, modules, oracle
from pyrego.integrations.decisions import Decision
from service_servers import UvicornServer, load_example

pytest.importorskip("fastapi", reason="pip install -e '.[dev]' installs FastAPI")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

example = load_example("fastapi_authz", "pyrego_example_fastapi_authz_app")
USERS = {identity["user"]: token for token, identity in example.TOKENS.items()}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {USERS[user]}"}


@pytest.fixture()
def policy_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(POLICY, tmp_path / "policy"))


@pytest.fixture()
def recorded() -> list[dict[str, Any]]:
    return []


@pytest.fixture(params=[False, True], ids=["inline", "in_thread"])
def server(request: Any, policy_dir: Path, recorded: list[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
    def record(scope: Any, doc: dict[str, Any]) -> None:
        recorded.append(doc)

    app = example.create_app(policy_dir, extend=record, in_thread=request.param)
    with UvicornServer(app) as url:
        yield url, app


def test_allowed_denied_exempt(server: tuple[str, Any]) -> None:
    url, _ = server
    with httpx.Client(base_url=url) as c:
        r = c.get("/finance/salary/alice", headers=auth("bob"))
        assert r.status_code == 200 and r.json() == {"user": "alice", "salary": 5200, "allowed": True}
        assert c.get("/finance/salary/alice", headers=auth("alice")).status_code == 200
        r = c.get("/finance/salary/bob", headers=auth("alice"))
        assert r.status_code == 403 and r.json() == {"error": "forbidden", "reasons": []}
        assert r.headers["content-type"] == "application/json"
        assert c.get("/finance/salary/alice").status_code == 403  # no token
        assert c.post("/finance/salary/alice", headers=auth("alice")).status_code == 403  # only GET
        assert c.get("/healthz").json() == {"ok": True, "policies": 1}  # exempt: no token needed
        assert c.get("/healthz/").status_code != 200  # an exact exemption, not a prefix
        assert c.post("/admin/reload", headers=auth("alice")).status_code == 403
        assert c.post("/admin/reload", headers=auth("carol")).json() == {"policies": 2}


def test_route_decision_with_reasons(server: tuple[str, Any]) -> None:
    url, _ = server
    with httpx.Client(base_url=url) as c:
        r = c.get("/reports/q1", headers=auth("dora"))
        assert r.status_code == 200
        assert r.json() == {"report": "q1", "decision": {"allow": True, "reasons": []}}
        r = c.get("/reports/payroll", headers=auth("dora"))
        assert r.status_code == 403
        assert r.json() == {"detail": {"error": "forbidden", "reasons": ["a confidential report needs the clearance role"]}}
        assert c.get("/reports/payroll", headers=auth("erin")).status_code == 200
        r = c.get("/reports/nope", headers=auth("bob"))
        assert r.json()["detail"]["reasons"] == ["auditors only", "no such report"]  # a set: sorted


def test_fail_closed_on_evaluation_error(policy_dir: Path) -> None:
    # A rule that conflicts with the default for one path: OPA's eval_conflict_error.
    (policy_dir / "conflict.rego").write_text(
        'package httpapi.authz\n\nallow := "maybe" if input.path == ["finance", "salary", "alice"]\n', encoding="utf-8"
    )
    seen: list[dict[str, Any]] = []
    app = example.create_app(policy_dir, extend=lambda scope, doc: seen.append(doc))
    with UvicornServer(app) as url, httpx.Client(base_url=url) as c:
        r = c.get("/finance/salary/alice", headers=auth("alice"))
        assert r.status_code == 500
        assert r.json() == {"error": "policy evaluation failed", "code": "eval_conflict_error"}
        assert c.get("/finance/salary/bob", headers=auth("bob")).status_code == 200  # other inputs decide
    oracle_error = oracle().evaluate(modules(policy_dir), "x := data.httpapi.authz.allow", input=seen[0], data=DATA)
    assert oracle_error.error_code == "eval_conflict_error"


def test_fail_closed_on_hook_error(policy_dir: Path) -> None:
    def broken(scope: Any, doc: dict[str, Any]) -> None:
        raise RuntimeError("tenant lookup failed")

    app = example.create_app(policy_dir, extend=broken)
    with UvicornServer(app) as url, httpx.Client(base_url=url) as c:
        r = c.get("/finance/salary/alice", headers=auth("alice"))
        assert r.status_code == 500 and r.json()["code"] == "internal_error"
        assert c.get("/healthz").status_code == 200


def test_hostile_requests(server: tuple[str, Any]) -> None:
    url, _ = server
    with httpx.Client(base_url=url) as c:
        # Big headers that the server takes: the decision is still the right one.
        big = {"X-Filler": "x" * 8000, **auth("bob")}
        assert c.get("/finance/salary/alice", headers=big).status_code == 200
        assert c.get("/finance/salary/carol", headers=big).status_code == 403
        # Odd paths: the policy sees the decoded segments the router sees.
        assert c.get("/finance/salary/al%69ce", headers=auth("alice")).status_code == 200
        assert c.get("/finance/salary/alice%2Fx", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/alice/../bob", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/%00", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/%FF%FE", headers=auth("alice")).status_code == 403
        # Unicode: a user named zoë, in the path and in the token.
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("zoë")).status_code == 200
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("bob")).status_code == 200
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/alice", headers={"Authorization": "Bearer", "X-Odd": b"\xe9t\xe9"}).status_code == 403
        # Header bytes are Latin-1 to ASGI: a UTF-8 token is another token, nobody's.
        assert c.get("/finance/salary/zo%C3%AB", headers={"Authorization": "Bearer zoë-token".encode()}).status_code == 403
        assert c.get("/finance/salary/alice", headers={"Authorization": "Basic alice-token"}).status_code == 403
        assert c.get("/finance/salary/alice", headers={"Authorization": "bEaReR   alice-token"}).status_code == 200
        # Many query parameters reach the policy whole, in order.
        query = "&".join(f"a={i}" for i in range(1500)) + "&b=%C3%A9&c="
        r = c.get(f"/whoami?{query}", headers=auth("erin"))
        assert r.status_code == 200
        assert r.json()["query"] == {"a": [str(i) for i in range(1500)], "b": ["é"], "c": [""]}
    # 200 KB of headers: refused before the app (a 4xx, or the connection
    # closed) or, where the server's HTTP parser takes them, decided by the
    # policy: a caller it denies is never allowed, one it allows never refused
    # by it; the server still answers after.
    filler = {"X-Filler": "x" * 200_000}
    assert refused(url, {**filler, **auth("carol")})
    assert allowed_or_refused_by_server(url, {**filler, **auth("bob")})
    assert httpx.get(f"{url}/finance/salary/alice", headers=auth("bob")).status_code == 200


def refused(url: str, headers: dict[str, str]) -> bool:
    try:
        r = httpx.get(f"{url}/finance/salary/alice", headers=headers)
    except httpx.TransportError:
        return True
    return 400 <= r.status_code < 500


def allowed_or_refused_by_server(url: str, headers: dict[str, str]) -> bool:
    """200, or refused by the HTTP server itself (not the policy's 403)."""
    try:
        r = httpx.get(f"{url}/finance/salary/alice", headers=headers)
    except httpx.TransportError:
        return True
    return r.status_code == 200 or r.status_code in (400, 413, 431)


def test_concurrent_requests_get_their_own_decisions(server: tuple[str, Any]) -> None:
    url, _ = server
    users = sorted(USERS)
    rng = random.Random(7)
    jobs = [(rng.choice(users), rng.choice(users), rng.random() < 0.3) for _ in range(600)]

    def one(job: tuple[str, str, bool], client: Any) -> str | None:
        viewer, target, who = job
        if who:
            r = client.get(f"/whoami?n={target}", headers=auth(viewer))
            got = r.json()
            ok = r.status_code == 200 and got["user"] == viewer and got["query"] == {"n": [target]} and got["path"] == ["whoami"]
        else:
            r = client.get(f"/finance/salary/{target}", headers=auth(viewer))
            ok = r.status_code == (200 if may_read_salary(viewer, target) else 403)
        return None if ok else f"{job}: {r.status_code} {r.text}"

    local = threading.local()

    def run(job: tuple[str, str, bool]) -> str | None:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=30)
        return one(job, local.client)

    with ThreadPoolExecutor(16) as pool:
        errors = [e for e in pool.map(run, jobs) if e]
    assert errors == []


def test_reload_under_load(server: tuple[str, Any], policy_dir: Path) -> None:
    url, app = server
    policies = app.state.policies
    without_alice = {**DATA, "managers": {**DATA["managers"], "bob": ["zoë"]}}
    versions = [DATA, without_alice]
    stop = threading.Event()
    failures: list[str] = []
    counts = {200: 0, 403: 0}

    def hammer() -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            while not stop.is_set():
                mine = c.get("/finance/salary/bob", headers=auth("bob"))  # allowed in both versions
                theirs = c.get("/finance/salary/alice", headers=auth("bob"))  # allowed in the first only
                if mine.status_code != 200 or theirs.status_code not in (200, 403):
                    failures.append(f"{mine.status_code} {theirs.status_code} {theirs.text}")
                counts[theirs.status_code] = counts.get(theirs.status_code, 0) + 1

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        for i in range(10):
            data = versions[(i + 1) % 2]
            (policy_dir / "data.json").write_text(json.dumps(data), encoding="utf-8")
            assert policies.reload_if_changed()
            # From the swap on, every request sees the new data.
            with httpx.Client(base_url=url) as c:
                expected = 200 if "alice" in data["managers"]["bob"] else 403
                assert c.get("/finance/salary/alice", headers=auth("bob")).status_code == expected
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []
    assert counts[200] and counts[403]
    assert not policies.reload_if_changed()


def test_broken_reload_keeps_the_engine(server: tuple[str, Any], policy_dir: Path) -> None:
    url, app = server
    (policy_dir / "authz.rego").write_text("package httpapi.authz\n\nallow if {\n", encoding="utf-8")
    with pytest.raises(Exception, match="rego_parse_error"):
        app.state.policies.reload()
    with httpx.Client(base_url=url) as c:
        assert c.get("/finance/salary/alice", headers=auth("bob")).status_code == 200
        assert c.get("/finance/salary/carol", headers=auth("bob")).status_code == 403


def test_decisions_agree_with_opa(server: tuple[str, Any], policy_dir: Path, recorded: list[dict[str, Any]]) -> None:
    url, _ = server
    requests = AGREEMENT_REQUESTS
    statuses = []
    with httpx.Client(base_url=url) as c:
        for method, path, user in requests:
            statuses.append(c.request(method, path, headers=auth(user)).status_code)
    assert len(recorded) == len(requests)
    opa_engine = oracle()
    policy_modules = modules(policy_dir)
    for doc, status, req in zip(recorded, statuses, requests):
        opa = opa_engine.evaluate(policy_modules, "x := data.httpapi.authz.allow", input=doc, data=DATA)
        assert not opa.is_error, (req, opa.error_message)
        allowed = opa.bindings == [{"x": True}]
        assert (status != 403) == allowed, (req, status, doc)
    assert statuses[:3] == [200, 403, 200]


def test_guard_options_on_a_small_app() -> None:
    from fastapi import Depends, FastAPI

    import pyrego
    from pyrego.integrations.asgi import PolicyMiddleware
    from pyrego.integrations.fastapi import PolicyGuard

    engine = pyrego.Engine()
    engine.add_policy(
        "app.rego",
        'package app\n\nallow if input.tenant == input.params.tenant\n\nopen if input.path[0] != "closed"\n',
    )

    async def build(request: Any) -> dict[str, Any]:  # an async builder: the whole input
        return {"tenant": request.headers.get("x-tenant"), "params": dict(request.path_params)}

    guard = PolicyGuard(engine, "data.app.allow", input_builder=build, deny_status=404, deny_body=lambda d: "not found")
    app = FastAPI()

    @app.get("/t/{tenant}")
    # (With ``from __future__ import annotations``, as here, FastAPI resolves
    # annotations in the module's globals: a local guard goes in the default.)
    def tenant(tenant: str, decision: Decision = Depends(guard)) -> dict[str, Any]:  # noqa: B008
        return {"tenant": tenant, "allowed": decision.allowed, "value": decision.value}

    app.add_middleware(PolicyMiddleware, engine=engine, decision="data.app.open", deny_status=401, deny_body=lambda d: {"nope": True})
    with UvicornServer(app) as url, httpx.Client(base_url=url) as c:
        assert c.get("/t/acme", headers={"X-Tenant": "acme"}).json() == {"tenant": "acme", "allowed": True, "value": True}
        r = c.get("/t/acme", headers={"X-Tenant": "other"})
        assert (r.status_code, r.json()) == (404, {"detail": "not found"})
        r = c.get("/closed/t/acme", headers={"X-Tenant": "acme"})
        assert (r.status_code, r.json()) == (401, {"nope": True})
