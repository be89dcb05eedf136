"""What inputs and policies built to be expensive cost: time and memory of each.

A service that evaluates policies for clients who control the input, or that
loads policies it did not write, must not spend seconds or gigabytes on a
small request. Each case here was once quadratic or worse; the script prints
its time and how far it raised the process's peak memory (cases run in the
order given, so a case that needs no more than an earlier one shows 0), so a
change that brings a cost back shows in the numbers (timings are not
asserted in the test suite).

    python benchmarks/hostile_costs.py [CASE ...]
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import pyrego


def _format_ints() -> Any:
    # json.marshal of a million ints (each int was formatted after computing 10**4000).
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nr := json.marshal(input)")
    return len(engine.eval_rule("data.p.r", input=list(range(1_000_000))))


def _json_ints() -> Any:
    return len(pyrego.Engine().eval_query_json("x := input", input=list(range(100_000))))


def _long_ref_query() -> Any:
    return pyrego.Engine().eval_query("x := input" + ".b" * 30_000)


def _long_ref_rule() -> Any:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", "package p\nr := input" + ".b" * 20_000)
    return engine.eval_rule("data.p.r", input={})


def _long_body() -> Any:
    body = "\n".join(f"  x{i} := input.n + {i}" for i in range(20_000))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\nr if {{\n{body}\n}}")
    # 34 evaluations: past the 32nd, where a hot program is recompiled.
    return {engine.eval_rule("data.p.r", input={"n": 1}) for _ in range(34)}


def _rule_chain() -> Any:
    rules = "\n".join(f"r{i} := r{i + 1} + 1" for i in range(1000))
    engine = pyrego.Engine()
    engine.add_policy("p.rego", f"package p\n{rules}\nr1000 := 0")
    return engine.eval_rule("data.p.r0")


CASES: dict[str, Callable[[], Any]] = {
    "json.marshal of 1M ints": _format_ints,
    "eval_query_json of 100k ints": _json_ints,
    "query with a 30,000-key ref": _long_ref_query,
    "rule with a 20,000-key ref": _long_ref_rule,
    "20,000-statement body, 34 evaluations": _long_body,
    "1,000-rule chain": _rule_chain,
}


def main(argv: list[str]) -> int:
    chosen = [name for name in CASES if not argv or any(a in name for a in argv)]
    for name in chosen:
        pyrego.clear_compile_cache()
        peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            CASES[name]()
            outcome = "ok"
        except pyrego.RegoError as err:
            outcome = err.code
        seconds = time.perf_counter() - start
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before  # KiB on Linux
        print(f"{name:42} {seconds:8.2f} s {grown / 1024:8.1f} MB more peak  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
