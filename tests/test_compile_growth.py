"""Loading, compiling and first evaluating a program grow linearly with its rules.

Wall time on a shared machine moves by tens of percent, so the growth is
measured in Python operations instead: every event a trace function sees
(calls, lines, returns) while policies are added, compiled and a query
reaching all their rules is evaluated. For each shape the cost of the rules
added from n to 2n and from 2n to 4n must be the same per rule; a step that
looks at the whole program once per rule (as the fast form's list of
constant rules and the search for documents to materialize did) makes the
second larger. (Work inside C, such as copying a dict of all policies per
``add_policy``, is not counted here.)
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any, Callable

import pytest

import pyrego

Shape = Callable[[int], tuple[dict[str, str], str]]


def _one_package(rule: Callable[[int], str]) -> Shape:
    return lambda n: ({"p.rego": "package p\n" + "".join(rule(i) + "\n" for i in range(n))}, "data.p")


SHAPES: dict[str, Shape] = {
    # (data.p reaches every rule: all are planned, and the program turns hot)
    "rules with bodies": _one_package(lambda i: f'r{i} if input.x == "{i}"'),
    "constants": _one_package(lambda i: f"r{i} := {i}"),
    "one rule, many definitions": lambda n: ({"p.rego": "package p\n" + "".join(f'allow if input.x == "{i}"\n' for i in range(n))}, "data.p.allow"),
    "many packages": lambda n: ({f"p{i}.rego": f'package p{i}\nr := {i}\ns if input.x == "{i}"\n' for i in range(n)}, "data"),
}


def _operations(shape: Shape, n: int, one_by_one: bool) -> int:
    pyrego.clear_compile_cache()
    modules, path = shape(n)
    engine = pyrego.Engine()
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    sys.settrace(trace)
    try:
        if one_by_one:
            for name, text in modules.items():
                engine.add_policy(name, text)
        else:
            engine.add_policies(modules)
        value = engine.eval_rule(path, input={"x": "1"})
    finally:
        sys.settrace(None)
    assert value is not pyrego.UNDEFINED
    return count


CASES = [(shape, False) for shape in SHAPES] + [("many packages", True)]  # (one_by_one: add_policy per file)


@pytest.mark.parametrize(("shape", "one_by_one"), CASES, ids=[f"{s}{' one by one' if o else ''}" for s, o in CASES])
def test_cost_per_rule_does_not_grow_with_the_program(shape: str, one_by_one: bool) -> None:
    n = 200
    _operations(SHAPES[shape], n // 2, one_by_one)  # (first: the modules and tables loaded once per process)
    small, medium, large = (_operations(SHAPES[shape], k, one_by_one) for k in (n, 2 * n, 4 * n))
    first = (medium - small) / n  # per rule, from n to 2n rules
    second = (large - medium) / (2 * n)  # per rule, from 2n to 4n
    assert second < first * 1.1, (shape, small, medium, large, round(first), round(second))
