"""Small programs whose documents have one constant value, for the early-exit order tests.

OPA tries the definitions of such a document in its rule index's order and
stops at the first that succeeds; these programs mix definitions its index
tests (``input.x == 1``, a function's argument, a ref that must be defined)
with ones it does not (``print``), and bodies that raise under strict builtin
errors (``endswith`` of a number, ``count`` of a number, a function that does),
so that the order shows in the answer (an error, a value) and in the lines
``print`` writes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

#: Body expressions of a complete rule (``{d}``: the definition's number, for print).
RULE_ATOMS = (
    "input.x == 1",
    "input.x == 2",
    'input.y == "a"',
    "input.x",
    'endswith(input.n, "*")',
    "count(input.n) > 0",
    "g(input.n)",
    'print("d{d}")',
    'print("d{d}", input.x)',
    "true",
    "input.x in [1, 3]",
    '"a" in input.roles',
    'input.roles[_] == "b"',
    'glob.match("a.*", ["."], input.s)',
)
#: Also in a function's bodies: tests of its argument.
FUNCTION_ATOMS = RULE_ATOMS + ("k == 1", "k == 2", "k", 'startswith(k, "a")')
#: What places a definition where the input decides its order against another
#: (pyrego then keeps the source order; README, Known limitations): members
#: required of one collection, several values of one ref.
INPUT_ORDERED = frozenset({"input.x in [1, 3]", '"a" in input.roles', 'input.roles[_] == "b"'})

#: Inputs that make the tests above hold or not, and the raising bodies raise or not.
INPUTS: tuple[dict[str, Any], ...] = (
    {"x": 1, "n": 7, "k": 1},
    {"x": 2, "n": "a*", "k": 2, "y": "a"},
    {"x": 1, "y": "a", "n": "b", "k": "ab"},
    {"n": 7, "k": 1, "roles": ["b", "a"], "s": "a.b"},
    {"x": 3, "roles": ["a", "b"], "n": 7, "s": "b.a", "k": 7},
    {},
)

HELPERS = 'g(v) if endswith(v, "*")\n'


@dataclass
class Program:
    """A module (package ``p``) and the query that reads its document ``r``."""

    text: str
    query: str = "data.p.r"


#: Expressions that can raise (under strict builtin errors) or print.
NOISY = frozenset({'endswith(input.n, "*")', "count(input.n) > 0", "g(input.n)", 'print("d{d}")', 'print("d{d}", input.x)', 'startswith(k, "a")'})


def _body(rng: random.Random, atoms: tuple[str, ...], d: int) -> str:
    """One or two expressions, the tests OPA's index makes first: where a
    builtin's error comes before a test the index makes, OPA skips the body
    and pyrego raises (README, Known limitations), which is not what these
    programs are about."""
    picked = [rng.choice(atoms) for _ in range(rng.randint(1, 2))]
    picked.sort(key=lambda a: (a in NOISY, "input." not in a))  # (a ref read in a call is a test too)
    return "; ".join(a.format(d=d) for a in picked)


def generate(rng: random.Random, fixed: bool = False) -> Program:
    """A program: ``r`` (or a function ``f`` that ``r`` calls) of 2 to 4
    definitions of the value ``true``, some with an ``else``, maybe a default.
    ``fixed``: only programs whose order OPA's index fixes for every input
    (no ``else``, nothing of INPUT_ORDERED)."""
    function = rng.random() < 0.4
    atoms = FUNCTION_ATOMS if function else RULE_ATOMS
    if fixed:
        atoms = tuple(a for a in atoms if a not in INPUT_ORDERED)
    head = "f(k)" if function else "r"
    lines = ["package p", "", HELPERS]
    if rng.random() < 0.2:
        lines.append(f"default {head} := false" if not function else "default f(_) := false")
    for d in range(rng.randint(2, 4)):
        body = _body(rng, atoms, d)
        if not fixed and rng.random() < 0.25:
            other = _body(rng, atoms, d + 10)
            lines.append(f"{head} := true if {{ {body} }} else := true if {{ {other} }}")
        else:
            lines.append(f"{head} if {{ {body} }}")
    if function:
        lines.append("r := f(input.k)" if rng.random() < 0.7 else "r := f(1)")
    return Program("\n".join(lines) + "\n")
