"""Artifacts as wheels (pyrego.artifact.wheel): pip installs them, the
installed module decides as the engine (and OPA) do, RECORD verifies, the
bytes are deterministic, and names pip would refuse are refused first."""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.artifact import ArtifactError, load_artifact, write_artifact_wheel
from pyrego.artifact.wheel import WheelName, wheel_bytes, wheel_name
from pyrego.artifact.write import artifact_text
from pyrego.cli import build_cmd, build_python
from test_artifact import DATA, INPUTS, POLICY, RULES, app_engine, outcome, private_code_cache, rewrite_meta  # noqa: F401 (an autouse fixture: loads, here and in subprocesses, keep their code in a cache of the test's own)

SRC = str(Path(__file__).resolve().parent.parent / "src")
WHEEL = "authz_policy-1.2.0-py3-none-any.whl"


def pip_install(wheel: Path, target: Path) -> subprocess.CompletedProcess[str]:
    """The real check of the format: pip installs the wheel (offline, no dependencies)."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", "--target", str(target), str(wheel)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def run_python(code: str, path: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


# Run in a fresh process: import the installed module, evaluate through its
# `policy` and through load_artifact of its file, pickle the outcomes.
DECIDE = """
import pickle
import sys
from pyrego.errors import RegoError
from pyrego.artifact import load_artifact
import {module} as mod

def outcome(fn, *args, **kwargs):
    try:
        return ("value", fn(*args, **kwargs))
    except RegoError as err:
        return ("error", (err.code, err.message, err.location))

inputs, rules = pickle.loads(bytes.fromhex({payload!r}))
try:
    loaded = load_artifact(mod.__file__)
    by_loader = [[outcome(loaded.eval_rule, r, input=x) for x in inputs] for r in rules]
except RegoError as err:
    by_loader = err.message
got = {{
    "file": mod.__file__,
    "module": [[outcome(mod.policy.eval_rule, r, input=x) for x in inputs] for r in rules],
    "loaded": by_loader,
    "compiler": sorted(m for m in sys.modules if m.startswith(("pyrego.parse", "pyrego.compile", "pyrego.codegen.generator", "pyrego.engine"))),
}}
sys.stdout.write(pickle.dumps(got).hex())
"""


def decide_in_subprocess(module: str, path: list[str], cwd: Path) -> dict[str, Any]:
    payload = pickle.dumps((INPUTS, RULES)).hex()
    proc = run_python(DECIDE.format(module=module, payload=payload), path, cwd)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = pickle.loads(bytes.fromhex(proc.stdout))
    return result


def policy_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    (folder / "roles").mkdir(parents=True)
    (folder / "authz.rego").write_text(POLICY, encoding="utf-8")
    (folder / "roles" / "data.json").write_text(json.dumps(DATA["roles"]), encoding="utf-8")
    return folder


def test_pip_installs_the_built_wheel_and_it_decides_as_the_engine(tmp_path: Path) -> None:
    wheel = tmp_path / "dist" / "acme_authz-1.2.0-py3-none-any.whl"
    wheel.parent.mkdir()
    # The real command line, with the module named apart from the distribution.
    cmd = [sys.executable, "-m", "pyrego", "build", "-t", "python", "--module", "authz_policy", "-o", str(wheel), str(policy_folder(tmp_path))]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "(module authz_policy)" in proc.stdout and "data.app.authz.allow" in proc.stdout
    site = tmp_path / "site"
    installed = pip_install(wheel, site)
    assert installed.returncode == 0, installed.stderr
    assert "Successfully installed acme-authz-1.2.0" in installed.stdout  # pip shows the canonical name
    assert (site / "authz_policy.py").is_file() and (site / "acme_authz-1.2.0.dist-info" / "METADATA").is_file()
    # pip's own RECORD of the install lists the module with the digest the wheel recorded.
    with zipfile.ZipFile(wheel) as z:
        ours = z.read("acme_authz-1.2.0.dist-info/RECORD").decode()
    theirs = (site / "acme_authz-1.2.0.dist-info" / "RECORD").read_text()
    module_line = next(line for line in ours.splitlines() if line.startswith("authz_policy.py,"))
    assert module_line in theirs.splitlines()

    got = decide_in_subprocess("authz_policy", [str(site), SRC], tmp_path)
    assert got["file"] == str(site / "authz_policy.py")
    engine = app_engine()
    want = [[outcome(engine.eval_rule, r, input=x) for x in INPUTS] for r in RULES]
    assert got["module"] == want == got["loaded"]
    assert got["compiler"] == []


def test_the_installed_wheel_agrees_with_opa(tmp_path: Path) -> None:
    from opa_oracle import OracleUnavailable, get_oracle

    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    wheel = tmp_path / WHEEL
    write_artifact_wheel(app_engine(), wheel)
    site = tmp_path / "site"
    assert pip_install(wheel, site).returncode == 0
    got = decide_in_subprocess("authz_policy", [str(site), SRC], tmp_path)
    for r, rule in enumerate(RULES[:2]):  # allow (a boolean) and reasons (a set of strings)
        for x, doc in enumerate(INPUTS):
            opa = oracle.evaluate({"authz.rego": POLICY}, f"x := {rule}", input=doc, data=DATA)
            kind, value = got["module"][r][x]
            assert not opa.is_error and kind == "value"
            if not opa.bindings:
                assert value is pyrego.UNDEFINED, (rule, doc)
            else:
                ours = sorted(value) if isinstance(value, (set, frozenset)) else value
                assert ours == opa.bindings[0]["x"], (rule, doc)


def test_the_wheel_imports_from_sys_path_as_a_zip(tmp_path: Path) -> None:
    """A pure-Python wheel is a zip: with the .whl itself on sys.path the
    module imports without installing; so does a copy named .zip (the name
    Spark's --py-files puts on workers' sys.path: it skips .whl files)."""
    wheel = tmp_path / WHEEL
    write_artifact_wheel(app_engine(), wheel)
    copy = tmp_path / "authz_policy.zip"
    copy.write_bytes(wheel.read_bytes())
    engine = app_engine()
    want = [[outcome(engine.eval_rule, r, input=x) for x in INPUTS] for r in RULES]
    for archive in (wheel, copy):
        got = decide_in_subprocess("authz_policy", [str(archive), SRC], tmp_path)
        assert got["file"] == os.path.join(str(archive), "authz_policy.py")
        # The module reads itself through its zip loader; load_artifact opens only files.
        assert got["module"] == want
        assert "cannot read artifact" in got["loaded"]
        assert got["compiler"] == []


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_members_metadata_and_record(tmp_path: Path) -> None:
    wheel = tmp_path / WHEEL
    meta = write_artifact_wheel(app_engine(), wheel)
    assert meta["wheel"] == {"name": "authz_policy", "version": "1.2.0", "module": "authz_policy"}
    assert meta["pyrego"] == pyrego.__version__ and "data.app.authz.allow" in meta["rules"]
    info = "authz_policy-1.2.0.dist-info"
    with zipfile.ZipFile(wheel) as z:
        assert z.testzip() is None
        members = z.infolist()
        assert [m.filename for m in members] == ["authz_policy.py", f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"]
        assert {m.date_time for m in members} == {(1980, 1, 1, 0, 0, 0)}
        assert {m.external_attr >> 16 for m in members} == {0o644}
        files = {m.filename: z.read(m) for m in members}
    # The module is the artifact, byte for byte as the .py form writes it.
    assert files["authz_policy.py"] == artifact_text(app_engine())
    metadata = files[f"{info}/METADATA"].decode().splitlines()
    assert metadata[:3] == ["Metadata-Version: 2.1", "Name: authz_policy", "Version: 1.2.0"]
    # The loader takes only artifacts of its own version (format.open_envelope): so must pip.
    assert f"Requires-Dist: pyrego=={pyrego.__version__}" in metadata
    assert files[f"{info}/WHEEL"].decode().splitlines() == [
        "Wheel-Version: 1.0",
        f"Generator: pyrego {pyrego.__version__}",
        "Root-Is-Purelib: true",
        "Tag: py3-none-any",
    ]
    rows = list(csv.reader(io.StringIO(files[f"{info}/RECORD"].decode())))
    assert [r[0] for r in rows] == list(files)
    for path, digest, size in rows:
        if path.endswith("/RECORD"):
            assert digest == size == ""
        else:
            assert digest == record_hash(files[path]) and "=" not in digest[len("sha256=") :]
            assert int(size) == len(files[path])


def test_the_same_policies_give_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / WHEEL, tmp_path / "b" / WHEEL
    first.parent.mkdir()
    second.parent.mkdir()
    write_artifact_wheel(app_engine(), first)
    write_artifact_wheel(app_engine(), second)
    assert first.read_bytes() == second.read_bytes()
    other = pyrego.Engine()
    other.add_policy("authz.rego", POLICY.replace('"sre"', '"oncall"'))
    other.add_data(DATA)
    write_artifact_wheel(other, second)
    assert first.read_bytes() != second.read_bytes()


def test_another_pyrego_version_is_refused_from_a_wheel(tmp_path: Path) -> None:
    old = rewrite_meta(artifact_text(app_engine()), pyrego="0.0.1")
    wheel = tmp_path / "old_policy-1.0.0-py3-none-any.whl"
    wheel.write_bytes(wheel_bytes(old, wheel_name(wheel)))
    site = tmp_path / "site"
    installed = pip_install(wheel, site)  # --no-deps: its Requires-Dist would stop a plain install
    assert installed.returncode == 0, installed.stderr
    proc = run_python("import old_policy", [str(site), SRC], tmp_path)
    assert proc.returncode == 1
    assert "ArtifactError" in proc.stderr and "written by pyrego '0.0.1'" in proc.stderr
    with pytest.raises(ArtifactError, match="written by pyrego '0.0.1'"):
        load_artifact(site / "old_policy.py")


@pytest.mark.parametrize(
    ("name", "module", "message"),
    [
        ("authz.whl", None, "must be NAME-VERSION-py3-none-any.whl"),
        ("authz-1.0.whl", None, "must be NAME-VERSION-py3-none-any.whl"),
        ("authz-1.0-cp311-cp311-linux_x86_64.whl", None, "must be NAME-VERSION-py3-none-any.whl"),
        ("authz-1.0-py3-none-any.zip", None, "must be NAME-VERSION-py3-none-any.whl"),
        ("Authz-1.0-py3-none-any.whl", None, "normalized distribution name: 'authz'"),
        ("acme.authz-1.0-py3-none-any.whl", None, "normalized distribution name: 'acme_authz'"),
        ("_authz-1.0-py3-none-any.whl", None, "is not a distribution name"),
        ("authz-1.0.0-1-py3-none-any.whl", None, "must be NAME-VERSION-py3-none-any.whl"),
        ("authz-v1-py3-none-any.whl", None, "not a normalized PEP 440 version"),
        ("authz-01.0-py3-none-any.whl", None, "not a normalized PEP 440 version"),
        ("authz-1.0+Local-py3-none-any.whl", None, "not a normalized PEP 440 version"),
        ("1authz-1.0-py3-none-any.whl", None, "is not a Python module name: name the module"),
        ("class-1.0-py3-none-any.whl", None, "is not a Python module name"),
        ("authz-1.0-py3-none-any.whl", "my-module", "'my-module' is not a Python module name"),
        ("authz-1.0-py3-none-any.whl", "import", "'import' is not a Python module name"),
    ],
)
def test_names_pip_or_python_would_refuse_are_refused(tmp_path: Path, name: str, module: str | None, message: str) -> None:
    with pytest.raises(ArtifactError, match=message.replace("+", r"\+").replace(".", r"\.")):
        write_artifact_wheel(app_engine(), tmp_path / name, module=module)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "version"),
    [("authz", "1.0"), ("acme_authz", "2.1rc1"), ("a.b", None), ("p0", "1!2.0.post3.dev4+build.7")],
)
def test_accepted_names_are_ones_pip_installs(tmp_path: Path, name: str, version: str | None) -> None:
    if version is None:  # the dotted form is not normalized: refused above
        with pytest.raises(ArtifactError):
            wheel_name(f"{name}-1.0-py3-none-any.whl")
        return
    names = wheel_name(f"{name}-{version}-py3-none-any.whl")
    assert names == WheelName(name, version, name)
    wheel = tmp_path / names.filename
    write_artifact_wheel(app_engine(), wheel)
    installed = pip_install(wheel, tmp_path / "site")
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "site" / f"{name}.py").is_file()


def build_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    build_python.add_arguments(parser)
    return parser.parse_args(argv)


def test_the_build_command_refuses_bad_names_before_compiling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = policy_folder(tmp_path)
    (folder / "broken.rego").write_text("package b\nimport rego.v1\np if { x == 1 }\n", encoding="utf-8")
    # A usage error (2), reported before the policies' own error would be.
    assert build_python.run(build_args("-o", str(tmp_path / "authz.whl"), str(folder))) == 2
    err = capsys.readouterr().err
    assert "must be NAME-VERSION-py3-none-any.whl" in err and "rego_unsafe_var_error" not in err
    assert build_python.run(build_args("-o", str(tmp_path / "a.py"), "--module", "m", str(folder))) == 2
    assert "--module names the module in a wheel" in capsys.readouterr().err
    # A good name with policies that do not compile: the policies' error, nothing written.
    assert build_python.run(build_args("-o", str(tmp_path / WHEEL), str(folder))) == 1
    assert "rego_unsafe_var_error" in capsys.readouterr().err
    assert not any(p.suffix in (".whl", ".tmp") for p in tmp_path.iterdir())
    # --module belongs to -t python: the bundle target refuses it.
    parser = argparse.ArgumentParser()
    build_cmd.register(parser.add_subparsers())
    ns = parser.parse_args(["build", "--module", "m", "-o", str(tmp_path / "b.tar.gz"), str(folder)])
    out, errors = io.StringIO(), io.StringIO()
    assert build_cmd.cmd_build(ns, out, errors) == 1
    assert "--module names the module of a python target's wheel" in errors.getvalue()
    assert not (tmp_path / "b.tar.gz").exists()
