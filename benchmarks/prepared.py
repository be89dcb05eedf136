"""Prepared seed decisions against the same decisions written by hand, per policy.

For each seed policy: ``engine.prepare_rule("data.bench.allow")`` and the
hand-written function of ``pyrego.bench.handwritten``, called on the
policy's three seed inputs in turn; nanoseconds per decision as thread CPU
time (less disturbed than wall time by other work on a shared machine), the
minimum over ``--rounds`` rounds in which the two alternate, and the ratio
hand-written / prepared (above 1: the prepared rule is faster). Also whether
the prepared rule runs as one generated function of the input
(``codegen.prepared``) or through an evaluation context.

    PYTHONPATH=src python benchmarks/prepared.py [--calls N] [--rounds K]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import pyrego
from pyrego.bench import handwritten

SEED = Path(os.environ.get("PYREGO_SEED", Path(__file__).resolve().parents[2] / "shared" / "bench" / "seed"))
if not SEED.is_dir():
    SEED = Path("/work/shared/bench/seed")
RULE = "data.bench.allow"


def per_call(fn: Callable[[Any], Any], inputs: list[Any], calls: int) -> float:
    """Thread CPU nanoseconds per call of ``fn`` over ``inputs`` in turn."""
    rounds = max(1, calls // len(inputs))
    start = time.thread_time_ns()
    for _ in range(rounds):
        for x in inputs:
            fn(x)
    return (time.thread_time_ns() - start) / (rounds * len(inputs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=60_000, help="calls per timing")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (the minimum is kept)")
    ns = ap.parse_args()
    print(f"| policy | prepared | hand-written | ratio | one function of the input |  (load average {os.getloadavg()[0]:.2f})")
    print("|---|---:|---:|---:|---|")
    total_prepared = total_hand = 0.0
    for path in sorted((SEED / "policies").glob("*_policy.rego")):
        name = path.name.removesuffix("_policy.rego")
        inputs = [json.loads(p.read_text()) for p in sorted((SEED / "inputs").glob(f"{name}_input*.json"))]
        engine = pyrego.Engine()
        engine.add_policy(path.name, path.read_text())
        prepared = engine.prepare_rule(RULE)
        hand = getattr(handwritten, name)
        assert [prepared(x) for x in inputs] == [hand(x) for x in inputs], name
        times_p, times_h = [], []
        for _ in range(ns.rounds):
            times_p.append(per_call(prepared, inputs, ns.calls))
            times_h.append(per_call(hand, inputs, ns.calls))
        tp, th = min(times_p), min(times_h)
        total_prepared += tp
        total_hand += th
        direct = prepared.__code__.co_filename == "<pyrego prepared rule>"
        print(f"| {name} | {tp:.0f} ns | {th:.0f} ns | {th / tp:.2f}x | {'yes' if direct else 'no'} |")
    print(f"\nAll nine in turn: {total_hand / total_prepared:.2f}x hand-written.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
