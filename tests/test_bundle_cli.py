"""``pyrego build``, ``sign``, ``eval -b``, ``eval -d bundle.tar.gz`` and
``test -b``, run as commands (subprocesses), as OPA's flags name them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parent.parent / "src")


def pyrego(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env["PYREGO_CACHE_DIR"] = str((cwd or Path.cwd()) / ".cache")
    return subprocess.run(
        [sys.executable, "-m", "pyrego", *args], env=env, cwd=cwd, capture_output=True, text=True, input=stdin, timeout=120
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "policy" / "authz").mkdir(parents=True)
    (tmp_path / "policy" / "authz" / "allow.rego").write_text(
        "package authz\n\nallow if input.user in data.authz.admins\n\ntest_admin if allow with input as {\"user\": \"ann\"}\n"
    )
    (tmp_path / "policy" / "authz" / "admins" / "data.json").parent.mkdir()
    (tmp_path / "policy" / "authz" / "data.json").write_text('{"admins": ["ann"]}')
    (tmp_path / "policy" / ".manifest").write_text('{"roots": ["authz"], "revision": "dev"}')
    return tmp_path


def test_build_then_eval_with_b_and_d(project: Path) -> None:
    r = pyrego("build", "-b", "policy", "-r", "v42", "-o", "out.tar.gz", cwd=project)
    assert r.returncode == 0, r.stderr
    with tarfile.open(project / "out.tar.gz") as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("/.manifest").read())  # type: ignore[union-attr]
    assert names == ["/data.json", "/policy/authz/allow.rego", "/.manifest"]
    assert manifest == {"revision": "v42", "roots": ["authz"], "rego_version": 1}
    for flag in ("-b", "-d"):
        r = pyrego("eval", flag, "out.tar.gz", "-I", "-f", "values", "data.authz.allow", cwd=project, stdin='{"user": "ann"}')
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == [True]
    r = pyrego("eval", "-b", "policy", "-I", "-f", "values", "data.authz.allow", cwd=project, stdin='{"user": "bob"}')
    assert r.returncode == 0 and r.stdout.strip() in ("", "[]"), r.stdout  # undefined for bob


def test_test_b_runs_the_bundles_tests(project: Path) -> None:
    r = pyrego("test", "-b", "policy", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS: 1/1" in (r.stdout + r.stderr)
    assert pyrego("build", "-b", "policy", "-o", "b.tar.gz", cwd=project).returncode == 0
    r = pyrego("test", "b.tar.gz", "-v", cwd=project)
    assert r.returncode == 0 and "test_admin" in (r.stdout + r.stderr)


def test_signed_build_and_verification_flags(project: Path) -> None:
    args = ("eval", "-b", "s.tar.gz", "-I", "-f", "values", "data.authz.allow")
    r = pyrego("build", "-b", "policy", "-o", "s.tar.gz", "--signing-key", "hmac-secret", "--signing-alg", "HS256", cwd=project)
    assert r.returncode == 0, r.stderr
    ok = pyrego(*args, "--verification-key", "hmac-secret", "--signing-alg", "HS256", cwd=project, stdin='{"user": "ann"}')
    assert ok.returncode == 0 and json.loads(ok.stdout) == [True], ok.stdout + ok.stderr
    wrong = pyrego(*args, "--verification-key", "other", "--signing-alg", "HS256", cwd=project, stdin="{}")
    assert wrong.returncode == 2 and "failed to verify message" in (wrong.stdout + wrong.stderr)
    missing = pyrego(*args, cwd=project, stdin="{}")
    assert missing.returncode == 2 and "verification key not provided" in (missing.stdout + missing.stderr)
    skipped = pyrego(*args, "--skip-verify", cwd=project, stdin='{"user": "ann"}')
    assert skipped.returncode == 0 and json.loads(skipped.stdout) == [True]
    r = pyrego("test", "-b", "s.tar.gz", cwd=project)
    assert r.returncode == 1 and "verification key not provided" in r.stderr
    r = pyrego("test", "-b", "s.tar.gz", "--verification-key", "hmac-secret", "--signing-alg", "HS256", cwd=project)
    assert r.returncode == 0, r.stderr


def test_sign_writes_signatures_json_that_verifies(project: Path) -> None:
    r = pyrego("sign", "--bundle", "policy", "--signing-key", "k", "--signing-alg", "HS512", "-o", "policy", cwd=project)
    assert r.returncode == 0, r.stderr
    sig = json.loads((project / "policy" / ".signatures.json").read_text())
    assert len(sig["signatures"]) == 1
    ok = pyrego("eval", "-b", "policy", "--verification-key", "k", "--signing-alg", "HS512", "-I", "-f", "values", "data.authz.allow", cwd=project, stdin='{"user": "ann"}')
    assert ok.returncode == 0 and json.loads(ok.stdout) == [True], ok.stdout + ok.stderr
    (project / "policy" / "authz" / "data.json").write_text('{"admins": ["ann", "eve"]}')
    bad = pyrego("eval", "-b", "policy", "--verification-key", "k", "--signing-alg", "HS512", "data", cwd=project)
    assert bad.returncode == 2 and "authz/data.json: digest mismatch" in (bad.stdout + bad.stderr)


def test_build_refusals_and_errors(project: Path) -> None:
    r = pyrego("build", "-t", "wasm", "policy", cwd=project)
    assert r.returncode == 1 and "only rego (OPA's bundle) and python" in r.stderr and not (project / "bundle.tar.gz").exists()
    r = pyrego("build", "-O", "1", "policy", cwd=project)
    assert r.returncode == 1 and "only -O 0" in r.stderr
    (project / "bad").mkdir()
    (project / "bad" / "x.rego").write_text("package x\n\np := q\n")
    r = pyrego("build", "bad", cwd=project)
    assert r.returncode == 1 and "rego_unsafe_var_error" in r.stderr and not (project / "bundle.tar.gz").exists()
    (project / "outside").mkdir()
    (project / "outside" / ".manifest").write_text('{"roots": ["a"]}')
    (project / "outside" / "x.rego").write_text("package b\n\np := 1\n")
    r = pyrego("build", "-b", "outside", cwd=project)
    assert r.returncode == 1 and "manifest roots [a] do not permit 'package b'" in r.stderr


def test_corrupt_archive_is_a_clear_error(project: Path) -> None:
    (project / "broken.tar.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    r = pyrego("eval", "-b", "broken.tar.gz", "data", cwd=project)
    assert r.returncode == 2 and "bundle read failed" in (r.stdout + r.stderr) and "Traceback" not in r.stderr
    r = pyrego("eval", "-d", "broken.tar.gz", "data", "-f", "pretty", cwd=project)
    assert r.returncode == 2 and "bundle read failed" in r.stderr and "Traceback" not in r.stderr
    r = pyrego("test", "-b", "broken.tar.gz", cwd=project)
    assert r.returncode == 1 and "bundle read failed" in r.stderr and "Traceback" not in r.stderr


def test_two_bundles_with_overlapping_roots(project: Path) -> None:
    (project / "other").mkdir()
    (project / "other" / ".manifest").write_text('{"roots": ["authz/x"]}')
    r = pyrego("eval", "-b", "policy", "-b", "other", "data", cwd=project)
    assert r.returncode == 2 and "detected overlapping roots in bundle manifest with: [other policy]" in (r.stdout + r.stderr)
