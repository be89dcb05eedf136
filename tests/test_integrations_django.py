"""The Django example (examples/django_authz) through real HTTP: the
middleware and the view decorator of pyrego.integrations.django.

The project is served by Django's threaded development server (wsgiref) in
a thread on a free localhost port, on a copy of its policy folder (tests
change it). Decisions are checked against the policy's rules written out in
Python (``may_read_salary``) and, for the inputs the middleware built,
against OPA itself (the oracle). Django's settings are process-wide: when
another test configured them first, the example's are laid over them.
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
from service_servers import DjangoServer, UvicornServer, load_example

pytest.importorskip("django", reason="pip install -e '.[dev]' installs Django")
httpx = pytest.importorskip("httpx")

example = load_example("django_authz", "pyrego_example_django_authz_app")
USERS = {identity["user"]: token for token, identity in example.TOKENS.items()}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {USERS[user]}"}


@pytest.fixture(scope="module")
def django_settings() -> Iterator[None]:
    """The example's settings, over whatever another test configured."""
    from django.conf import settings

    if not settings.configured:
        example.configure()
        yield
        # Unconfigured again, for tests that configure Django themselves later
        # (tests/test_filters_db.py): the app registry, empty, stays set up;
        # the database handler forgets the (empty) DATABASES it read.
        from django.db import connections, router
        from django.utils.functional import empty

        settings._wrapped = empty
        connections.__dict__.pop("settings", None)
        connections._settings = None
        router.__dict__.pop("routers", None)
        router._routers = None
        return
    from django.test.utils import override_settings

    # (Not the apps, which are set up already; not SECRET_KEY, which Django
    # cannot read back as empty when the override ends, and these views do not use.)
    over = {k: v for k, v in example.SETTINGS.items() if k not in ("INSTALLED_APPS", "SECRET_KEY")}
    with override_settings(**over):
        yield


@pytest.fixture()
def policy_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(POLICY, tmp_path / "policy"))


def serve(policy_dir: Path, *, asgi: bool = False, **more: Any) -> Any:
    """The example on ``policy_dir`` (and more settings), under the development
    server (WSGI), or under uvicorn as an ASGI app (``asgi``: the middleware's async path)."""
    from django.test.utils import override_settings

    class Served:
        def __enter__(self) -> str:
            self.over = override_settings(PYREGO_POLICY_DIR=str(policy_dir), **more)
            self.over.enable()
            # (The handler reads its middleware from the settings as they are now.)
            try:
                if asgi:
                    from django.core.handlers.asgi import ASGIHandler

                    self.server: Any = UvicornServer(ASGIHandler())
                else:
                    from django.core.handlers.wsgi import WSGIHandler

                    self.server = DjangoServer(WSGIHandler())
            except BaseException:
                self.over.disable()
                raise
            return self.server.__enter__()  # type: ignore[no-any-return]

        def __exit__(self, *exc: Any) -> None:
            self.server.__exit__(*exc)
            self.over.disable()

    return Served()


@pytest.fixture()
def recorded() -> list[dict[str, Any]]:
    return []


@pytest.fixture(params=["wsgi", "asgi"])
def server(request: Any, django_settings: None, policy_dir: Path, recorded: list[dict[str, Any]]) -> Iterator[str]:
    def record(request: Any, doc: dict[str, Any]) -> None:
        recorded.append(doc)

    with serve(policy_dir, asgi=request.param == "asgi", PYREGO_EXTEND_INPUT=record) as url:
        yield url


def test_allowed_denied_exempt(server: str) -> None:
    with httpx.Client(base_url=server) as c:
        r = c.get("/finance/salary/alice", headers=auth("bob"))
        assert r.status_code == 200 and r.json() == {"user": "alice", "salary": 5200, "allowed": True}
        assert c.get("/finance/salary/alice", headers=auth("alice")).status_code == 200
        r = c.get("/finance/salary/bob", headers=auth("alice"))
        assert r.status_code == 403 and r.json() == {"error": "forbidden", "reasons": []}
        assert r.headers["content-type"] == "application/json"
        assert c.get("/finance/salary/alice").status_code == 403
        assert c.post("/finance/salary/alice", headers=auth("alice")).status_code == 403
        assert c.get("/healthz").json() == {"ok": True}
        assert c.get("/healthz/").status_code == 403  # exact: /healthz/ is checked (and denied)
        assert c.post("/admin/reload", headers=auth("alice")).status_code == 403
        assert c.post("/admin/reload", headers=auth("carol")).json() == {"reloaded": True}


def test_view_decorator_with_reasons(server: str) -> None:
    with httpx.Client(base_url=server) as c:
        r = c.get("/reports/q1", headers=auth("dora"))
        assert r.status_code == 200
        assert r.json() == {"report": "q1", "decision": {"allow": True, "reasons": []}}
        r = c.get("/reports/payroll", headers=auth("dora"))
        assert r.status_code == 403
        assert r.json() == {"error": "forbidden", "reasons": ["a confidential report needs the clearance role"]}
        assert c.get("/reports/payroll", headers=auth("erin")).status_code == 200
        r = c.get("/reports/nope", headers=auth("bob"))
        assert r.json()["reasons"] == ["auditors only", "no such report"]


def test_fail_closed_on_evaluation_error(django_settings: None, policy_dir: Path) -> None:
    (policy_dir / "conflict.rego").write_text(
        'package httpapi.authz\n\nallow := "maybe" if input.path == ["finance", "salary", "alice"]\n', encoding="utf-8"
    )
    seen: list[dict[str, Any]] = []
    with serve(policy_dir, PYREGO_EXTEND_INPUT=lambda request, doc: seen.append(doc)) as url, httpx.Client(base_url=url) as c:
        r = c.get("/finance/salary/alice", headers=auth("alice"))
        assert r.status_code == 500
        assert r.json() == {"error": "policy evaluation failed", "code": "eval_conflict_error"}
        assert c.get("/finance/salary/bob", headers=auth("bob")).status_code == 200
    with serve(policy_dir, PYREGO_EXPOSE_ERRORS=True) as url:
        body = httpx.get(f"{url}/finance/salary/alice", headers=auth("alice")).json()
        assert "conflicting values" in body["message"]
    opa = oracle().evaluate(modules(policy_dir), "x := data.httpapi.authz.allow", input=seen[0], data=DATA)
    assert opa.error_code == "eval_conflict_error"


def test_fail_closed_on_hook_error(django_settings: None, policy_dir: Path) -> None:
    def broken(request: Any, doc: dict[str, Any]) -> None:
        raise RuntimeError("tenant lookup failed")

    with serve(policy_dir, PYREGO_EXTEND_INPUT=broken) as url, httpx.Client(base_url=url) as c:
        r = c.get("/finance/salary/alice", headers=auth("alice"))
        assert r.status_code == 500 and r.json()["code"] == "internal_error"
        assert c.get("/healthz").status_code == 200


def test_hostile_requests(server: str) -> None:
    with httpx.Client(base_url=server) as c:
        big = {"X-Filler": "x" * 8000, **auth("bob")}
        assert c.get("/finance/salary/alice", headers=big).status_code == 200
        assert c.get("/finance/salary/carol", headers=big).status_code == 403
        assert c.get("/finance/salary/al%69ce", headers=auth("alice")).status_code == 200
        assert c.get("/finance/salary/alice%2Fx", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/alice/../bob", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/%00", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/%FF%FE", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("zoë")).status_code == 200
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("bob")).status_code == 200
        assert c.get("/finance/salary/zo%C3%AB", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/zo%C3%AB", headers={"Authorization": "Bearer zoë-token".encode()}).status_code == 403
        assert c.get("/finance/salary/alice", headers={"Authorization": "Basic alice-token"}).status_code == 403
        assert c.get("/finance/salary/alice", headers={"Authorization": "bEaReR   alice-token"}).status_code == 200
        query = "&".join(f"a={i}" for i in range(900)) + "&b=%C3%A9&c="
        r = c.get(f"/whoami?{query}", headers=auth("erin"))
        assert r.status_code == 200
        assert r.json()["query"] == {"a": [str(i) for i in range(900)], "b": ["é"], "c": [""]}
        # Past DATA_UPLOAD_MAX_NUMBER_FIELDS (1000) Django refuses the request itself.
        query = "&".join(f"a={i}" for i in range(1500))
        assert c.get(f"/whoami?{query}", headers=auth("erin")).status_code == 400
    # 200 KB of headers: refused by the server (a 4xx or the connection closed)
    # or, where its HTTP parser takes them, decided by the policy: a caller the
    # policy denies is never allowed, one it allows never refused by it.
    filler = {"X-Filler": "x" * 200_000}
    assert _status(f"{server}/finance/salary/alice", {**filler, **auth("carol")}) in (0, 400, 403, 413, 431)
    assert _status(f"{server}/finance/salary/alice", {**filler, **auth("bob")}) in (0, 200, 400, 413, 431)
    assert httpx.get(f"{server}/finance/salary/alice", headers=auth("bob")).status_code == 200


def test_concurrent_requests_get_their_own_decisions(server: str) -> None:
    users = sorted(USERS)
    rng = random.Random(11)
    jobs = [(rng.choice(users), rng.choice(users), rng.random() < 0.3) for _ in range(400)]
    local = threading.local()

    def run(job: tuple[str, str, bool]) -> str | None:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=server, timeout=30)
        viewer, target, who = job
        if who:
            r = local.client.get(f"/whoami?n={target}", headers=auth(viewer))
            got = r.json()
            ok = r.status_code == 200 and got["user"] == viewer and got["query"] == {"n": [target]} and got["path"] == ["whoami"]
        else:
            r = local.client.get(f"/finance/salary/{target}", headers=auth(viewer))
            ok = r.status_code == (200 if may_read_salary(viewer, target) else 403)
        return None if ok else f"{job}: {r.status_code} {r.text}"

    with ThreadPoolExecutor(16) as pool:
        errors = [e for e in pool.map(run, jobs) if e]
    assert errors == []


def test_reload_under_load(server: str, policy_dir: Path) -> None:
    without_alice = {**DATA, "managers": {**DATA["managers"], "bob": ["zoë"]}}
    versions = [DATA, without_alice]
    stop = threading.Event()
    failures: list[str] = []
    counts = {200: 0, 403: 0}

    def hammer() -> None:
        with httpx.Client(base_url=server, timeout=30) as c:
            while not stop.is_set():
                mine = c.get("/finance/salary/bob", headers=auth("bob"))
                theirs = c.get("/finance/salary/alice", headers=auth("bob"))
                if mine.status_code != 200 or theirs.status_code not in (200, 403):
                    failures.append(f"{mine.status_code} {mine.text[:300]} {theirs.status_code} {theirs.text}")
                counts[theirs.status_code] = counts.get(theirs.status_code, 0) + 1

    threads = [threading.Thread(target=hammer) for _ in range(6)]
    for t in threads:
        t.start()
    try:
        with httpx.Client(base_url=server, timeout=30) as c:
            for i in range(8):
                data = versions[(i + 1) % 2]
                (policy_dir / "data.json").write_text(json.dumps(data), encoding="utf-8")
                assert c.post("/admin/reload", headers=auth("carol")).json() == {"reloaded": True}
                expected = 200 if "alice" in data["managers"]["bob"] else 403
                assert c.get("/finance/salary/alice", headers=auth("bob")).status_code == expected
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []
    assert counts[200] and counts[403]


def test_decisions_agree_with_opa(server: str, policy_dir: Path, recorded: list[dict[str, Any]]) -> None:
    requests = AGREEMENT_REQUESTS
    statuses = []
    with httpx.Client(base_url=server) as c:
        for method, path, user in requests:
            statuses.append(c.request(method, path, headers=auth(user)).status_code)
    # A decorated view's input (with its URL parameters) is recorded too.
    middleware_inputs = [doc for doc in recorded if "params" not in doc]
    assert len(middleware_inputs) == len(requests)
    opa_engine = oracle()
    policy_modules = modules(policy_dir)
    for doc, status, req in zip(middleware_inputs, statuses, requests):
        opa = opa_engine.evaluate(policy_modules, "x := data.httpapi.authz.allow", input=doc, data=DATA)
        assert not opa.is_error, (req, opa.error_message)
        assert (status != 403) == (opa.bindings == [{"x": True}]), (req, status, doc)
    assert statuses[:3] == [200, 403, 200]


def test_broken_policies_stop_the_start(django_settings: None, policy_dir: Path) -> None:
    import pyrego

    (policy_dir / "authz.rego").write_text("package httpapi.authz\n\nallow if {\n", encoding="utf-8")
    with pytest.raises(pyrego.RegoParseError), serve(policy_dir):
        pass


def test_engine_factory_setting(django_settings: None, policy_dir: Path) -> None:
    import pyrego

    made: list[Any] = []

    def make_engine() -> Any:  # PYREGO_ENGINE: a factory, called once
        engine = pyrego.Engine()
        engine.add_policy("only.rego", 'package httpapi.authz\n\nallow if input.headers["x-let-in"] == "yes"\n')
        made.append(engine)
        return engine

    with serve(policy_dir, PYREGO_ENGINE=make_engine) as url, httpx.Client(base_url=url) as c:
        assert c.get("/finance/salary/alice", headers={"X-Let-In": "yes"}).status_code == 200
        assert c.get("/finance/salary/alice", headers=auth("alice")).status_code == 403
        assert c.get("/finance/salary/alice", headers={"X-Let-In": "yes"}).status_code == 200
        # Not a PolicyDirectory: nothing to reload.
        assert c.post("/admin/reload", headers={"X-Let-In": "yes"}).json() == {"reloaded": False}
    assert len(made) == 1


def _status(url: str, headers: dict[str, str]) -> int:
    """The status of a GET, 0 when the server closed the connection instead."""
    try:
        return httpx.get(url, headers=headers).status_code
    except httpx.TransportError:
        return 0
