"""The on-disk cache of compiled policy code (:mod:`pyrego.codegen.disk_cache`).

Each run happens in a fresh Python process (the cache is for the next
process); a probe script counts the ``compile()`` calls the cache did not
save and prints the tests' outcomes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pyrego.codegen import disk_cache

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "test_cmd_cases"
REPOS = Path(__file__).resolve().parent / "repos"

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="the code cache needs POSIX file ownership")

PROBE = """
import json, sys
from pyrego.codegen import disk_cache
compiled = []
real = compile
def counting(source, filename, mode, *args, **kwargs):
    compiled.append(filename)
    return real(source, filename, mode, *args, **kwargs)
disk_cache.compile = counting  # the name the cache calls when it has no code
print(json.dumps({"enabled": disk_cache.enable(sys.argv[1])}))
from pyrego.testing import run_tests
results = run_tests([sys.argv[2]])
disk_cache.flush()
print(json.dumps({"compiled": len(compiled), "outcomes": [[r.full_name, r.outcome] for r in results]}))
"""


def probe(cache: Path, target: Path) -> dict[str, object]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, str(cache), str(target)], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert p.returncode == 0, p.stderr
    first, second = p.stdout.splitlines()
    return {**json.loads(first), **json.loads(second)}


def packs(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.pack"))


def test_second_run_reads_the_compiled_code(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = probe(cache, REPOS / "api_authz")
    assert cold["enabled"] is True
    assert cold["compiled"] > 50
    warm = probe(cache, REPOS / "api_authz")
    assert warm["compiled"] == 0
    assert warm["outcomes"] == cold["outcomes"]
    assert len(packs(cache)) == 1
    # Another policy set: a pack of its own.
    other = probe(cache, CASES / "outcomes")
    assert other["compiled"] > 0
    assert len(packs(cache)) == 2


def test_files_are_private(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    probe(cache, CASES / "outcomes")
    (pack,) = packs(cache)
    assert stat.S_IMODE(os.stat(pack.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(pack).st_mode) == 0o600
    assert not list(pack.parent.glob("*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_pack_is_never_trusted(tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    cold = probe(cache, CASES / "outcomes")
    (pack,) = packs(cache)
    blob = pack.read_bytes()
    if damage == "truncate":
        pack.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        i = len(blob) - 100
        pack.write_bytes(blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1 :])
    elif damage == "garbage":
        pack.write_bytes(os.urandom(len(blob)))
    else:
        pack.write_bytes(b"")
    again = probe(cache, CASES / "outcomes")
    assert again["compiled"] == cold["compiled"]  # everything compiled afresh
    assert again["outcomes"] == cold["outcomes"]
    # and the pack is whole again
    assert probe(cache, CASES / "outcomes")["compiled"] == 0


def test_pack_others_may_write_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = probe(cache, CASES / "outcomes")
    (pack,) = packs(cache)
    pack.chmod(0o666)
    assert probe(cache, CASES / "outcomes")["compiled"] == cold["compiled"]


def test_directory_others_may_enter_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    probe(cache, CASES / "outcomes")
    (pack,) = packs(cache)
    pack.parent.chmod(0o755)
    result = probe(cache, CASES / "outcomes")
    assert result["enabled"] is False
    assert result["compiled"] > 0


def test_code_of_another_source_is_never_used(tmp_path: Path) -> None:
    # Entries are keyed by the digest of their own source: a pack holding other
    # code under a key gives nothing for sources that do not hash to that key.
    cache = disk_cache.CodeCache(tmp_path)
    assert cache.usable()
    cache.use_context("k")
    code = cache.compile("x = 1\n", "<pyrego policy>")
    assert cache.compile("x = 1\n", "<pyrego policy>") is not None
    other = cache.compile("x = 2\n", "<pyrego policy>")
    ns: dict[str, int] = {}
    exec(code, ns)
    exec(other, ns)
    assert ns["x"] == 2
    cache.flush()
    again = disk_cache.CodeCache(tmp_path)
    again.use_context("k")
    ns2: dict[str, int] = {}
    exec(again.compile("x = 2\n", "<pyrego policy>"), ns2)
    assert ns2["x"] == 2


def test_concurrent_processes_leave_a_whole_pack(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROBE, str(cache), str(REPOS / "mocking")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    assert len(packs(cache)) == 1
    assert not list(cache.glob("*/*.tmp"))
    assert probe(cache, REPOS / "mocking")["compiled"] == 0


def test_command_line_flags(tmp_path: Path) -> None:
    env = {**os.environ, "PYREGO_CACHE_DIR": str(tmp_path / "cache")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pyrego", "test", *args, str(CASES / "v0")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            cwd=REPO,
        )

    assert run("--v0-compatible", "--no-cache").returncode == 0
    assert not (tmp_path / "cache").exists()
    assert run("--v0-compatible").returncode == 0
    assert len(packs(tmp_path / "cache")) == 1


def test_eval_uses_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "PYREGO_CACHE_DIR": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "pyrego", "eval", "-d", str(REPOS / "api_authz"), "-f", "raw", "data.lib.strings.words(\"a b  a\")"]
    p = subprocess.run([*args, "--no-cache"], capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert (p.returncode, p.stdout) == (0, '["a","b"]\n')
    assert not (tmp_path / "cache").exists()
    for _ in range(2):
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
        assert (p.returncode, p.stdout) == (0, '["a","b"]\n')
    assert len(packs(tmp_path / "cache")) == 1


def test_default_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYREGO_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.default_directory() == tmp_path / "explicit"
    monkeypatch.delenv("PYREGO_CACHE_DIR")
    assert disk_cache.default_directory() == tmp_path / "xdg" / "pyrego"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert disk_cache.default_directory() == tmp_path / "home" / ".cache" / "pyrego"


def test_off_in_the_library_unless_enabled() -> None:
    p = subprocess.run(
        [sys.executable, "-c", "import pyrego, pyrego.codegen.disk_cache as d; print(d.is_enabled())"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.stdout.strip() == "False"
