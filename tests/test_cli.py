"""The ``pyrego`` command line, run as a subprocess (``python -m pyrego ...``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "authz"


def run(*args: str, cwd: Path = REPO, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyrego", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_example_policy_json() -> None:
    p = run("eval", "-d", str(EXAMPLE / "policy.rego"), "-i", str(EXAMPLE / "input.json"), "data.authz.allow")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {
        "result": [
            {"expressions": [{"value": True, "text": "data.authz.allow", "location": {"row": 1, "col": 1}}]}
        ]
    }
    assert p.stdout.startswith('{\n  "result": [')  # indented like opa eval
    # fields in opa eval's order
    assert p.stdout.index('"value"') < p.stdout.index('"text"') < p.stdout.index('"location"')
    assert p.stdout.index('"row"') < p.stdout.index('"col"')


def test_example_policy_sets_and_raw() -> None:
    p = run("eval", "-d", str(EXAMPLE), "-i", str(EXAMPLE / "input.json"), "-f", "raw", "data.authz.permitted_actions")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == ["read", "write"]
    p = run("eval", "-d", str(EXAMPLE), "-i", str(EXAMPLE / "input.json"), "--format", "raw", "data.authz.reasons")
    assert json.loads(p.stdout) == []


def test_example_denied_request(tmp_path: Path) -> None:
    inp = json.loads((EXAMPLE / "input.json").read_text())
    inp["action"] = "delete"
    (tmp_path / "in.json").write_text(json.dumps(inp))
    p = run("eval", "-d", str(EXAMPLE / "policy.rego"), "-i", str(tmp_path / "in.json"), "-f", "raw", "data.authz")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["allow"] is False
    assert doc["reasons"] == ['none of the roles ["viewer", "editor"] may delete a document']


def test_raw_string_is_unquoted() -> None:
    p = run("eval", "-f", "raw", 'concat("-", ["a", "b"])')
    assert p.returncode == 0, p.stderr
    assert p.stdout == "a-b\n"


def test_pretty_bindings_table() -> None:
    p = run("eval", "-f", "pretty", "x := [1, 2][_]")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("+") and "x" in lines[1]
    assert any("| 1 " in line for line in lines) and any("| 2 " in line for line in lines)


def test_pretty_undefined() -> None:
    p = run("eval", "-f", "pretty", "input.missing")
    assert p.returncode == 0
    assert p.stdout.strip() == "undefined"


def test_parse_error_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rego"
    bad.write_text("package bad\n\nallow if {\n    input.x ==\n}\n")
    p = run("eval", "-d", str(bad), "data.bad.allow")
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    (err,) = doc["errors"]
    assert err["code"] == "rego_parse_error"
    assert err["location"]["file"] == str(bad)
    assert err["location"]["row"] in (4, 5)
    assert err["message"]


def test_parse_error_text_has_location_and_caret(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rego"
    bad.write_text("package bad\n\np := [1, 2\n")
    p = run("eval", "-f", "pretty", "-d", str(bad), "data.bad.p")
    assert p.returncode == 2
    text = p.stderr
    assert "rego_parse_error" in text
    assert f"{bad}:3:" in text or f"{bad}:4:" in text
    assert "^" in text


def test_undefined_with_fail() -> None:
    args = ("eval", "-d", str(EXAMPLE / "policy.rego"), "data.authz.no_such_rule")
    p = run(*args)
    assert p.returncode == 0
    assert json.loads(p.stdout) == {}
    p = run(*args[:1], "--fail", *args[1:])
    assert p.returncode == 1
    assert json.loads(p.stdout) == {}


def test_fail_with_defined_false_is_success() -> None:
    # a defined `false` is a result: --fail only fails on undefined
    p = run("eval", "--fail", "-d", str(EXAMPLE / "policy.rego"), "data.authz.allow")
    assert p.returncode == 0
    assert json.loads(p.stdout)["result"][0]["expressions"][0]["value"] is False


def test_fail_defined() -> None:
    p = run("eval", "--fail-defined", "1 + 1 == 2")
    assert p.returncode == 1
    p = run("eval", "--fail-defined", "input.nothing")
    assert p.returncode == 0


def test_data_folder_loading(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    (root / "a" / "b").mkdir(parents=True)
    (root / "policies").mkdir()
    (root / "data.json").write_text(json.dumps({"top": 1}))
    (root / "a" / "b" / "data.json").write_text(json.dumps({"k": "v"}))
    (root / "a" / "extra.yaml").write_text("list:\n  - 1\n  - two\n")
    (root / "policies" / "p.rego").write_text("package p\n\nq := [data.top, data.a.b.k, data.a.list[1]]\n")
    (root / "README.txt").write_text("not loaded")
    p = run("eval", "-f", "raw", "-d", str(root), "data.p.q")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [1, "v", "two"]


def test_data_file_named_directly_merges_at_root(tmp_path: Path) -> None:
    (tmp_path / "users.json").write_text(json.dumps({"users": {"alice": {"admin": True}}}))
    p = run("eval", "-f", "raw", "-d", str(tmp_path / "users.json"), "data.users.alice.admin")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "true"


def test_data_prefix(tmp_path: Path) -> None:
    (tmp_path / "people.json").write_text(json.dumps({"alice": 1}))
    p = run("eval", "-f", "raw", "-d", f"org.people:{tmp_path / 'people.json'}", "data.org.people.alice")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "1"


def test_data_conflict_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps({"a": 1}))
    (tmp_path / "two.json").write_text(json.dumps({"a": 2}))
    p = run("eval", "-d", str(tmp_path / "one.json"), "-d", str(tmp_path / "two.json"), "data.a")
    assert p.returncode == 2


def test_yaml_input(tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text("user: alice\nn: 3\n")
    p = run("eval", "-f", "raw", "-i", str(tmp_path / "in.yaml"), "[input.user, input.n * 2]")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == ["alice", 6]


def test_stdin_input() -> None:
    p = run("eval", "-f", "raw", "-I", "input.a", stdin='{"a": [1, 2]}')
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [1, 2]


def test_missing_file_is_an_error() -> None:
    p = run("eval", "-d", "/nonexistent/policy.rego", "data.x")
    assert p.returncode == 2
    assert json.loads(p.stdout) == {"errors": [{"message": "stat /nonexistent/policy.rego: no such file or directory"}]}
    p = run("eval", "-f", "pretty", "-i", "/nonexistent/input.json", "data.x")
    assert p.returncode == 2
    assert p.stderr.strip() == "open /nonexistent/input.json: no such file or directory"


def test_usage_error_exit_code() -> None:
    assert run("eval").returncode == 2
    assert run("eval", "--no-such-flag", "x").returncode == 2


def test_conflict_error(tmp_path: Path) -> None:
    pol = tmp_path / "c.rego"
    pol.write_text("package c\n\np := 1 if true\n\np := 2 if true\n")
    p = run("eval", "-d", str(pol), "data.c.p")
    assert p.returncode == 2
    assert json.loads(p.stdout)["errors"][0]["code"] == "eval_conflict_error"


def test_strict_builtin_errors() -> None:
    q = "x := to_number(input.s)"
    p = run("eval", "-I", q, stdin='{"s": "not a number"}')
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout) == {}
    p = run("eval", "--strict-builtin-errors", "-I", q, stdin='{"s": "not a number"}')
    assert p.returncode == 2
    assert json.loads(p.stdout)["errors"][0]["code"] == "eval_builtin_error"


def test_v0_compatible(tmp_path: Path) -> None:
    pol = tmp_path / "v0.rego"
    pol.write_text("package v0\n\np[x] { x := [1, 2][_] }\n\nallow { count(p) == 2 }\n")
    p = run("eval", "-f", "raw", "--v0-compatible", "-d", str(pol), "data.v0.allow")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip() == "true"
    p = run("eval", "-d", str(pol), "data.v0.allow")
    assert p.returncode == 2  # v0 syntax is a parse error in v1 mode
    assert json.loads(p.stdout)["errors"][0]["code"] == "rego_parse_error"


def test_bindings_in_json_output() -> None:
    p = run("eval", "x := 1 + 2; y := [x]")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)["result"]
    assert row["bindings"] == {"x": 3, "y": [3]}


def test_parse_command() -> None:
    p = run("parse", "--format", "json", str(EXAMPLE / "policy.rego"))
    assert p.returncode == 0, p.stderr
    tree = json.loads(p.stdout)
    assert tree["package"]["path"][0] == {"type": "var", "value": "data"}
    assert len(tree["rules"]) >= 5


def test_parse_command_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rego"
    bad.write_text("package bad\np := {\n")
    p = run("parse", str(bad))
    assert p.returncode == 1
    assert "rego_parse_error" in p.stderr


def test_version() -> None:
    p = run("version")
    assert p.returncode == 0
    assert p.stdout.startswith("pyrego ")


@pytest.mark.parametrize("fmt", ["json", "pretty", "raw"])
def test_print_goes_to_stderr(fmt: str) -> None:
    p = run("eval", "-f", fmt, 'print("hel", "lo"); x := 1')
    assert p.returncode == 0, p.stderr
    assert "hel lo" in p.stderr
    assert "hel lo" not in p.stdout


def test_bench_help() -> None:
    p = run("bench", "--help")
    assert p.returncode == 0, p.stderr
    assert "usage: pyrego bench" in p.stdout
