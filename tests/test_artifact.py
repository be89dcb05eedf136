"""Compiled policy artifacts (pyrego.artifact): decisions equal the engine's,
a modified artifact or another version's is refused, loading needs no compiler."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.artifact import ArtifactError, load_artifact, write_artifact
from pyrego.artifact.format import PREFIX, digest
from pyrego.artifact.load import load_artifact_bytes
from pyrego.artifact.write import artifact_text
from pyrego.cli import build_python
from pyrego.errors import RegoError
from test_batch import POLICIES, RULE, engine_for, mutations, seed_inputs

SRC = str(Path(__file__).resolve().parent.parent / "src")


@pytest.fixture(autouse=True)
def private_code_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Loads keep their code in a cache folder of the test's own, never the user's."""
    folder = tmp_path_factory.mktemp("code-cache")
    folder.chmod(0o700)
    monkeypatch.setenv("PYREGO_CACHE_DIR", str(folder))
    return folder


def outcome(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return ("value", fn(*args, **kwargs))
    except RegoError as err:
        return ("error", (err.code, err.message, err.location))


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.stem)
def test_seed_decisions_equal_the_engine(policy: Path, tmp_path: Path) -> None:
    rng = random.Random(policy.stem)
    inputs = seed_inputs(policy)
    inputs += [m for doc in inputs for m in mutations(doc, rng, 30)]
    for strict in (False, True):
        engine = engine_for(policy)
        engine.set_strict_builtin_errors(strict)
        target = tmp_path / f"{policy.stem}_{strict}.py"
        meta = write_artifact(engine, target)
        assert meta["rules"] == [RULE] or RULE in meta["rules"]
        assert meta["settings"]["strict_builtin_errors"] is strict
        loaded = load_artifact(target)
        for x in inputs:
            assert outcome(loaded.eval_rule, RULE, input=x) == outcome(engine.eval_rule, RULE, input=x)
        got = [r.value for r in loaded.eval_many(RULE, inputs)]
        assert got == [engine.eval_rule(RULE, input=x) if outcome(engine.eval_rule, RULE, input=x)[0] == "value" else pyrego.UNDEFINED for x in inputs]


POLICY = r'''package app.authz
import rego.v1

default allow := false

allow if {
    input.user.role in data.roles.admins
    count(input.user.groups) > 0
}

allow if {
    some g in input.user.groups
    g in {"ops", "sre"}
    input.action == "read"
}

reasons contains msg if {
    not allow
    msg := sprintf("user %v may not %v", [input.user.name, input.action])
}

limits := {"max": 10e40, "ratio": 0.25, "tags": {"a", ["b"], {"c": 1}}, "weird": "q\"uo'te\n\u0000 __import__('os')"}

n := x if { x := to_number(input.n) }

value := input.value
'''

DATA = {"roles": {"admins": ["root", "admin"]}}

INPUTS: list[Any] = [
    {"user": {"role": "admin", "groups": ["x"], "name": "ann"}, "action": "write"},
    {"user": {"role": "dev", "groups": ["sre"], "name": "bob"}, "action": "read"},
    {"user": {"role": "dev", "groups": [], "name": "cy"}, "action": "read"},
    {"user": "nobody"},
    {"n": "12.5"},
    {"n": "x"},
    {"value": {"a": [1, 2, {"b": None}], "c": True}},
    None,
]

RULES = ["data.app.authz.allow", "data.app.authz.reasons", "data.app.authz.limits", "data.app.authz.n", "data.app.authz.value"]


def app_engine() -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("authz.rego", POLICY)
    engine.add_data(DATA)
    return engine


def test_rules_data_and_constants_round_trip(tmp_path: Path) -> None:
    engine = app_engine()
    write_artifact(engine, tmp_path / "a.py")
    loaded = load_artifact(tmp_path / "a.py")
    assert set(RULES) <= set(loaded.rules)
    for rule in RULES:
        for x in INPUTS:
            assert outcome(loaded.eval_rule, rule, input=x) == outcome(engine.eval_rule, rule, input=x), (rule, x)
    engine.set_strict_builtin_errors(True)
    loaded.set_strict_builtin_errors(True)
    assert outcome(loaded.eval_rule, "data.app.authz.n", input={"n": "x"}) == outcome(engine.eval_rule, "data.app.authz.n", input={"n": "x"})
    assert outcome(loaded.eval_rule, "data.app.authz.n", input={"n": "x"})[0] == "error"
    with pytest.raises(RegoError, match="not a rule of this artifact"):
        loaded.eval_rule("data.app.authz.nope", input={})


def test_policy_text_appears_only_as_literals(tmp_path: Path) -> None:
    text = artifact_text(app_engine()).decode()
    assert "__import__('os')" not in text.replace(repr("q\"uo'te\n\x00 __import__('os')"), "")
    assert "import rego" not in text and "input.user.role" not in text  # no Rego source is carried


def test_writing_is_deterministic() -> None:
    assert artifact_text(app_engine()) == artifact_text(app_engine())


def test_a_modified_artifact_is_refused(tmp_path: Path) -> None:
    blob = artifact_text(app_engine())
    target = tmp_path / "a.py"
    target.write_bytes(blob.replace(b"'ops'", b"'dev'"))
    with pytest.raises(ArtifactError, match="modified or damaged"):
        load_artifact(target)
    target.write_bytes(blob[:-20])
    with pytest.raises(ArtifactError, match="modified or damaged"):
        load_artifact(target)
    target.write_bytes(b"print('hello')\n")
    with pytest.raises(ArtifactError, match="not a pyrego artifact"):
        load_artifact(target)
    with pytest.raises(ArtifactError, match="cannot read"):
        load_artifact(tmp_path / "missing.py")


def rewrite_meta(blob: bytes, **changes: Any) -> bytes:
    end = blob.index(b"\n")
    meta = json.loads(blob[len(PREFIX) : end])
    meta.update(changes)
    return PREFIX + json.dumps(meta).encode() + blob[end:]


def test_another_version_or_format_is_refused() -> None:
    blob = artifact_text(app_engine())
    load_artifact_bytes(blob)  # as written: fine
    with pytest.raises(ArtifactError, match="written by pyrego '0.0.1'"):
        load_artifact_bytes(rewrite_meta(blob, pyrego="0.0.1"))
    with pytest.raises(ArtifactError, match="format 2"):
        load_artifact_bytes(rewrite_meta(blob, format=2))
    body = blob[blob.index(b"\n") + 1 :]
    changed = body.replace(b"'ops'", b"'dev'")
    # A matching digest makes the file load: the digest is a check, not a signature.
    forged = load_artifact_bytes(rewrite_meta(blob[: blob.index(b"\n") + 1] + changed, digest=digest(changed)))
    assert forged.eval_rule("data.app.authz.allow", input={"user": {"groups": ["dev"]}, "action": "read"}) is True


def test_unsupported_policies_are_refused_with_a_reason() -> None:
    engine = pyrego.Engine()
    engine.add_extension("ext.f", 1, lambda x: x)
    engine.add_policy("e.rego", "package e\nimport rego.v1\nv := ext.f(1)\n")
    with pytest.raises(ArtifactError, match="extension"):
        artifact_text(engine)
    mock = pyrego.Engine()
    mock.add_policy("m.rego", "package m\nimport rego.v1\nv := x if { x := count(input.xs) with count as sum }\n")
    with pytest.raises(ArtifactError, match="with"):
        artifact_text(mock)


def test_a_builtin_replaced_by_a_function_or_a_value() -> None:
    engine = pyrego.Engine()
    engine.add_policy(
        "m.rego",
        "package m\nimport rego.v1\nv := x if { x := count(input.xs) with count as g }\ng(_) := 7\n"
        "w := x if { x := count(input.xs) with count as 5 }\nn := count(input.xs)\n",
    )
    loaded = load_artifact_bytes(artifact_text(engine))
    for rule, want in (("data.m.v", 7), ("data.m.w", 5), ("data.m.n", 2)):
        assert loaded.eval_rule(rule, input={"xs": [1, 2]}) == want == engine.eval_rule(rule, input={"xs": [1, 2]})


def test_with_on_input_and_data_works(tmp_path: Path) -> None:
    engine = pyrego.Engine()
    engine.add_policy("w.rego", 'package w\nimport rego.v1\nq := v if { v := data.w.a with input as {"k": 1} }\nr := v if { v := data.w.b with data.d as {"k": 2} }\na := input.k\nb := data.d.k\n')
    loaded = load_artifact_bytes(artifact_text(engine))
    assert loaded.eval_rule("data.w.q", input={"k": 5}) == 1 == engine.eval_rule("data.w.q", input={"k": 5})
    assert loaded.eval_rule("data.w.r", input={}) == 2


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(cwd)])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


COMPILER = ("pyrego.parse", "pyrego.compile", "pyrego.typecheck", "pyrego.codegen.generator", "pyrego.codegen.body", "pyrego.engine")


def test_loading_in_a_fresh_process_imports_no_compiler(tmp_path: Path) -> None:
    engine = app_engine()
    write_artifact(engine, tmp_path / "authz_artifact.py")
    want = [engine.eval_rule("data.app.authz.allow", input=x) for x in INPUTS]
    code = f"""
import json, sys
from pyrego.artifact import load_artifact
policy = load_artifact("authz_artifact.py")
inputs = json.loads({json.dumps(INPUTS)!r})
values = [policy.eval_rule("data.app.authz.allow", input=x) for x in inputs]
batch = [r.value for r in policy.eval_many("data.app.authz.allow", inputs)]
loaded = sorted(m for m in sys.modules if m.startswith({COMPILER!r}))
print(json.dumps({{"values": values, "batch": batch, "compiler": loaded}}))
"""
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["values"] == want == result["batch"]
    assert result["compiler"] == []


def test_an_artifact_imports_as_a_module(tmp_path: Path) -> None:
    write_artifact(app_engine(), tmp_path / "authz_mod.py")
    code = (
        "import sys, authz_mod\n"
        "print(authz_mod.policy.eval_rule('data.app.authz.allow', input={'user': {'role': 'root', 'groups': [1]}}))\n"
        "print(any(m.startswith('pyrego.parse') for m in sys.modules))\n"
    )
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"]


def test_worker_processes_load_the_artifact() -> None:
    loaded = load_artifact_bytes(artifact_text(app_engine()))
    inputs = INPUTS * 10
    local = [(r.value, r.error) for r in loaded.eval_many("data.app.authz.reasons", inputs)]
    pooled = [(r.value, r.error) for r in loaded.eval_many("data.app.authz.reasons", inputs, processes=2, chunk_size=3)]
    assert local == pooled


def build_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    build_python.add_arguments(parser)
    return parser.parse_args(argv)


def test_build_command_writes_an_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "authz.rego").write_text(POLICY)
    (tmp_path / "policy" / "roles").mkdir()
    (tmp_path / "policy" / "roles" / "data.json").write_text(json.dumps({"admins": ["root"]}))
    out = tmp_path / "out.py"
    assert build_python.run(build_args("-o", str(out), str(tmp_path / "policy"))) == 0
    assert "data.app.authz.allow" in capsys.readouterr().out
    loaded = load_artifact(out)
    assert loaded.eval_rule("data.app.authz.allow", input={"user": {"role": "root", "groups": [1]}}) is True
    assert loaded.eval_rule("data.app.authz.allow", input={"user": {"role": "admin", "groups": [1]}}) is False
    (tmp_path / "bad.rego").write_text("package b\nimport rego.v1\np if { x == 1 }\n")
    assert build_python.run(build_args("-o", str(tmp_path / "b.py"), str(tmp_path / "bad.rego"))) == 1
    assert "rego_unsafe_var_error" in capsys.readouterr().err
    assert not (tmp_path / "b.py").exists()
    assert build_python.run(build_args("-o", str(tmp_path / "c.py"))) == 2


HOSTILE = r"""package hostile
import rego.v1

keys := {"a\"b": 1, "c'd\n": 2, "\u2028x": 3, "__import__('os').system('true')": 4, "\\": 5}
nested := {[1, {"k": {true, 1, "1"}}]: "array key", {"x": null}: {"set": {{"a": 1}, [2, 3]}}}
big := [12345678901234567890123456789012345678901234567890, -1e-300, 0.1]
pick := v if { v := keys[input.k] }
member if input.x in {"\u0000", "}", "{", "'''", "\"\"\""}
"""


def test_hostile_constants_and_data_round_trip() -> None:
    engine = pyrego.Engine()
    engine.add_policy("hostile.rego", HOSTILE)
    engine.add_data({"odd keys": {"a'\"b\n": [None, True, 1.5, {"\\": "\udcff"}]}})
    blob = artifact_text(engine)
    loaded = load_artifact_bytes(blob)
    for rule in ("data.hostile.keys", "data.hostile.nested", "data.hostile.big"):
        assert loaded.eval_rule(rule, input={}) == engine.eval_rule(rule, input={})
    for k in ["a\"b", "c'd\n", "\u2028x", "__import__('os').system('true')", "\\", "zz"]:
        assert outcome(loaded.eval_rule, "data.hostile.pick", input={"k": k}) == outcome(engine.eval_rule, "data.hostile.pick", input={"k": k})
    for x in ["\x00", "}", "'''", '"""', "nope", 1]:
        assert loaded.eval_rule("data.hostile.member", input={"x": x}) == engine.eval_rule("data.hostile.member", input={"x": x})
    # No line of the file starts with policy text: strings are repr() literals inside generated statements.
    body = blob.decode("utf-8", "surrogatepass").splitlines()[1:]
    assert not any(line.lstrip().startswith(("__import__", "import os", "system(")) for line in body)


def test_the_code_cache_keeps_an_artifacts_code(tmp_path: Path, private_code_cache: Path) -> None:
    target = tmp_path / "cached.py"
    write_artifact(app_engine(), target)
    load_artifact(target, cache=False)
    assert not list(private_code_cache.rglob("*.pack"))
    first = load_artifact(target)
    packs = list(private_code_cache.rglob("*.pack"))
    assert len(packs) == 1
    written = packs[0].stat().st_mtime_ns
    second = load_artifact(target)
    assert packs[0].stat().st_mtime_ns == written  # read back, not written again
    x = {"user": {"role": "root", "groups": [1]}}
    assert first.eval_rule("data.app.authz.allow", input=x) is second.eval_rule("data.app.authz.allow", input=x) is True


def test_pyrego_build_target_python_writes_a_loadable_artifact(tmp_path: Path) -> None:
    """`pyrego build -t python` (the real command line) writes an artifact
    that decides as the engine does."""
    import subprocess
    import sys

    (tmp_path / "p.rego").write_text("package p\n\nallow if input.user == \"alice\"\n", encoding="utf-8")
    out = tmp_path / "p_artifact.py"
    r = subprocess.run([sys.executable, "-m", "pyrego", "build", "-t", "python", "-o", str(out), str(tmp_path / "p.rego")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    from pyrego.artifact import load_artifact

    policy = load_artifact(str(out))
    assert policy.eval_rule("data.p.allow", input={"user": "alice"}) is True
    assert policy.eval_rule("data.p.allow", input={"user": "bob"}) is pyrego.UNDEFINED
    r = subprocess.run([sys.executable, "-m", "pyrego", "build", "-t", "python", str(tmp_path / "p.rego")], capture_output=True, text=True)
    assert r.returncode == 1 and "needs -o FILE" in r.stderr
