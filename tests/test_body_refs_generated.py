"""Generated bodies in which a ref nested in an array, object or set, in a
call's operands, in ``some ... in`` or in an ``every`` domain binds a
variable by iterating (``x = [k, m[k]]``), compared with OPA v1.20.2 in each
execution form: the answer, or the error lines (file:row, code, message).

Each body is a few of the statements below in any order: expressions
binding variables through such refs or plainly, comparisons reading them
written before or after, negations (unsafe where nothing else binds their
variables), comprehensions and ``every`` reading them, and a statement
written twice (OPA drops the second copy in some orders and reports its
variables unsafe), and an ``every`` reading a variable that only a call
after it binds (OPA leaves it unsafe unless a unification comes between).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from conftest import EXECUTION_FORMS, in_form
from test_head_refs_generated import opa_answer, pyrego_outcome, same_outcome

PRELUDE = (
    "package p\n\n"
    'm := {"a": 1, "b": 2, "c": 3}\n'
    'n := {"a": {"x": 1}, "b": {"x": 2, "y": 3}, "c": {}}\n'
    'xs := ["a", "b", "z"]\n\n'
)

# Statements that bind k (and j, i) through a ref inside another term.
BINDERS = [
    "x = [k, m[k]]", "x := [k, m[k]]", "[k, m[k]] = x", 'x = {"a": [k, m[k]]}', "x = {k: m[k]}",
    "x = {m[k], k}", "x = [[k, n[k][j]], j]", "count([k, m[k]]) > 0", "is_array([k, m[k]])",
    "some w in [k, m[k]]", "every e in [k, m[k]] { e != 7 }", "every e in n[k] { e > 0 }",
    "x = [k, count(n[k])]", "y = [xs[i], i]", "[k, j] = [xs[i], n[xs[i]][j]]", "y := {k: [j, n[k][j]]}",
    "m[k] > 1", "n[k][j]", "x = [k, m[xs[i]]]", "[y, k] = [m[k], xs[i]]", 'x = [k, {"v": [m[k]]}]',
    "x = [k, j]", "x = k", "y = {[k, m[k]]}",
]
CALL_BINDERS = ["m[k] > 1", "is_array([k, m[k]])", "n[k][j] == 2", "count([k, m[k]]) > 0"]
FILTERS = [
    'k != "a"', 'j != "x"', "i > 0", 'not k == "a"', "not m[k] == 1", 'not [k, m[k]] == ["a", 1]',
    "k == xs[_]", 'x != "q"', "y != 0", "count([v | v := [k, m[k]]]) > 0", 'count({v | v := n[k][_]}) >= 0',
    "every e in [k] { e != 9 }", "every e in [1] { e != k }", 'not is_array([k, m[k]])', "to_number(m[k]) > 0",
]


def program(r: random.Random) -> str:
    """A module: the prelude and a rule (or a function) whose body mixes the statements above."""
    stmts = r.sample(BINDERS, r.choice([1, 1, 2, 2, 3])) + r.sample(FILTERS, r.choice([0, 1, 1, 2]))
    r.shuffle(stmts)
    if r.random() < 0.15:  # an ``every`` reading k first, a call binding k last
        stmts = ["every e in [1] { e != k }", *stmts, r.choice(CALL_BINDERS)]
    if r.random() < 0.2:  # a statement written twice
        stmts.insert(r.randrange(len(stmts) + 1), r.choice(stmts))
    body = "".join(f"\t{s}\n" for s in stmts)
    head = r.choice(["r contains x", "r contains [k, x]", "r contains 1", "r contains k", "r[k] := x"])
    shape = r.random()
    if shape < 0.2:
        return PRELUDE + f"r := [x | \n{body}]\n"
    if shape < 0.3:
        return PRELUDE + f"f(a) := x if {{\n{body}}}\n\nr := [f(1)]\n"
    return PRELUDE + f"{head} if {{\n{body}}}\n"


def query(r: random.Random) -> str:
    """A query mixing the statements above (over the prelude's documents)."""
    stmts = r.sample(BINDERS, r.choice([1, 1, 2])) + r.sample(FILTERS, r.choice([0, 1, 1, 2]))
    r.shuffle(stmts)
    return re.sub(r"\b(m|n|xs)\[", r"data.p.\1[", "; ".join(stmts))


def disagreements(oracle: Any, cases: Iterable[tuple[str, str, str]], *, strict_only: bool = False, runs: int = 1, skip: Callable[[Any], bool] | None = None) -> list[str]:
    """The cases ``(label, module, query)`` where pyrego's answer differs
    from OPA's in some execution form (each evaluated ``runs`` times). With
    strict builtin errors, and without them where OPA's answer is a value
    (its oracle raises them) unless ``strict_only``; ``skip``: answers of
    OPA not compared."""
    failures = []
    for label, module, query in cases:
        want = opa_answer(oracle, module, query)
        if skip is not None and skip(want):
            continue
        modes = (True,) if strict_only or (want and isinstance(want[0], str)) else (True, False)
        for form in EXECUTION_FORMS:
            with in_form(form):
                got = [pyrego_outcome(module, query, strict=strict) for strict in modes for _ in range(runs)]
            if not all(same_outcome(g, want) for g in got):
                failures.append(f"{label} ({form})\n{module}\n{query}\nOPA:    {want}\npyrego: {got}")
                break
    return failures


CHUNKS = 10
PER_CHUNK = 40


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_generated_bodies_answer_as_opa(oracle: Any, chunk: int) -> None:
    seeds = range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK)
    cases = [(f"seed {seed}", program(random.Random(f"body-refs-{seed}")), "x := data.p.r") for seed in seeds]
    failures = disagreements(oracle, cases, runs=2)
    assert not failures, f"{len(failures)} differences\n\n" + "\n\n".join(failures[:5])


@pytest.mark.parametrize("chunk", range(3))
def test_generated_queries_answer_as_opa(oracle: Any, chunk: int) -> None:
    seeds = range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK)
    cases = [(f"seed {seed}", PRELUDE, query(random.Random(f"body-refs-query-{seed}"))) for seed in seeds]
    failures = disagreements(oracle, cases, strict_only=True, runs=2)
    assert not failures, f"{len(failures)} differences\n\n" + "\n\n".join(failures[:5])
