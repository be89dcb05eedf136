"""Coverage-guided fuzzing of the parser, compiler and evaluator (atheris / libFuzzer).

One input is a policy, a query and an input document, separated by NUL bytes;
libFuzzer mutates them and keeps the inputs that reach new code in pyrego.
Every call pyrego makes on them may raise :class:`pyrego.RegoError` and
nothing else, and every evaluation has a time limit: a hang shows as a
libFuzzer timeout, any other exception as a crash with its input saved.

    python fuzz/fuzz_engine.py [-max_total_time=SECONDS] [-timeout=SECONDS] [CORPUS_DIR ...]

With no corpus folder, the seeds (the policies of tests/repos, the fuzz
corpus of the tests and OPA-style queries) are written to a new temporary
folder first. The test suite runs it for a short budget
(tests/test_fuzz_coverage.py); run it for hours to search deeper.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["pyrego"]):
    # pyrego loads its modules on first use: import here what the fuzzer
    # reaches (the engine, every builtin category), so that all of it is
    # instrumented and coverage guides the mutations.
    import pyrego
    import pyrego.engine
    from pyrego.builtins.registry import all_builtins

    all_builtins()

ROOT = Path(__file__).resolve().parent.parent
#: The evaluation time limit: well under libFuzzer's -timeout, so that only a
#: limit that does not work shows as a hang.
EVAL_TIMEOUT_S = 1.0
QUERIES = ["data", "data.fuzz", "x := data.fuzz.allow", "data.fuzz[k] = v", "x := data.fuzz.f(1)", "input"]
SEED_POLICIES = [
    'package fuzz\n\ndefault allow := false\n\nallow if {\n\tinput.user.role == "admin"\n\tcount(input.user.permissions) > 0\n}\n',
    "package fuzz\n\ns contains x if { some x in input.xs; x > 1 }\no[k] := v if { some k, v in input.m }\nf(x) := y if { y := x * 2 }\n",
    'package fuzz\n\nallowed if every r in input.roles { r == "admin" }\nq := r if { r := allowed with input as {"roles": ["admin"]} }\n',
    'package fuzz\n\na.b.c := 1\nt := {x: y | some x, y in {"k": [1, 2.5, "s", null, true]}}\nn := 1 / 3 * 3\n',
    'package fuzz\n\nimport rego.v1\n\nv := "x" if input.a == 1 else := "y"\nw := [p | walk({"a": [1, {"b": 2}]}, [p, _])]\nm := sprintf("%v", [input])\n',
]


def _split(data: bytes) -> tuple[str, str, str]:
    text = data.decode("utf-8", errors="replace")
    policy, _, rest = text.partition("\x00")
    query, _, inp = rest.partition("\x00")
    return policy, query, inp


def test_one_input(data: bytes) -> None:
    """The fuzz target: any exception but RegoError propagates (a crash for libFuzzer)."""
    policy, query, inp = _split(data)
    engine = pyrego.Engine()
    engine.set_eval_timeout(EVAL_TIMEOUT_S)
    engine.set_allow_network(False)
    try:
        engine.set_input_json(inp or "{}")
    except pyrego.RegoError:
        pass
    try:
        engine.add_policy("fuzz.rego", policy)
    except pyrego.RegoError:
        return
    for q in [query] + QUERIES if query else QUERIES:
        try:
            engine.eval_query(q)
        except pyrego.RegoError:
            pass
    try:
        engine.eval_rule("data.fuzz", input={"user": {"role": "admin", "permissions": [1]}, "xs": [1, 2]})
    except pyrego.RegoError:
        pass
    engine.take_prints()


def write_seeds(folder: Path) -> None:
    """Seed inputs: every policy of the corpus repositories and the seed policies."""
    texts = list(SEED_POLICIES)
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "repos").rglob("*.rego"))]
    inputs = [{"user": {"role": "admin", "permissions": [1]}}, {"xs": [1, 2, 3], "m": {"a": 1}}, {"roles": ["admin"]}]
    for i, text in enumerate(texts):
        seed = f"{text}\x00{QUERIES[i % len(QUERIES)]}\x00{json.dumps(inputs[i % len(inputs)])}"
        (folder / f"seed-{i:04d}").write_bytes(seed.encode("utf-8"))


def main(argv: list[str]) -> None:
    args = list(argv)
    if not any(not a.startswith("-") for a in args[1:]):
        folder = Path(tempfile.mkdtemp(prefix="pyrego-fuzz-"))
        write_seeds(folder)
        args.append(str(folder))
    if not any(a.startswith("-timeout=") for a in args):
        args.append("-timeout=20")
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
