"""``pyrego compile`` (OPA's Compile API response) and ``pyrego eval --partial``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opa_oracle import OracleUnavailable, get_oracle
from pyrego.cli import main
from pyrego.cli.compile_cmd import response

POLICY = """package filters

include if input.tickets.tenant == input.tenant
include if { input.tickets.assignee == "bob"; input.tickets.prio > 3 }
"""


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    policy = tmp_path / "filters.rego"
    policy.write_text(POLICY)
    inp = tmp_path / "input.json"
    inp.write_text(json.dumps({"tenant": 3}))
    return str(policy), str(inp)


def _opa_filters(target: str, dialect: str) -> Any:
    try:
        get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    from opa_bindings.engine import OpaEngine

    eng = OpaEngine()
    try:
        eng.add_policy("filters.rego", POLICY)
        return eng.compile_filters("data.filters.include", {"tenant": 3}, unknowns=["input.tickets"], target=target, dialect=dialect)
    finally:
        eng.close()


@pytest.mark.parametrize("target,dialect", [("sql", "postgresql"), ("sql", "sqlite"), ("ucast", "all")])
def test_compile_prints_the_compile_api_response(capsys: pytest.CaptureFixture[str], files: tuple[str, str], target: str, dialect: str) -> None:
    policy, inp = files
    status, out, _ = _run(capsys, "compile", "-d", policy, "-i", inp, "-u", "input.tickets", "--target", target, "--dialect", dialect, "data.filters.include")
    assert status == 0
    assert json.loads(out) == response(_opa_filters(target, dialect))
    assert json.loads(out)["result"]["query"]


def test_compile_never_and_refusals(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    never = tmp_path / "never.rego"
    never.write_text("package filters\n\ninclude if input.mode == \"on\"\n")
    status, out, _ = _run(capsys, "compile", "-d", str(never), "-u", "input.tickets", "data.filters.include")
    assert (status, json.loads(out)) == (0, {})
    refused = tmp_path / "refused.rego"
    refused.write_text("package filters\n\ninclude if count(input.tickets.tags) > 1\n")
    status, out, _ = _run(capsys, "compile", "-d", str(refused), "-u", "input.tickets", "data.filters.include")
    assert status == 2
    (error,) = json.loads(out)["errors"]
    assert error["code"] == "compile_error"
    assert error["message"].endswith("pe_fragment_error: gt: nested call operand: count(input.tickets.tags)")


def test_compile_masks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    policy = tmp_path / "m.rego"
    policy.write_text('package filters\n\ninclude if input.tickets.a == 1\nmasks := {"tickets": {"b": {"replace": {"value": "x"}}}}\n')
    status, out, _ = _run(capsys, "compile", "-d", str(policy), "-u", "input.tickets", "--mask-rule", "data.filters.masks", "data.filters.include")
    assert status == 0
    assert json.loads(out) == {"result": {"query": "WHERE tickets.a = E'1'", "masks": {"tickets": {"b": {"replace": {"value": "x"}}}}}}


def test_eval_partial_json(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    policy, inp = files
    status, out, _ = _run(capsys, "eval", "--partial", "-u", "input.tickets", "-d", policy, "-i", inp, "data.filters.include")
    assert status == 0
    partial = json.loads(out)["partial"]
    assert list(partial) == ["queries"]
    first = partial["queries"][0][0]
    assert first["terms"][0] == {"type": "ref", "value": [{"type": "var", "value": "eq"}]}
    assert first["terms"][2] == {"type": "number", "value": 3}


def test_eval_partial_source_and_pretty(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    policy, inp = files
    status, out, _ = _run(capsys, "eval", "--partial", "-u", "input.tickets", "-d", policy, "-i", inp, "-f", "source", "data.filters.include")
    assert status == 0
    assert out == '# Query 1\ninput.tickets.tenant = 3\n# Query 2\ninput.tickets.assignee = "bob"\ninput.tickets.prio > 3\n'
    status, out, _ = _run(capsys, "eval", "--partial", "-u", "input.tickets", "-d", policy, "-i", inp, "-f", "pretty", "data.filters.include")
    assert out.splitlines()[1] == "| Query 1 | input.tickets.tenant = 3       |"


def test_eval_partial_support_modules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    policy = tmp_path / "d.rego"
    policy.write_text("package filters\n\ndefault include := false\n\ninclude if input.tickets.a == 1\n")
    status, out, _ = _run(capsys, "eval", "--partial", "-u", "input.tickets", "-d", str(policy), "-f", "source", "data.filters.include")
    assert status == 0
    assert out == (
        "# Query 1\ndata.partial.filters.include\n"
        "# Module 1\npackage partial.filters\n\ndefault include := false\n\ninclude if {\n\tinput.tickets.a = 1\n}\n"
    )
    status, out, _ = _run(capsys, "eval", "--partial", "-u", "input.tickets", "-d", str(policy), "data.filters.include")
    assert [m["package"]["path"][1]["value"] for m in json.loads(out)["partial"]["modules"]] == ["partial"]


def test_source_format_needs_partial(capsys: pytest.CaptureFixture[str], files: tuple[str, str]) -> None:
    policy, _ = files
    status, _, err = _run(capsys, "eval", "-d", policy, "-f", "source", "data.filters.include")
    assert status == 2
    assert "partial" in err


def test_compile_without_unknowns_names_the_option(capsys: pytest.CaptureFixture[str], tmp_path: Path, files: tuple[str, str]) -> None:
    """Without --unknowns and without unknowns in the rule's metadata, OPA's Compile API has
    no unknowns (the oracle answers the whole decision, no filter); the command says which
    option is missing instead of treating all of input as table rows."""
    policy, inp = files
    status, out, err = _run(capsys, "compile", "-d", policy, "-i", inp, "data.filters.include")
    assert (status, out) == (2, "")
    assert err.startswith("pyrego compile: no unknowns: name the table rows the filter is about with --unknowns")
    try:
        get_oracle()
    except OracleUnavailable:
        pass
    else:
        from opa_bindings.engine import OpaEngine

        eng = OpaEngine()
        try:
            eng.add_policy("filters.rego", POLICY)
            assert eng.compile_filters("data.filters.include", {"tenant": 3}, unknowns=[])["query"] is None
        finally:
            eng.close()
    # Unknowns the rule's # METADATA declares are enough.
    declared = tmp_path / "declared.rego"
    declared.write_text(
        "package filters\n\n# METADATA\n# compile:\n#   unknowns: [input.tickets]\n"
        "include if input.tickets.tenant == input.tenant\n"
    )
    status, out, _ = _run(capsys, "compile", "-d", str(declared), "-i", inp, "data.filters.include")
    assert (status, json.loads(out)) == (0, {"result": {"query": "WHERE tickets.tenant = E'3'"}})
