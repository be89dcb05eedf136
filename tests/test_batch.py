"""Batch evaluation (pyrego.batch, Engine.eval_many, pyrego eval --input-lines):
results equal single evaluations, errors are per input, order is kept,
inputs are read lazily, worker processes agree with one process."""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.batch import BatchResult, eval_lines, eval_many
from pyrego.errors import RegoError

SRC = str(Path(__file__).resolve().parent.parent / "src")
SEED = Path(os.environ.get("PYREGO_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "bench" / "seed"
if not SEED.is_dir():
    SEED = Path("/work/shared/bench/seed")
POLICIES = sorted(SEED.glob("policies/*_policy.rego"))
RULE = "data.bench.allow"


def seed_inputs(policy: Path) -> list[Any]:
    name = policy.name.removesuffix("_policy.rego")
    return [json.loads(p.read_text()) for p in sorted(SEED.glob(f"inputs/{name}_input*.json"))]


def mutations(doc: Any, rng: random.Random, n: int) -> list[Any]:
    """``n`` variants of ``doc``: a leaf changed (other value, other type), a key dropped."""
    leaves: list[tuple[Any, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                leaves.append((x, k))
                walk(v)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                leaves.append((x, i))
                walk(v)

    out = []
    for _ in range(n):
        new = copy.deepcopy(doc)
        leaves.clear()
        walk(new)
        if not leaves:
            out.append(new)
            continue
        parent, key = rng.choice(leaves)
        choice = rng.randrange(4)
        if choice == 0 and isinstance(parent, dict):
            del parent[key]
        elif choice == 1:
            parent[key] = rng.choice([None, True, 0, 1.5, "x", [], {}, "admin", "read"])
        elif choice == 2:
            old = parent[key]
            parent[key] = str(old) if not isinstance(old, str) else len(old)
        else:
            parent[key] = [parent[key]]
        out.append(new)
    return out


def single(engine: pyrego.Engine, path: str, value: Any) -> BatchResult:
    try:
        return BatchResult(engine.eval_rule(path, input=value), None)
    except RegoError as err:
        return BatchResult(pyrego.UNDEFINED, err)


def same(a: BatchResult, b: BatchResult) -> bool:
    if (a.error is None) != (b.error is None):
        return False
    if a.error is not None:
        assert b.error is not None
        return (a.error.code, a.error.message, a.error.location) == (b.error.code, b.error.message, b.error.location)
    return a.value == b.value and type(a.value) is type(b.value)


def engine_for(policy: Path) -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy(policy.name, policy.read_text())
    return engine


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.stem)
def test_seed_policies_equal_single_evaluations(policy: Path) -> None:
    rng = random.Random(policy.name)
    inputs = seed_inputs(policy)
    inputs += [m for doc in inputs for m in mutations(doc, rng, 40)]
    for strict in (False, True):
        engine = engine_for(policy)
        engine.set_strict_builtin_errors(strict)
        got = list(engine.eval_many(RULE, inputs))
        want = [single(engine, RULE, x) for x in inputs]
        assert len(got) == len(want) == len(inputs)
        assert all(same(g, w) for g, w in zip(got, want)), policy.name
        assert any(r.value is True for r in want) or any(r.value is False for r in want)


def test_seed_policies_have_allowed_inputs_too() -> None:
    # The comparison above must see both answers somewhere, not only defaults.
    seen = set()
    for policy in POLICIES:
        engine = engine_for(policy)
        seen |= {r.value for r in engine.eval_many(RULE, seed_inputs(policy))}
    assert {True, False} <= seen


CONFLICT = """package x
import rego.v1
p := 1 if input.a
p := 2 if input.b
q := input.n / input.d
r contains v if some v in input.items
"""


def test_errors_are_per_input_and_the_batch_goes_on() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    results = list(engine.eval_many("data.x.p", [{"a": 1}, {"a": 1, "b": 1}, {}, {"b": 1}]))
    assert [r.value for r in results] == [1, pyrego.UNDEFINED, pyrego.UNDEFINED, 2]
    assert [r.ok for r in results] == [True, False, True, True]
    err = results[1].error
    assert err is not None and err.code == "eval_conflict_error" and err.location is not None and err.location.row == 3
    with pytest.raises(RegoError) as raised:
        results[1].unwrap()
    assert raised.value is err
    assert results[0].defined and not results[2].defined
    value, error = results[3]  # a tuple
    assert (value, error) == (2, None)


def test_builtin_errors_strict_and_not() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    inputs = [{"n": 6, "d": 3}, {"n": 1, "d": 0}, {"n": "a", "d": 1}, {"n": 1, "d": 4}]
    lax = list(engine.eval_many("data.x.q", inputs))
    assert [r.value for r in lax] == [2, pyrego.UNDEFINED, pyrego.UNDEFINED, 0.25] and all(r.ok for r in lax)
    engine.set_strict_builtin_errors(True)
    strict = list(engine.eval_many("data.x.q", inputs))
    assert [r.error.code if r.error else None for r in strict] == [None, "eval_builtin_error", "eval_type_error", None]
    assert [r.value for r in strict][::3] == [2, 0.25]


def test_time_limit_hit_on_one_input() -> None:
    engine = pyrego.Engine()
    engine.add_policy("slow.rego", "package s\nimport rego.v1\nn := count([x | some x in numbers.range(1, input.n); x % 7 == 0])\n")
    engine.set_eval_timeout(0.2)
    results = list(engine.eval_many("data.s.n", [{"n": 14}, {"n": 10**9}, {"n": 70}]))
    assert results[0].value == 2 and results[2].value == 10
    assert results[1].error is not None and results[1].error.code == "eval_cancel_error"


def test_on_error_raise_stops_at_the_failing_input() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    it = engine.eval_many("data.x.p", [{"a": 1}, {"a": 1, "b": 1}, {"b": 1}], on_error="raise")
    assert next(it).value == 1
    with pytest.raises(RegoError, match="conflicting"):
        next(it)


def test_generators_are_read_lazily() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    read = 0

    def inputs() -> Iterator[dict[str, int]]:
        nonlocal read
        for i in itertools.count():
            read += 1
            yield {"a": i} if i % 2 else {"b": i}

    results = engine.eval_many("data.x.p", inputs())
    assert read == 0
    first = list(itertools.islice(results, 5))
    assert [r.value for r in first] == [2, 1, 2, 1, 2]
    more = list(itertools.islice(results, 100))
    assert [r.value for r in more[:2]] == [1, 2] and read == 105  # an endless generator, read one input per result


def test_empty_input_and_non_rule_paths() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    engine.add_data({"base": {"k": [1, 2]}})
    assert list(engine.eval_many("data.x.p", [])) == []
    assert list(engine.eval_many("data.x.p", iter(()))) == []
    assert [r.value for r in engine.eval_many("data.base.k", [{}, {}])] == [[1, 2], [1, 2]]
    assert [r.value for r in engine.eval_many("data.x", [{"a": 1}])] == [engine.eval_rule("data.x", input={"a": 1})]
    assert [r.value for r in engine.eval_many("data.x.r", [{"items": [1, 1, "a"]}])] == [{1, "a"}]


def test_compile_errors_are_raised_by_the_call() -> None:
    engine = pyrego.Engine()
    engine.add_policy("bad.rego", "package b\nimport rego.v1\np if { x := 1; x == y }\n")
    for inputs in ([{}], [{}] * 100):
        with pytest.raises(RegoError) as raised:
            list(engine.eval_many("data.b.p", inputs))  # never an input's error
        assert raised.value.code == "rego_unsafe_var_error"
    with pytest.raises(RegoError, match="rule path"):
        list(pyrego.Engine().eval_many("data.x[input.y]", [{}]))
    with pytest.raises(RegoError):
        engine.eval_many("data.b.p", [{}], on_error="bogus")  # type: ignore[arg-type]


def test_small_batches_follow_the_engines_changes() -> None:
    # Small batches reuse a rule the engine keeps prepared: after policies,
    # data or settings change, the next batch decides by the new ones.
    engine = pyrego.Engine()
    engine.add_policy("a.rego", "package a\nimport rego.v1\nallow if data.admins[input.user]\n")
    engine.add_data({"admins": {"ann": True}})
    users = [{"user": "ann"}, {"user": "bob"}]
    assert [r.value for r in engine.eval_many("data.a.allow", users)] == [True, pyrego.UNDEFINED]
    engine.add_data({"admins": {"bob": True}})  # (merged)
    assert [r.value for r in engine.eval_many("data.a.allow", users)] == [True, True]
    engine.add_policy("a.rego", "package a\nimport rego.v1\ndefault allow := false\nallow if input.user == \"ann\"\n")
    assert [r.value for r in engine.eval_many("data.a.allow", users)] == [True, False]
    clone = engine.clone()
    clone.add_policy("a.rego", "package a\nimport rego.v1\nallow := input.user\n")
    assert [r.value for r in clone.eval_many("data.a.allow", users)] == ["ann", "bob"]
    assert [r.value for r in engine.eval_many("data.a.allow", users)] == [True, False]  # (not the clone's)


def test_small_batches_from_many_threads() -> None:
    engine = pyrego.Engine()
    engine.add_policy("a.rego", "package a\nimport rego.v1\nallow if input.n % 2 == 0\nname := sprintf(\"n%d\", [input.n])\n")
    failures: list[str] = []

    def work(offset: int) -> None:
        for i in range(offset, offset + 2000):
            batch = [{"n": i}, {"n": i + 1}]
            got = [r.value for r in engine.eval_many("data.a.allow", batch)]
            names = [r.value for r in engine.eval_many("data.a.name", batch)]
            if got != [i % 2 == 0 or pyrego.UNDEFINED, (i + 1) % 2 == 0 or pyrego.UNDEFINED] or names != [f"n{i}", f"n{i + 1}"]:
                failures.append(f"{i}: {got} {names}")

    import threading

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=work, args=(k * 10_000,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert failures == []


def test_code_promotion_during_a_batch_keeps_results() -> None:
    # A fresh engine's code is compact until hot; the batch takes the fast form when it appears.
    policy = POLICIES[0]
    inputs = seed_inputs(policy) * 200
    fresh = engine_for(policy)
    got = [r.value for r in fresh.eval_many(RULE, inputs)]
    assert got == [engine_for(policy).eval_rule(RULE, input=x) for x in inputs]


def test_two_processes_equal_one_and_keep_order() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    engine.set_strict_builtin_errors(True)
    inputs = [{"a": 1} if i % 3 == 0 else {"a": 1, "b": 1} if i % 3 == 1 else {"b": i} for i in range(1000)]
    local = list(engine.eval_many("data.x.p", inputs))
    pooled = list(engine.eval_many("data.x.p", (x for x in inputs), processes=2, chunk_size=7))
    assert len(pooled) == len(local) == 1000
    assert all(same(a, b) for a, b in zip(local, pooled))
    assert {type(r.error).__name__ for r in pooled if r.error} == {"EvalConflictError"}
    divs = [{"n": i, "d": i % 4} for i in range(50)]
    assert all(same(a, b) for a, b in zip(engine.eval_many("data.x.q", divs), engine.eval_many("data.x.q", divs, processes=2, chunk_size=4)))


def test_processes_with_the_engine_fallback_and_seed_policies() -> None:
    # Every seed policy through a pool of two (each worker loads the compiled artifact).
    for policy in POLICIES[:3]:
        engine = engine_for(policy)
        inputs = seed_inputs(policy) * 5
        want = [engine.eval_rule(RULE, input=x) for x in inputs]
        assert [r.value for r in engine.eval_many(RULE, inputs, processes=2, chunk_size=2)] == want


def test_pool_reads_ahead_only_a_few_chunks() -> None:
    from pyrego.batch.pool import CHUNKS_AHEAD

    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    read = 0

    def inputs() -> Iterator[dict[str, int]]:
        nonlocal read
        for i in itertools.count():
            read += 1
            yield {"a": i}

    results = eval_many(engine, "data.x.p", inputs(), processes=2, chunk_size=10)
    assert next(results).value == 1
    assert read <= 10 * 2 * CHUNKS_AHEAD + 10
    results.close()  # type: ignore[attr-defined]


def test_json_lines_in_process() -> None:
    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    lines = ['{"a": 1}\n', b'{"a": 1, "b": 1}\n', "\n", "not json\n", "{}\n", '{"b": 2}']
    out = list(eval_lines(engine, "data.x.p", lines, chunk_size=2))
    assert [ok for ok, _ in out] == [True, False, False, True, True]
    docs = [json.loads(text) for _, text in out]
    assert docs[0] == {"result": 1} and docs[3] == {} and docs[4] == {"result": 2}
    assert docs[1]["error"]["code"] == "eval_conflict_error" and docs[1]["error"]["location"]["row"] == 3
    assert docs[2]["error"]["code"] == "invalid_input" and "line 4" in docs[2]["error"]["message"]


def run_cli(args: list[str], stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "pyrego", *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


@pytest.fixture
def policy_dir(tmp_path: Path) -> Path:
    (tmp_path / "x.rego").write_text(CONFLICT)
    return tmp_path


def test_cli_input_lines_from_a_file(policy_dir: Path) -> None:
    (policy_dir / "in.jsonl").write_text('{"a": 1}\n{"b": 1}\n{}\n')
    proc = run_cli(["eval", "-d", "x.rego", "--input-lines", "in.jsonl", "data.x.p"], cwd=policy_dir)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x) for x in proc.stdout.splitlines()] == [{"result": 1}, {"result": 2}, {}]
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    failing = run_cli(["eval", "-d", "x.rego", "--input-lines", "in.jsonl", "--fail", "data.x.p"], cwd=policy_dir)
    assert failing.returncode == 1 and failing.stdout == proc.stdout


def test_cli_input_lines_from_stdin_with_errors_and_processes(policy_dir: Path) -> None:
    lines = "".join(json.dumps({"a": 1, "b": 1} if i == 3 else {"a": i}) + "\n" for i in range(1, 40))
    for extra in ([], ["--processes", "2"]):
        proc = run_cli(["eval", "-d", "x.rego", "--input-lines", "-", *extra, "data.x.p"], stdin=lines + "oops\n", cwd=policy_dir)
        assert proc.returncode == 2, proc.stderr
        out = [json.loads(x) for x in proc.stdout.splitlines()]
        assert len(out) == 40
        assert out[0] == {"result": 1} and out[38] == {"result": 1}
        assert out[2]["error"]["code"] == "eval_conflict_error"
        assert out[39]["error"]["code"] == "invalid_input"


def test_cli_input_lines_refuses_other_inputs_and_queries(policy_dir: Path) -> None:
    (policy_dir / "in.json").write_text("{}")
    proc = run_cli(["eval", "-d", "x.rego", "--input-lines", "in.json", "-i", "in.json", "data.x.p"], cwd=policy_dir)
    assert proc.returncode == 2 and "--input-lines" in (proc.stderr + proc.stdout)
    proc = run_cli(["eval", "-d", "x.rego", "--input-lines", "in.json", "x := data.x.p"], cwd=policy_dir)
    assert proc.returncode == 2 and proc.stdout.strip() != ""


def test_processes_build_engines_when_no_artifact_can_hold_the_policies() -> None:
    from pyrego.artifact.format import ArtifactError
    from pyrego.artifact.write import artifact_text
    from pyrego.batch import worker_spec
    from pyrego.batch.pool import engine_rule

    text = "package p\nimport rego.v1\na.b.c := 1\na.b[k] := 2 if some k in input.ks\n"
    engine = pyrego.Engine()
    engine.add_policy("p.rego", text)
    engine.add_data({"extra": 1})
    with pytest.raises(ArtifactError):
        artifact_text(engine)
    assert worker_spec(engine)[0] is engine_rule
    inputs = [{"ks": ["x", "y"]}, {"ks": []}, {"ks": ["c"]}] * 4
    want = [single(engine, "data.p.a", x) for x in inputs]
    got = list(engine.eval_many("data.p.a", inputs, processes=2, chunk_size=2))
    assert all(same(a, b) for a, b in zip(got, want)) and len(got) == len(want)
    assert any(r.error for r in want) and any(r.ok for r in want)


def test_extension_functions_stay_in_process() -> None:
    engine = pyrego.Engine()
    engine.add_extension("ext.double", 1, lambda x: x * 2)
    engine.add_policy("e.rego", "package e\nimport rego.v1\nv := ext.double(input.n)\n")
    assert [r.value for r in engine.eval_many("data.e.v", [{"n": 2}, {"n": 5}])] == [4, 10]
    with pytest.raises(RegoError, match="extension"):
        engine.eval_many("data.e.v", [{"n": 2}], processes=2)


def test_a_started_pool_serves_many_batches() -> None:
    from pyrego.batch import batch_pool

    engine = pyrego.Engine()
    engine.add_policy("x.rego", CONFLICT)
    with batch_pool(engine, "data.x.p", processes=2, chunk_size=3).start() as pool:
        for n in (0, 1, 10, 50):
            inputs = [{"a": i} if i % 4 else {"a": 1, "b": 1} for i in range(n)]
            got = list(pool.eval_many(inputs))
            assert all(same(a, b) for a, b in zip(got, engine.eval_many("data.x.p", inputs))) and len(got) == n
        assert [ok for ok, _ in pool.eval_lines(['{"a": 1}', "[", '{"b": 1}'])] == [True, False, True]


def test_a_lazy_batch_follows_the_engine_from_the_next_input() -> None:
    engine = pyrego.Engine()
    engine.add_policy("v.rego", "package v\nimport rego.v1\nx := input.n * 10\n")
    results = engine.eval_many("data.v.x", ({"n": i} for i in range(100)))
    first = [next(results).value for _ in range(50)]
    engine.add_policy("v.rego", "package v\nimport rego.v1\nx := input.n * 100\n")
    rest = [r.value for r in results]
    assert first == [i * 10 for i in range(50)] and rest == [i * 100 for i in range(50, 100)]
