"""Small filter policies that call user functions with unknown arguments (seeded).

Each case is a ``package filters`` policy whose ``include`` calls a function
``f`` with arguments built from ``input.t`` (unknown); ``f`` has one or more
definitions, an ``else``, a ``default``, or calls another function. Compared
with OPA's Compile API in tests/test_partial_functions.py.
"""

from __future__ import annotations

import random

DEFINITIONS = [
    "f(v) := v + 1",
    "f(v) := v",
    "f(v) := true if v > 1\nf(v) := true if v < -1",
    "f(v) := 1 if v > 1\nf(v) := 2 if v < -1",
    "f(v) := 1 if v > 1\nelse := 2",
    "default f(_) := 0\nf(v) := 1 if v > 1",
    "default f(_) := false\nf(v) if v == \"a\"",
    "g(v) := v * 2\nf(v) := g(v) + 1",
    "g(v) if v > 2\nf(v) if g(v)\nf(v) if v == 0",
    "f(v) := x if { x := v; x != 3 }",
    "f(v, w) := v if v > w",
    "f(v) := [v, 1]",
]

CALLS = [
    "f(input.t.y)",
    "f(input.t.y) == 1",
    "f(input.t.y) == 2",
    "f(input.t.y) > 3",
    "x := f(input.t.y); x == input.t.z",
    "input.t.z == f(input.t.y)",
    "f(input.t.y) == f(input.t.z)",
    "not f(input.t.y)",
    "f(input.t.y, input.t.z)",
    "f(input.t.y, 3) == input.t.z",
    "f(f(input.t.y)) == 3",
    "f(3) == input.t.y",
    "count([1 | f(input.t.y) > 3]) > 0",
    "some v in [1, 2]; f(input.t.y) == v",
    "f(input.t.y) == [input.t.z, 1]",
]


def policy(definition: int, call: int) -> str:
    """The policy of definitions ``definition`` called as ``call`` (indexes into the lists above)."""
    return f"package filters\n\n{DEFINITIONS[definition]}\ninclude if {{ {CALLS[call]} }}\n"


def generate(seed: int) -> str:
    """The policy of case ``seed``."""
    rng = random.Random(seed)
    defs = rng.choice(DEFINITIONS)
    calls = rng.sample(CALLS, rng.randint(1, 2))
    rules = "\n".join(f"include if {{ {c} }}" for c in calls)
    return f"package filters\n\n{defs}\n{rules}\n"
