"""How long ``pyrego test`` takes on a repository of 50 policies and 500 tests.

Writes such a repository into a temporary folder (one package per service:
a policy with defaults, partial sets, functions and ``else`` chains, a data
file, and a test file of 10 tests using ``with`` to replace input, data and
functions), then times the whole command (``python -m pyrego test DIR``, a
new process each time, interpreter start included):

- cold: the first run, with an empty code cache;
- warm: later runs, reading the cached code (:mod:`pyrego.codegen.disk_cache`);
- ``--no-cache``: neither reading nor writing the cache.

``python benchmarks/test_startup.py`` prints the figures; under pytest
(``pytest benchmarks/test_startup.py``) the test asserts the goal: every run
under 3 seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POLICIES = 50
TESTS_PER_POLICY = 10
GOAL_SECONDS = 3.0
REPO = Path(__file__).resolve().parent.parent


def write_repository(root: Path, policies: int = POLICIES, tests_per_policy: int = TESTS_PER_POLICY) -> int:
    """Write the generated repository under ``root``; returns the number of tests."""
    count = 0
    for i in range(policies):
        svc = f"svc{i:02d}"
        folder = root / svc
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "data.json").write_text(json.dumps({"limits": {"admin": 100 + i, "editor": 10, "viewer": 1}}))
        (folder / "policy.rego").write_text(
            f"""package {svc}

import rego.v1

default allow := false

roles := {{"admin", "editor", "viewer"}}

allow if input.user.role == "admin"

allow if {{
	input.user.role in roles
	input.action in ["read", "list"]
	count(input.user.groups) > 0
	not blocked
}}

blocked if {{
	some g in input.user.groups
	startswith(g, "blocked-")
}}

deny contains msg if {{
	some g in input.user.groups
	startswith(g, "blocked-")
	msg := sprintf("group %s is blocked", [g])
}}

limit(user) := n if {{
	n := data.{svc}.limits[user.role]
}} else := 0

decision := {{"allow": allow, "deny": deny, "limit": limit(input.user)}}
"""
        )
        tests = [f"package {svc}_test\n\nimport data.{svc}\nimport rego.v1\n"]
        for j in range(tests_per_policy):
            kind = j % 5
            if kind == 0:
                body = f'{svc}.allow with input as {{"user": {{"role": "editor", "groups": ["g{j}"]}}, "action": "read"}}'
            elif kind == 1:
                body = f'not {svc}.allow with input as {{"user": {{"role": "editor", "groups": ["blocked-{j}"]}}, "action": "read"}}'
            elif kind == 2:
                body = (
                    f'd := {svc}.decision with input as {{"user": {{"role": "viewer", "groups": ["blocked-x"]}}}}\n'
                    f'\td.deny == {{"group blocked-x is blocked"}}\n\td.limit == 1'
                )
            elif kind == 3:
                body = f'{svc}.limit({{"role": "admin"}}) == {100 + i}\n\t{svc}.limit({{"role": "nobody"}}) == 0'
            else:
                body = (
                    f'{svc}.limit({{"role": "editor"}}) == 7 with data.{svc}.limits.editor as 7\n'
                    f'\t{svc}.allow with {svc}.blocked as false with input as {{"user": {{"role": "viewer", "groups": ["a"]}}, "action": "list"}}'
                )
            tests.append(f"\ntest_case_{j} if {{\n\t{body}\n}}\n")
            count += 1
        (folder / "policy_test.rego").write_text("".join(tests))
    return count


def run_once(repo: Path, cache: Path, *extra: str) -> float:
    env = {**os.environ, "PYREGO_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "pyrego", "test", *extra, str(repo)], capture_output=True, text=True, env=env, cwd=REPO
    )
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"pyrego test failed ({p.returncode}): {p.stdout[-2000:]}{p.stderr[-2000:]}")
    return elapsed


def measure(repeat: int = 5) -> dict[str, list[float]]:
    """Wall times of ``repeat`` runs of each kind (a fresh cache for each cold run)."""
    with tempfile.TemporaryDirectory(prefix="pyrego-startup-") as tmp:
        root = Path(tmp)
        repo = root / "policies"
        n = write_repository(repo)
        assert n == POLICIES * TESTS_PER_POLICY
        figures: dict[str, list[float]] = {"cold (empty cache)": [], "warm (cached code)": [], "no cache": []}
        for k in range(repeat):
            cache = root / f"cache{k}"
            figures["cold (empty cache)"].append(run_once(repo, cache))
            figures["warm (cached code)"].append(run_once(repo, cache))
            figures["no cache"].append(run_once(repo, root / "unused", "--no-cache"))
            shutil.rmtree(cache, ignore_errors=True)
        return figures


def test_startup_under_goal() -> None:
    figures = measure(repeat=2)
    for kind, times in figures.items():
        assert max(times) < GOAL_SECONDS, f"{kind}: {times}"
    # The cache must not make a warm run slower than one without it.
    assert min(figures["warm (cached code)"]) < min(figures["no cache"]) * 1.1


def main() -> None:
    figures = measure()
    print(f"pyrego test on {POLICIES} policies / {POLICIES * TESTS_PER_POLICY} tests (wall time, interpreter start included)")
    print(f"{'run':<22}{'min':>8}{'median':>9}{'max':>8}")
    for kind, times in figures.items():
        print(f"{kind:<22}{min(times):>7.2f}s{statistics.median(times):>8.2f}s{max(times):>7.2f}s")


if __name__ == "__main__":
    main()
