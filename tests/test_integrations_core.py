"""pyrego.integrations' shared parts: the input of a request, how a value reads
as a decision, exempt paths, policies reloaded from a folder, what importing
the package loads; and the ASGI middleware on WebSocket and lifespan scopes.
(The frameworks' own tests, through real HTTP: test_integrations_fastapi.py
and test_integrations_django.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.integrations.asgi import PolicyMiddleware
from pyrego.integrations.decisions import (
    Decision,
    ExemptPaths,
    PolicyEvaluationError,
    evaluate,
    path_segments,
    request_input,
)
from pyrego.integrations.reload import PolicyDirectory

SRC = str(Path(__file__).resolve().parent.parent / "src")


@pytest.mark.parametrize(
    ("value", "allowed", "reasons"),
    [
        (True, True, []),
        (False, False, []),
        (None, False, []),
        ("true", False, []),
        (1, False, []),
        ({"allow": True}, True, []),
        ({"allowed": True, "reasons": ["fine"]}, True, ["fine"]),
        ({"allow": "yes"}, False, []),
        ({"allow": False, "reasons": {"b", "a"}}, False, ["a", "b"]),
        ({"allow": False, "deny": ["no"]}, False, ["no"]),
        ({"allow": False, "reason": "no"}, False, ["no"]),
        ({"reasons": []}, False, []),
        ([True], False, []),
    ],
)
def test_decision_from_value(value: Any, allowed: bool, reasons: list[Any]) -> None:
    d = Decision.from_value(value)
    assert (d.allowed, d.reasons, d.defined) == (allowed, reasons, True)
    json.dumps(d.value)  # plain JSON


def test_undefined_denies() -> None:
    d = Decision.from_value(pyrego.UNDEFINED)
    assert (d.allowed, d.value, d.defined) == (False, None, False)


def test_evaluate_fails_closed() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\n\nallow := input.a\n\nallow := input.b\n")
    assert evaluate(engine, "data.p.allow", {"a": True, "b": True}).allowed is True
    with pytest.raises(PolicyEvaluationError) as err:
        evaluate(engine, "data.p.allow", {"a": True, "b": False})
    assert err.value.code == "eval_conflict_error"

    def gone() -> Any:
        raise OSError("gone")

    with pytest.raises(PolicyEvaluationError) as err:
        evaluate(gone, "data.p.allow", {})
    assert err.value.code == "internal_error"


def test_request_input() -> None:
    doc = request_input(
        "get",
        "/finance/salary/alice",
        [("Host", "x"), ("X-Tag", "a"), ("x-tag", "b"), ("Authorization", "Bearer  t0k ")],
        [("q", "1"), ("r", ""), ("q", "2")],
        identify=lambda token: {"user": "from " + str(token)},
    )
    assert doc == {
        "method": "GET",
        "path": ["finance", "salary", "alice"],
        "path_string": "/finance/salary/alice",
        "headers": {"host": "x", "x-tag": "a, b", "authorization": "Bearer  t0k "},
        "query": {"q": ["1", "2"], "r": [""]},
        "token": "t0k",
        "identity": {"user": "from t0k"},
    }
    bare = request_input("POST", "/", [("authorization", "Basic abc")], [], identify=lambda token: None)
    assert bare == {"method": "POST", "path": [""], "path_string": "/", "headers": {"authorization": "Basic abc"}, "query": {}}


@pytest.mark.parametrize(
    ("path", "segments"),
    [("/a/b", ["a", "b"]), ("/a/b/", ["a", "b"]), ("/", [""]), ("/a//b", ["a", "", "b"]), ("//a", ["a"]), ("/é/%", ["é", "%"])],
)
def test_path_segments(path: str, segments: list[str]) -> None:
    assert path_segments(path) == segments


def test_exempt_paths() -> None:
    exempt = ExemptPaths(["/healthz", "/static/", lambda p: p.endswith(".ico")])
    assert [exempt(p) for p in ["/healthz", "/healthz/", "/static/a.css", "/static", "/staticx", "/favicon.ico", "/"]] == [
        True,
        False,
        True,
        False,
        False,
        True,
        False,
    ]
    assert not ExemptPaths([])
    with pytest.raises(ValueError):
        ExemptPaths(["healthz"])


def _write(folder: Path, version: int) -> None:
    (folder / "p.rego").write_text("package p\n\ndecision := {\"allow\": true, \"a\": data.v, \"b\": data.w}\n", encoding="utf-8")
    (folder / "data.json").write_text(json.dumps({"v": version, "w": version}), encoding="utf-8")


def test_policy_directory_reloads_whole(tmp_path: Path) -> None:
    _write(tmp_path, 0)
    policies = PolicyDirectory(tmp_path, decisions=["data.p.decision"])
    assert not policies.reload_if_changed()
    stop = threading.Event()
    seen: list[tuple[Any, Any]] = []
    torn: list[Any] = []

    def read() -> None:
        while not stop.is_set():
            value = policies().eval_rule("data.p.decision", input={})
            seen.append((value["a"], value["b"]))
            if value["a"] != value["b"]:
                torn.append(value)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    try:
        for version in range(1, 30):
            _write(tmp_path, version)
            os.utime(tmp_path / "data.json", ns=(version * 10**9, version * 10**9))  # (a changed mtime, however fast)
            assert policies.reload_if_changed()
            assert policies().eval_rule("data.p.decision", input={})["a"] == version
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert torn == []
    assert len({a for a, _ in seen}) > 1
    assert policies.generation == 30
    (tmp_path / "p.rego").write_text("package p\n\ndecision := {\n", encoding="utf-8")
    before = policies()
    with pytest.raises(pyrego.RegoParseError):
        policies.reload()
    assert policies() is before and policies.generation == 30


def _run(mw: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(mw(scope, receive, send))
    return sent


def test_asgi_websocket_and_lifespan() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", 'package p\n\nallow if input.path == ["ws", "ok"]\n\nallow if { input.method == "WEBSOCKET"; input.path == ["ws", "any"] }\n')

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "app", "scope": scope["type"]})

    mw = PolicyMiddleware(app, engine, "data.p.allow")
    assert _run(mw, {"type": "websocket", "path": "/ws/ok", "headers": []}) == [{"type": "app", "scope": "websocket"}]
    assert _run(mw, {"type": "websocket", "path": "/ws/any", "headers": []}) == [{"type": "app", "scope": "websocket"}]
    assert _run(mw, {"type": "websocket", "path": "/ws/no", "headers": []}) == [{"type": "websocket.close", "code": 1008}]
    assert _run(mw, {"type": "lifespan"}) == [{"type": "app", "scope": "lifespan"}]
    broken = PolicyMiddleware(app, engine, "data.p.allow", extend=lambda scope, doc: 1 / 0)
    assert _run(broken, {"type": "websocket", "path": "/ws/ok", "headers": []}) == [{"type": "websocket.close", "code": 1011}]


def test_importing_the_integrations_loads_no_framework() -> None:
    code = (
        "import pyrego.integrations, pyrego.integrations.decisions, pyrego.integrations.reload, sys\n"
        "print([m for m in ('fastapi', 'starlette', 'django', 'anyio', 'uvicorn') if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = "import pyrego.integrations.asgi, sys\nprint([m for m in ('fastapi', 'starlette', 'django', 'anyio') if m in sys.modules])\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_time_limit_fails_closed(tmp_path: Path) -> None:
    (tmp_path / "p.rego").write_text(
        "package p\n\nallow if count([y | some y in numbers.range(1, input.n); y % 7 == 0]) >= 0\n", encoding="utf-8"
    )
    policies = PolicyDirectory(tmp_path, configure=lambda engine: engine.set_eval_timeout(0.02))
    assert evaluate(policies, "data.p.allow", {"n": 10}).allowed
    with pytest.raises(PolicyEvaluationError) as err:
        evaluate(policies, "data.p.allow", {"n": 10**7})
    assert err.value.code == "eval_cancel_error"
