"""``pyrego check``: opa check's output, flags and exit status.

The pretty output of compile errors is compared with OPA's own text for the
same files (the oracle reports a compilation's errors as ``opa check``
prints them, after its ``bundle activation failed:`` prefix)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pyrego.cli import main

REPO = Path(__file__).resolve().parent.parent

COMPILE_ERRORS = (
    "package p\n\nr if {\n\tx = input.y\n\tx := 2\n}\n\ns if {\n\tinput.a := 1\n}\n\nt if {\n\t\tnot input.b[_] == 2\n}\n"
)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["check", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _opa_text(oracle: Any, files: dict[str, str]) -> str:
    res = oracle.evaluate(files, "data")
    assert res.is_error
    return re.sub(r"^bundle activation failed: ", "", res.error_message or "")


def test_clean_policies_print_nothing(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "a.rego").write_text("package a\n\nallow if input.user == \"alice\"\n")
    assert _run(capsys, "a.rego") == (0, "", "")


def test_compile_errors_as_opa_prints_them(capsys: pytest.CaptureFixture[str], workdir: Path, oracle: Any) -> None:
    (workdir / "x.rego").write_text(COMPILE_ERRORS)
    status, out, err = _run(capsys, "x.rego")
    assert (status, out) == (1, "")
    assert err == _opa_text(oracle, {"x.rego": COMPILE_ERRORS}) + "\n"
    assert err.startswith("2 errors occurred:\nx.rego:5: rego_compile_error: var x referenced above\n")


def test_every_error_of_many_files(capsys: pytest.CaptureFixture[str], workdir: Path, oracle: Any) -> None:
    files = {
        "a.rego": "package a\n\nimport data.x\nimport data.y as x\n\nr := 1\n",
        "b.rego": "package b\n\nimport rego.v1\nimport rego.v1\n\nr := 1\n",
    }
    for name, text in files.items():
        (workdir / name).write_text(text)
    status, _, err = _run(capsys, ".")
    assert status == 1
    assert err == _opa_text(oracle, files) + "\n"


def test_type_errors_are_checked(capsys: pytest.CaptureFixture[str], workdir: Path, oracle: Any) -> None:
    text = "package p\n\nr if {\n\tx := 1 + \"a\"\n\tx\n}\n"
    (workdir / "x.rego").write_text(text)
    status, _, err = _run(capsys, "x.rego")
    assert status == 1
    assert err == _opa_text(oracle, {"x.rego": text}) + "\n"


def test_parse_errors_are_loading_errors(capsys: pytest.CaptureFixture[str], workdir: Path, oracle: Any) -> None:
    text = "package p\n\nr if {\n\t\tx := [1 2]\n}\n"
    (workdir / "x.rego").write_text(text)
    (workdir / "y.rego").write_text("package q\n\nr := \n")
    status, _, err = _run(capsys, "x.rego")
    opa = _opa_text(oracle, {"x.rego": text}).removeprefix("1 error occurred: ")
    assert (status, err) == (1, f"1 error occurred during loading: {opa}\n")
    assert err.endswith("\n\tx := [1 2]\n\t        ^\n")
    status, _, err = _run(capsys, ".")
    assert status == 1 and err.startswith("2 errors occurred during loading:\nx.rego:4: rego_parse_error: ")
    # OPA's location is the end of the text; its detail the last line with text
    assert "\ny.rego:4: rego_parse_error: unexpected eof token\n\tr := \n\t   ^\n" in err


def test_json_format(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "x.rego").write_text(COMPILE_ERRORS)
    status, out, err = _run(capsys, "-f", "json", "x.rego")
    assert status == 1 and out == ""
    assert json.loads(err) == {
        "errors": [
            {"message": "var x referenced above", "code": "rego_compile_error", "location": {"file": "x.rego", "row": 5, "col": 2}},
            {"message": "cannot assign to ref", "code": "rego_compile_error", "location": {"file": "x.rego", "row": 9, "col": 2}},
        ]
    }
    (workdir / "x.rego").write_text('package p\n\nr if {\n\t\tx := ["<" 2]\n}\n')
    status, _, err = _run(capsys, "--format=json", "x.rego")
    assert status == 1
    assert '"message": "unexpected number token: expected \\",\\" or \\"]\\""' in err
    (entry,) = json.loads(err)["errors"]
    assert entry["details"] == {"line": '\t\tx := ["<" 2]', "idx": 12}
    assert "\\u003c" in err  # Go's encoder escapes <, > and &


def test_missing_path(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    status, _, err = _run(capsys, "nope.rego")
    assert (status, err) == (1, "1 error occurred during loading: stat nope.rego: no such file or directory\n")
    status, _, err = _run(capsys, "-f", "json", "nope.rego")
    assert json.loads(err) == {"errors": [{"message": "stat nope.rego: no such file or directory"}]}
    assert _run(capsys)[0] == 2  # no path at all: a usage error


def test_max_errors(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    body = "".join(f"\tinput.a{i} := {i}\n" for i in range(12))
    (workdir / "x.rego").write_text(f"package p\n\nr if {{\n{body}}}\n")
    _, _, err = _run(capsys, "x.rego")
    lines = err.splitlines()
    assert lines[0] == "11 errors occurred:" and lines[-1] == "rego_compile_error: error limit reached"
    _, _, err = _run(capsys, "-m", "2", "x.rego")
    assert err.splitlines() == [
        "3 errors occurred:",
        "x.rego:4: rego_compile_error: cannot assign to ref",
        "x.rego:5: rego_compile_error: cannot assign to ref",
        "rego_compile_error: error limit reached",
    ]
    _, _, err = _run(capsys, "--max-errors", "0", "x.rego")
    assert err.splitlines()[0] == "12 errors occurred:" and "limit" not in err


def test_strict(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "x.rego").write_text("package p\n\nimport data.q\n\nf(x) := 1\n")
    assert _run(capsys, "x.rego")[0] == 0
    status, _, err = _run(capsys, "--strict", "x.rego")
    assert (status, err) == (1, "1 error occurred: x.rego:3: rego_compile_error: import data.q unused\n")
    (workdir / "x.rego").write_text("package p\n\nf(x) := 1\n")
    status, _, err = _run(capsys, "-S", "x.rego")
    assert err == "1 error occurred: x.rego:3: rego_compile_error: unused argument x. (hint: use _ (wildcard variable) instead)\n"


def test_ignore_and_other_files(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "pol").mkdir()
    (workdir / "pol" / "ok.rego").write_text("package ok\n\nr := 1\n")
    (workdir / "pol" / "bad.rego").write_text("package bad\n\nr := \n")
    (workdir / "pol" / "data.json").write_text("{not json")  # opa check reads only Rego files
    assert _run(capsys, "pol")[0] == 1
    assert _run(capsys, "--ignore", "bad.rego", "pol") == (0, "", "")
    assert _run(capsys, "--ignore", "x,bad*", "pol")[0] == 0


def test_rego_versions(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "v0.rego").write_text("package p\n\nr[x] {\n\tx := 1\n}\n")
    status, _, err = _run(capsys, "v0.rego")
    assert status == 1 and "rego_parse_error: `if` keyword is required before rule body" in err
    assert _run(capsys, "--v0-compatible", "v0.rego") == (0, "", "")
    # --v0-v1: v0 syntax that must pass v1's checks too
    status, _, err = _run(capsys, "--v0-v1", "v0.rego")
    assert status == 1 and "rego_parse_error: `if` keyword is required before rule body" in err
    (workdir / "v0.rego").write_text("package p\n\nimport rego.v1\n\nr contains x if {\n\tx := 1\n}\n")
    assert _run(capsys, "--v0-v1", "v0.rego") == (0, "", "")
    (workdir / "v0.rego").write_text("package p\n\nr contains x if {\n\tx := 1\n}\n")
    status, _, err = _run(capsys, "--v0-v1", "v0.rego")  # no keywords in v0 without imports
    assert status == 1 and "rego_parse_error: var cannot be used for rule name" in err
    (workdir / "v0.rego").write_text("package p\n\nimport future.keywords.if\n\ninput := 1 if {\n\t1 == 2\n}\n")
    status, _, err = _run(capsys, "--v0-v1", "v0.rego")
    assert err == "1 error occurred: v0.rego:5: rego_compile_error: rules must not shadow input (use a different rule name)\n"
    assert _run(capsys, "--v0-compatible", "v0.rego")[0] == 0


def test_capabilities(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "x.rego").write_text('package p\n\nr := upper("a")\n')
    caps = workdir / "caps.json"
    caps.write_text(json.dumps({"builtins": [{"name": "lower"}]}))
    status, _, err = _run(capsys, "--capabilities", str(caps), "x.rego")
    assert (status, err) == (1, "1 error occurred: x.rego:3: rego_type_error: undefined function upper\n")
    assert _run(capsys, "--capabilities", "v1.20.2", "x.rego")[0] == 0
    status, _, err = _run(capsys, "--capabilities", "v0.0.1", "x.rego")
    assert status == 1 and "no such file or capabilities version found: v0.0.1" in err


def test_schema_is_read(capsys: pytest.CaptureFixture[str], workdir: Path) -> None:
    (workdir / "x.rego").write_text("package p\n\nr := input.x\n")
    (workdir / "input.json").write_text('{"type": "object"}')
    assert _run(capsys, "-s", "input.json", "x.rego") == (0, "", "")
    status, _, err = _run(capsys, "--schema", "missing.json", "x.rego")
    assert status == 1 and "stat missing.json: no such file or directory" in err


@pytest.mark.parametrize(
    ("path", "flags"),
    [
        ("examples", ()),
        ("tests/repos/api_authz", ()),
        ("tests/repos/infra_scan", ()),
        ("tests/repos/k8s_admission", ()),
        ("tests/repos/mocking", ()),
        ("tests/repos/k8s_admission_v0", ("--v0-compatible",)),
    ],
)
def test_project_policies_are_clean(capsys: pytest.CaptureFixture[str], path: str, flags: tuple[str, ...]) -> None:
    """The project's own examples and test repositories pass opa check's checks, strict ones too."""
    target = str(REPO / path)
    assert any(Path(target).rglob("*.rego"))
    assert _run(capsys, *flags, target) == (0, "", "")
    assert _run(capsys, "--strict", *flags, target) == (0, "", "")
