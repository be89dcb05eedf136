"""The hand-written seed policies (pyrego.bench.handwritten), the baseline of ``pyrego bench``'s
``python`` engine, must decide exactly as the Rego policies do: on every seed and allow input,
and on a few hundred inputs per policy made from those by changing values, types and keys.

time_based's first rule reads the wall clock (New York business hours); both sides read it
within microseconds, so a disagreement there could only come at the turn of an hour.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.bench import handwritten
from pyrego.bench.cli import main
from pyrego.bench.engines import UNDEFINED_MARK, get_adapter
from pyrego.bench.workloads import SEED_POLICIES, SEED_QUERY, PolicySet, default_paths, load_allow, load_seed

PATHS = default_paths()
MUTANTS = 300

# Values a mutation puts in place of another: every JSON type, near misses of the strings
# and numbers the policies test, and values that are right for some other key.
POOL: list[Any] = [
    None, True, False, 0, 1, -1, 1.0, 2.5, 3, 22, 22.0, 999, 1000, 1000.0, 1001, 3389, 4102444800000000000,
    10**30, "", "*", "Internet", "GET", "get", "read", "write", "delete", "admin", "export", "deploy", "diagnose",
    "transform", "data_processor", "engineering", "User", "ServicePrincipal", "Inbound", "Allow", "Deny",
    "TLS1_2", "Microsoft.Storage", "prod", "eastus", "Standard_B1s", "10.1.2.3", "10.0.0.0/8", "172.16.5.0/24",
    "192.168.1.1/32", "8.8.8.8", "10.0.0.0/33", "fe80::1", "/api/v1/x", "/api/v9/", "user123", "approved",
    "password", "x", [], [1], ["read"], ["admin", "user"], [{"status": "approved"}, {"status": "approved"}],
    {}, {"a": 1}, {"clearance": 5}, {"status": "approved"}, {"x": {"status": "approved"}, "y": {"status": "approved"}},
    [True], [1.0],
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (object keys and array indexes)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _get_parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path[:-1]:
        doc = doc[p]
    return doc


def retype(value: Any, rng: random.Random) -> Any:
    """A value of another type that Python (not Rego) might take for ``value``: ``true`` and ``1``,
    ``1`` and ``"1"``, ``"x"`` and ``["x"]``, ``null`` and ``false``, an array and an object."""
    if isinstance(value, bool):
        return int(value) if rng.random() < 0.5 else float(value)
    if isinstance(value, (int, float)):
        return rng.choice([value == 1, str(value), float(value), [value], None])
    if isinstance(value, str):
        return rng.choice([[value], {value: value}, None, len(value)])
    if value is None:
        return rng.choice([False, 0, ""])
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)} if rng.random() < 0.5 else json.dumps(value)
    return list(value.values())


def mutate(doc: Any, rng: random.Random) -> Any:
    """``doc`` with 1 to 3 changes: a value replaced, a key removed, or a key added."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return rng.choice(POOL)
        path = rng.choice(paths)
        parent = _get_parent(doc, path)
        kind = rng.random()
        if kind < 0.25:
            parent[path[-1]] = retype(parent[path[-1]], rng)
        elif kind < 0.6:
            parent[path[-1]] = copy.deepcopy(rng.choice(POOL))
        elif kind < 0.8:
            del parent[path[-1]]
        elif isinstance(parent, dict):
            # Copy a sibling's value under another key (null, wrong type or the right value).
            donor = rng.choice(list(parent.values())) if parent else None
            parent[path[-1]] = copy.deepcopy(donor if rng.random() < 0.5 else rng.choice(POOL))
        else:
            parent.append(copy.deepcopy(rng.choice(POOL)))
    return doc


def _inputs() -> dict[str, list[Any]]:
    seed = load_seed(PATHS)
    allow = load_allow(PATHS)
    out: dict[str, list[Any]] = {name: [] for name in SEED_POLICIES}
    for w in (seed, allow):
        for c in w.cases:
            out[SEED_POLICIES[c.group]].append(c.input)
    return out


@pytest.fixture(scope="module")
def engines() -> dict[str, pyrego.Engine]:
    seed = load_seed(PATHS)
    out = {}
    for ps in seed.policy_sets:
        e = pyrego.Engine()
        e.add_policies(dict(ps.modules))
        out[ps.name] = e
    return out


def _pyrego(engine: pyrego.Engine, inp: Any) -> Any:
    engine.set_input(inp)
    return engine.eval_rule(SEED_QUERY)


def _same(a: Any, b: Any) -> bool:
    return a is b if isinstance(a, bool) or isinstance(b, bool) else a == b


def test_every_seed_policy_has_a_function() -> None:
    assert set(handwritten.HANDWRITTEN) == set(SEED_POLICIES)
    assert handwritten.UNDEFINED is pyrego.UNDEFINED


@pytest.mark.parametrize("name", SEED_POLICIES)
def test_agrees_with_pyrego_on_workload_and_mutated_inputs(name: str, engines: dict[str, pyrego.Engine]) -> None:
    fn = handwritten.HANDWRITTEN[name]
    engine = engines[name]
    base = _inputs()[name]
    rng = random.Random(f"handwritten-{name}")
    # Half the mutants start from the allow input (the last), so that they reach deep into the rule bodies.
    cases = list(base) + [mutate(base[-1] if rng.random() < 0.5 else rng.choice(base), rng) for _ in range(MUTANTS)]
    outcomes = set()
    for inp in cases:
        want = _pyrego(engine, inp)
        got = fn(copy.deepcopy(inp))
        assert _same(got, want), f"{name}: hand-written {got!r}, pyrego {want!r} for input {json.dumps(inp)}"
        outcomes.add(got)
    # The mutations reach both decisions (time_based's first rule aside, every allow input is true).
    assert outcomes == {True, False}, (name, outcomes)


def test_python_engine_in_bench_runs_seed_and_allow_only() -> None:
    a = get_adapter("python")
    assert a.runs("seed") and a.runs("allow") and not a.runs("aci")
    assert not a.runs("seed", "fresh-warm")
    seed = load_seed(PATHS)
    p = a.prepare(seed.policy_sets[0])
    c = seed.cases[0]
    p.set_input(c.input)
    assert p.eval(SEED_QUERY) is False
    assert p.evaluator(SEED_QUERY, True)(c.input_json) is False
    assert p.clone().evaluator(SEED_QUERY, False)(c.input) is False
    with pytest.raises(Exception, match="no hand-written"):
        a.prepare(PolicySet("other", []))
    assert UNDEFINED_MARK != p.eval(SEED_QUERY)


def test_bench_reports_ratio_to_handwritten(tmp_path: Path) -> None:
    argv = ["--quick", "--warmup", "0.05", "--measure", "0.05", "--no-progress", "--no-plots"]
    argv += ["--engines", "pyrego,python", "--workloads", "seed,allow", "--workers", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["agreement"]["ok"] is True
    points = {(p["config"], p["engine"]) for p in data["throughput"]["points"] if not p["error"]}
    assert ("seed/prepared/object", "python") in points and ("allow/prepared/object", "python") in points
    assert not any(e == "python" and c.startswith("seed/fresh") for c, e in points)
    report = (tmp_path / "report.md").read_text()
    assert "hand-written Python (" in report
