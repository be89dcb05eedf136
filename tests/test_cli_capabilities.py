"""``pyrego capabilities``: OPA's capabilities documents (``opa capabilities``).

Expected outputs: OPA v1.20.2's own capabilities file
(``../shared/opa/capabilities-v1.20.2.json``, which is ``opa capabilities``
output for that version) for ``--current`` and ``--version``; OPA's command
tests (``cmd/capabilities_test.go``: the exact text printed for a file, the
features and future keywords of ``--current`` with and without
``--v0-compatible``); ``cmd/capabilities.go`` for the flags (no flag lists the
versions, ``--version`` wins over ``--file`` over ``--current``) and
``v1/ast/capabilities.go`` for the error wording.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyrego.builtins.registry import all_builtins
from pyrego.cli import main
from shared_material import CAPABILITIES, need_shared

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def opa_file() -> Path:
    """OPA v1.20.2's capabilities file from the shared material (skips without it)."""
    return need_shared(*CAPABILITIES)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["capabilities", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_no_flag_lists_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys) == (0, "v1.20.2\n", "")


def test_current_is_opa_file_for_implemented_builtins(capsys: pytest.CaptureFixture[str], opa_file: Path) -> None:
    """Every builtin pyrego implements, with OPA's entry for it, byte for byte."""
    code, out, err = run(capsys, "--current")
    assert (code, err) == (0, "")
    opa = json.loads(opa_file.read_text())
    mine = json.loads(out)
    implemented = set(all_builtins())
    assert mine["builtins"] == [b for b in opa["builtins"] if b["name"] in implemented]
    assert [b["name"] for b in mine["builtins"]] == sorted(implemented)  # pyrego implements them all
    for key in ("future_keywords", "wasm_abi_versions", "features"):
        assert mine[key] == opa[key]
    assert list(mine) == ["builtins", "future_keywords", "wasm_abi_versions", "features"]
    assert out == opa_file.read_text()  # Go's MarshalIndent layout and escapes, plus Println's newline


def test_version(capsys: pytest.CaptureFixture[str], opa_file: Path) -> None:
    code, out, _ = run(capsys, "--version", "v1.20.2")
    assert code == 0 and out == opa_file.read_text()
    code, out, err = run(capsys, "--version", "v9.9.9")
    assert (code, out) == (1, "")
    assert "no capabilities version found v9.9.9" in err


def test_file_as_opa_capabilities_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/capabilities_test.go TestCapabilitiesJSONOutputBytes: the Builtin struct's
    key order (name, decl, infix), type declarations with sorted keys."""
    path = tmp_path / "test-capabilities.json"
    path.write_text(
        '{"builtins": [{"name": "plus", "infix": "+", "decl": {"type": "function", '
        '"args": [{"type": "number"}, {"type": "number"}], "result": {"type": "number"}}}]}'
    )
    code, out, _ = run(capsys, "--file", str(path))
    assert code == 0
    assert out == (
        '{\n  "builtins": [\n    {\n      "name": "plus",\n      "decl": {\n        "args": [\n          {\n'
        '            "type": "number"\n          },\n          {\n            "type": "number"\n          }\n'
        '        ],\n        "result": {\n          "type": "number"\n        },\n        "type": "function"\n'
        '      },\n      "infix": "+"\n    }\n  ]\n}\n'
    )


def test_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    code, out, err = run(capsys, "--file", str(missing))
    assert (code, out) == (1, "")
    assert f"open {missing}: no such file or directory" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = run(capsys, "--file", str(bad))
    assert code == 1 and "invalid JSON" in err


@pytest.mark.parametrize(
    ("flags", "features", "keywords"),
    [
        ([], ["keywords_in_refs", "rego_v1", "template_strings"], ["and", "not", "or"]),
        (
            ["--v0-compatible"],
            ["keywords_in_refs", "rego_v1", "rego_v1_import", "rule_head_ref_string_prefixes", "rule_head_refs"],
            ["and", "contains", "every", "if", "in", "not", "or"],
        ),
    ],
)
def test_current_features_as_opa_capabilities_test(
    flags: list[str], features: list[str], keywords: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """cmd/capabilities_test.go TestCapabilitiesCurrent."""
    code, out, _ = run(capsys, "--current", *flags)
    assert code == 0
    doc = json.loads(out)
    assert (doc["features"], doc["future_keywords"]) == (features, keywords)


def test_flag_precedence(tmp_path: Path, capsys: pytest.CaptureFixture[str], opa_file: Path) -> None:
    """cmd/capabilities.go: --version, then --file, then --current."""
    path = tmp_path / "c.json"
    path.write_text('{"features": ["x"]}')
    _, out, _ = run(capsys, "--current", "--file", str(path))
    assert json.loads(out) == {"features": ["x"]}
    _, out, _ = run(capsys, "--file", str(path), "--version", "v1.20.2")
    assert out == opa_file.read_text()


def test_subprocess_and_help(opa_file: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "capabilities", "--current"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout == opa_file.read_text()
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "capabilities", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for text in ("--current", "--version", "--file", "--v0-compatible", "Print a list of all existing capabilities"):
        assert text in proc.stdout
