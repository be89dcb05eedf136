"""The command line where a first-time user meets it: input from stdin, the
bare command and ``--version``, load errors, ``fmt --fail``, ``compile``
without unknowns and ``test --run`` with a bad pattern. Expected behaviour is
OPA's ``cmd/*.go`` (v1.20.2), cited per test."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyrego.cli import main

REPO = Path(__file__).resolve().parent.parent


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


class _Stdin(io.TextIOWrapper):
    """A text stdin with a binary buffer, as the real one has."""


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", _Stdin(io.BytesIO(data), encoding="utf-8"))


# ---------------------------------------------------------------- eval -I (OPA: readInputBytes + util.Unmarshal)


def test_stdin_input_accepts_yaml(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``-I`` reads JSON or YAML, as ``-i`` does (OPA's util.Unmarshal: JSON if valid, else YAML)."""
    _stdin(monkeypatch, b"user: alice\nroles:\n  - admin\nn: 3\n")
    assert _run(capsys, "eval", "-I", "-f", "raw", "[input.user, input.roles, input.n * 2]") == (0, '["alice",["admin"],6]\n', "")


def test_stdin_input_json_byte_order_mark_and_empty(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, b'\xef\xbb\xbf{"a": 1.5}')
    assert _run(capsys, "eval", "-I", "-f", "raw", "input.a") == (0, "1.5\n", "")
    _stdin(monkeypatch, b"")  # YAML's empty document: input is null, as in OPA
    assert _run(capsys, "eval", "-I", "-f", "raw", "input") == (0, "null\n", "")


def test_input_file_is_json_or_yaml_whatever_its_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """OPA reads ``-i``'s bytes and unmarshals them the same way: a ``.json`` name holding YAML is read."""
    path = tmp_path / "in.json"
    path.write_text("a: [1, 2]\n")
    assert _run(capsys, "eval", "-i", str(path), "-f", "raw", "input.a") == (0, "[1,2]\n", "")


def test_stdin_input_neither_json_nor_yaml(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Told plainly on stderr, one line, exit 2 (OPA: ``unable to parse input: error converting YAML to JSON: yaml: ...``)."""
    _stdin(monkeypatch, b"a: b: c\n")
    status, out, err = _run(capsys, "eval", "-I", "input")
    assert (status, out) == (2, "")
    assert err == "unable to parse input: error converting YAML to JSON: yaml: line 1: mapping values are not allowed here\n"


# ---------------------------------------------------------------- fmt --fail (OPA: cmd/fmt.go)


def test_fmt_fail_exits_2_as_opa(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``opa fmt --fail`` returns ``newError("unexpected diff")``, whose exit code is 2; the help says so."""
    path = tmp_path / "p.rego"
    path.write_text("package p\n\nx   :=   1\n")
    assert _run(capsys, "fmt", "--fail", str(path)) == (2, "", "unexpected diff\n")
    path.write_text("package p\n\nx := 1\n")
    assert _run(capsys, "fmt", "--fail", str(path))[0] == 0
    assert main(["fmt", "--help"]) == 0
    assert "exit with status 2 when a file would be reformatted" in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------- test -r with a bad pattern (OPA: tester.Runner, regexp.Compile)


def test_run_with_an_invalid_regex_is_gos_error_alone(tmp_path: Path) -> None:
    """OPA prints Go's regexp error and exits 1; RE2's own log lines must not reach stderr
    (they come from its C++ library, so the command runs in a fresh process here)."""
    (tmp_path / "p_test.rego").write_text("package p_test\n\ntest_a if true\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "test", "--no-cache", "-r", "(", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "error parsing regexp: missing closing ): `(`\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "test", "--no-cache", "-r", "[", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert (proc.returncode, proc.stderr) == (1, "error parsing regexp: missing closing ]: `[`\n")


# ---------------------------------------------------------------- the bare command and --version (OPA: main.go, cmd/commands.go)


def test_bare_command_prints_help_and_exits_0() -> None:
    """``opa`` alone: the root command has no action of its own, so cobra prints its help
    on stdout and the command succeeds."""
    proc = subprocess.run([sys.executable, "-m", "pyrego"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("usage: pyrego ")
    for command in ("eval", "test", "fmt", "version"):
        assert f"    {command} " in proc.stdout


def test_version_flag_prints_what_version_prints(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capsys, "version")
    assert (status, err) == (0, "") and out.startswith("pyrego ")
    assert _run(capsys, "--version") == (0, out, "")


# ---------------------------------------------------------------- eval's load errors (OPA: cmd/eval.go)


def test_input_and_data_load_errors_are_reported_where_opa_reports_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``opa eval`` reads ``-i`` in setupEval: its error is returned from the command and
    printed plainly on stderr; ``-d`` paths are loaded by rego.Load while preparing the
    query: their error is one of the result's errors, printed in the output format (JSON
    on stdout by default). Both exit 2."""
    missing = tmp_path / "missing.json"
    assert _run(capsys, "eval", "-i", str(missing), "1") == (2, "", f"open {missing}: no such file or directory\n")
    nope = tmp_path / "nope.rego"
    status, out, err = _run(capsys, "eval", "-d", str(nope), "1")
    assert (status, err) == (2, "")
    assert json.loads(out) == {"errors": [{"message": f"stat {nope}: no such file or directory"}]}
