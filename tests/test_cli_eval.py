"""``pyrego eval``'s output formats and flags, as ``opa eval`` has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pyrego
from pyrego.cli import main

POLICY = """package authz

allow if input.user == "alice"

f(x) := x + 1

xs := [1, 2]
"""


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def policy(tmp_path: Path) -> str:
    path = tmp_path / "authz.rego"
    path.write_text(POLICY)
    return str(path)


def test_values_prints_one_array_of_expression_values_per_result(capsys: pytest.CaptureFixture[str], policy: str) -> None:
    status, out, _ = _run(capsys, "eval", "-d", policy, "-f", "values", "x := data.authz.xs[_]; y := x * 10")
    assert status == 0
    assert out == "[\n  true,\n  true\n]\n[\n  true,\n  true\n]\n"


def test_bindings_prints_one_object_per_result(capsys: pytest.CaptureFixture[str], policy: str) -> None:
    status, out, _ = _run(capsys, "eval", "-d", policy, "-f", "bindings", "data.authz.xs[i] > 1")
    assert status == 0
    assert out == '{\n  "i": 1\n}\n'


def test_raw_joins_expressions_with_spaces(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "eval", "-f", "raw", '"a b"; [1]; 2')
    assert status == 0
    assert out == 'a b [1] 2\n'


def test_pretty_single_value_and_tables(capsys: pytest.CaptureFixture[str], policy: str) -> None:
    assert _run(capsys, "eval", "-f", "pretty", "-d", policy, "data.authz.xs")[1] == "[\n  1,\n  2\n]\n"
    # Variables sorted, then the non-boolean expressions by their text.
    _, out, _ = _run(capsys, "eval", "-f", "pretty", "-d", policy, "y := data.authz.xs[i]; data.authz.f(y)")
    assert out.splitlines() == [
        "+---+---+-----------------+",
        "| i | y | data.authz.f(y) |",
        "+---+---+-----------------+",
        "| 0 | 1 | 2               |",
        "| 1 | 2 | 3               |",
        "+---+---+-----------------+",
    ]
    assert _run(capsys, "eval", "-f", "pretty", "input.nothing")[1] == "undefined\n"


def test_discard(capsys: pytest.CaptureFixture[str]) -> None:
    assert json.loads(_run(capsys, "eval", "-f", "discard", "x := 1")[1]) == {"result": "discarded"}


def test_source_format_needs_partial_evaluation(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "eval", "-f", "source", "x := 1")
    assert status == 2 and "partial" in err


def test_query_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("data.authz.f(41)\n"))
    assert _run(capsys, "eval", "-d", policy, "--stdin", "-f", "raw")[1] == "42\n"
    status, _, err = _run(capsys, "eval", "--stdin", "x")
    assert status == 2 and "not both" in err


def test_package_and_imports_resolve_the_query(capsys: pytest.CaptureFixture[str], policy: str, tmp_path: Path) -> None:
    lib = tmp_path / "lib.rego"
    lib.write_text("package lib.util\n\ng := 5\n")
    status, out, _ = _run(capsys, "eval", "-d", policy, "-d", str(lib), "--package", "authz", "--import", "data.lib.util", "-f", "raw", "[f(1), xs, util.g]")
    assert status == 0, out
    assert json.loads(out) == [2, [1, 2], 5]
    # Without --package the names are unknown (unbound variables).
    status, out, _ = _run(capsys, "eval", "-d", policy, "f(1)")
    assert status == 2 and json.loads(out)["errors"][0]["code"] == "rego_type_error"


def test_engine_eval_query_with_package() -> None:
    e = pyrego.Engine()
    e.add_policy("authz.rego", POLICY)
    result = e.eval_query("allow", input={"user": "alice"}, package="authz")
    assert result["result"][0]["expressions"][0]["value"] is True
    assert e.eval_query("allow", input={"user": "bob"}, package="authz") == {"result": []}
    # The same text in another package is another query.
    with pytest.raises(pyrego.RegoError):
        e.eval_query("allow", input={"user": "alice"})
    with pytest.raises(pyrego.RegoError) as info:
        e.eval_query("allow", package="authz\nallow := true")
    assert info.value.code == "rego_argument_error"


def test_timeout_ends_a_long_evaluation(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "eval", "--timeout", "200ms", "count([x | some x in numbers.range(1, 100000000)])")
    assert status == 2
    assert json.loads(out)["errors"][0]["code"] == "eval_cancel_error"
    status, _, err = _run(capsys, "eval", "--timeout", "soon", "1")
    assert status == 2 and "--timeout" in err


def test_capabilities_restrict_builtins(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    caps = tmp_path / "caps.json"
    caps.write_text(json.dumps({"builtins": [{"name": "count"}, {"name": "eq"}, {"name": "assign"}]}))
    status, out, _ = _run(capsys, "eval", "--capabilities", str(caps), "-f", "raw", "count([1, 2])")
    assert (status, out) == (0, "2\n")
    status, out, _ = _run(capsys, "eval", "--capabilities", str(caps), 'upper("a")')
    err = json.loads(out)["errors"][0]
    assert status == 2 and err["code"] == "rego_type_error" and err["message"] == "undefined function upper"


def test_fail_non_empty(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "eval", "--fail-non-empty", "[1]")[0] == 1
    assert _run(capsys, "eval", "--fail-non-empty", "[]")[0] == 0
    assert _run(capsys, "eval", "--fail-non-empty", "input.nothing")[0] == 0


def test_unknown_flag_prints_the_subcommand_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(capsys, "eval", "--no-such-flag", "x")
    assert status == 2
    assert err.startswith("usage: pyrego eval")
    assert "unknown flag: --no-such-flag" in err
