"""Loading a policy repository from a folder: Engine.add_policies_from_dir and ``pyrego eval -d``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.cli import main as cli_main


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


REPO = {
    "authz/allow.rego": "package authz\nimport data.lib.roles as r\ndefault allow := false\nallow if r.is_admin(input.user)\nallow if not denied",
    "authz/deny.rego": "package authz\ndenied if input.user in data.blocked.users",
    "authz/allow_test.rego": 'package authz\ntest_admin if allow with input as {"user": "ann"}\ntest_blocked if not allow with input as {"user": "bob"}',
    "lib/roles.rego": "package lib.roles\nis_admin(u) if data.roles.admins[_] == u",
    "roles/data.json": json.dumps({"admins": ["ann"]}),
    "blocked/users.yaml": "users:\n  - bob\n",
    "top.json": json.dumps({"version": 3}),
    "notes.txt": "not loaded",
}


def test_a_repository_loads_with_data_at_folder_paths(tmp_path: Path) -> None:
    root = _write(tmp_path, REPO)
    engine = pyrego.Engine()
    names = engine.add_policies_from_dir(root)
    assert sorted(names) == ["authz/allow.rego", "authz/allow_test.rego", "authz/deny.rego", "lib/roles.rego"]
    assert engine.eval_rule("data.roles") == {"admins": ["ann"]}
    assert engine.eval_rule("data.blocked.users") == ["bob"]
    assert engine.eval_rule("data.version") == 3
    assert engine.eval_rule("data.authz.test_admin") is True
    assert engine.eval_rule("data.authz.test_blocked") is True
    engine.set_input({"user": "carl"})
    assert engine.eval_rule("data.authz.allow") is True
    engine.set_input({"user": "bob"})
    assert engine.eval_rule("data.authz.allow") is False


def test_not_recursive_takes_only_the_top_folder(tmp_path: Path) -> None:
    root = _write(tmp_path, REPO)
    engine = pyrego.Engine()
    assert engine.add_policies_from_dir(root, recursive=False) == []
    assert engine.eval_rule("data.version") == 3
    assert engine.eval_rule("data.roles") is pyrego.UNDEFINED


def test_errors_name_modules_relative_to_the_folder(tmp_path: Path) -> None:
    root = _write(tmp_path, {"pkg/bad.rego": "package bad\n\np := {"})
    engine = pyrego.Engine()
    with pytest.raises(pyrego.RegoError) as info:
        engine.add_policies_from_dir(root)
    assert info.value.code == "rego_parse_error"
    assert str(info.value.location) == "pkg/bad.rego:3:6"


def test_a_failed_load_leaves_the_engine_as_it_was(tmp_path: Path) -> None:
    engine = pyrego.Engine()
    engine.add_policy("keep.rego", "package keep\nv := 1")
    engine.add_data({"a": 1})
    bad_policy = _write(tmp_path / "one", {"a/ok.rego": "package ok\nx := 1", "a/data.json": '{"k": 1}', "b/bad.rego": "package"})
    with pytest.raises(pyrego.RegoError):
        engine.add_policies_from_dir(bad_policy)
    clash = _write(tmp_path / "two", {"ok.rego": "package ok\nx := 1", "data.json": '{"a": 2}'})
    with pytest.raises(pyrego.DataError, match="merge error"):
        engine.add_policies_from_dir(clash)
    bad_json = _write(tmp_path / "three", {"ok.rego": "package ok\nx := 1", "d/data.json": "{"})
    with pytest.raises(pyrego.DataError):
        engine.add_policies_from_dir(bad_json)
    assert engine.get_packages() == ["data.keep"]
    assert engine.eval_rule("data") == {"a": 1, "keep": {"v": 1}}


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(pyrego.RegoError, match="no such file"):
        pyrego.Engine().add_policies_from_dir(tmp_path / "nope")


def test_v0_repository(tmp_path: Path) -> None:
    root = _write(tmp_path, {"p/a.rego": "package p\nviolation[msg] { input.x; msg := \"x\" }", "p/a_test.rego": "package p\ntest_v { violation[\"x\"] with input as {\"x\": true} }"})
    engine = pyrego.Engine()
    engine.set_rego_v0(True)
    engine.add_policies_from_dir(root)
    assert engine.eval_rule("data.p.test_v") is True


def test_cli_loads_the_same_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _write(tmp_path, REPO)
    status = cli_main(["eval", "-d", str(root), "-f", "raw", "[data.authz.test_admin, data.authz.test_blocked, data.blocked.users, data.version]"])
    out: Any = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out == [True, True, ["bob"], 3]


def test_cli_errors_name_the_path_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _write(tmp_path, {"pkg/bad.rego": "package bad\np := {"})
    status = cli_main(["eval", "-d", str(root), "data"])
    out = json.loads(capsys.readouterr().out)
    assert status == 2
    assert out["errors"][0]["location"]["file"] == str(root / "pkg" / "bad.rego")
