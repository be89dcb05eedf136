"""The shortcuts a cold compilation takes give what the full work gives.

A fresh engine parses, checks and plans each policy once, so a few stages
skip work they can tell is not needed from a cheap test first. Each test
here runs a stage both ways, with the shortcut and with the full work, over
OPA's conformance policies and over cases written to hit the edges of each
test, and asks for the same answer: the same errors (messages, locations,
order), the same hidden calls, the same variables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from pyrego.ast import nodes as ast
from pyrego.compile.checks import early_errors
from pyrego.compile.pipeline import compile_modules
from pyrego.compile.safety import stmt_has_vars, stmt_vars
from pyrego.conformance import iter_cases
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module
from shared_material import CONFORMANCE, need_shared

# Policies written to reach each branch of the shortcuts' tests.
EDGE_POLICIES = [
    # declarations at the top level of a body, of an else branch, of a function
    "package p\n\nr if {\n\tx := 1\n\tx := 2\n}\n",
    "package p\n\nr := 1 if {\n\tfalse\n} else := 2 if {\n\tx := 1\n\tx := 2\n}\n",
    "package p\n\nf(x) := y if {\n\ty := x\n\tcount := 1\n\tcount(y)\n}\n",
    "package p\n\nf(x, x) := 1\n",
    "package p\n\nr if {\n\tsome x\n\tinput.a == 1\n}\n",
    "package p\n\nr if {\n\tsome x in input.a\n}\n",
    "package p\n\nr if {\n\tsome k, x in input.a\n\tk == x\n}\n",
    "package p\n\nr if {\n\tevery x in input.a {\n\t\tx > 1\n\t}\n}\n",
    "package p\n\nr if {\n\tnot x := 1\n}\n",
    "package p\n\nr if {\n\t[a, 1] := [1, 1]\n\t1 := a\n}\n",
    "package p\n\nr if {\n\tinput := 1\n}\n",
    # no declaration, no comprehension: the checks have nothing to say
    "package p\n\nr if {\n\tinput.a == 1\n\tcount(input.b) > 0\n\tnot input.c\n}\n",
    "package p\n\nr if input.a == x\n\nq contains x if {\n\tinput.a[x]\n}\n",
    "package p\n\nr := y if {\n\tinput.a\n} else := 2\n",
    "package p\n\nr if {\n\tcount == 1\n\tcount(input.a) == 1\n}\n",
    # comprehensions, with and without declarations, in bodies and heads
    "package p\n\nr if {\n\tcount([x | x := input.a[_]; x := 2]) > 0\n}\n",
    "package p\n\nr := [x | some x in input.a] if {\n\ttrue\n}\n",
    "package p\n\nr := {x | x := 1; y := 2}\n",
    "package p\n\nr if {\n\tinput.a | input.b == set()\n}\n",
    "package p\n\nr := {k: v | some k, v in input.a; count := 1; count(v)}\n",
    "package p\n\nr if {\n\tx := [y | y := 1]\n\ty := 2\n\tx[_] == y\n}\n",
]


def _policies() -> Iterator[str]:
    yield from EDGE_POLICIES
    root = need_shared(*CONFORMANCE)
    for case in iter_cases(root):
        yield from case.modules


def _modules() -> list[ast.Module]:
    out = []
    for text in _policies():
        try:
            out.append(parse_module(text, "p.rego", rego_v1=True))
        except RegoError:
            continue  # (a case about a parse error)
    return out


@pytest.fixture(scope="module")
def modules() -> list[ast.Module]:
    mods = _modules()
    assert len(mods) > 1000
    return mods


def _answer(modules: list[ast.Module], strict: bool) -> tuple[list[str], list[str]]:
    errors, hidden = early_errors(modules, strict=strict)
    return [f"{e.location}: {e}" for e in errors], [f"{e.location}: {e}" for e in hidden]


def _comprehensions(node: object) -> int:
    if isinstance(node, (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
        return 1
    if dataclasses.is_dataclass(node):
        return sum(_comprehensions(getattr(node, f.name)) for f in dataclasses.fields(node))
    if isinstance(node, tuple):
        return sum(_comprehensions(x) for x in node)
    return 0


def test_the_parser_tells_where_comprehensions_may_be(modules: list[ast.Module]) -> None:
    seen = {True: 0, False: 0}
    for m in modules:
        seen[m.closures] += 1
        if not m.closures:
            assert _comprehensions(m.rules) == 0, m
    assert seen[True] > 50 and seen[False] > 500
    # (those made for `not` with `import future.keywords.not`, for `and`/`or`, for `with` in a template)
    for text in (
        "package p\n\nimport future.keywords.not\n\np if {\n\tnot input.x + 1 == 2\n}\n",
        "package p\n\nimport future.keywords.or\n\np if {\n\tinput.x or input.y\n}\n",
        'package p\n\nf(x) := x\n\np := $"{f(1) with f as g}"\n\ng(_) := 2\n',
    ):
        m = parse_module(text, "p.rego", rego_v1=True)
        assert _comprehensions(m.rules) and m.closures


def _with_modifiers(node: object) -> int:
    if isinstance(node, ast.Expr) and node.with_mods:
        return 1
    if dataclasses.is_dataclass(node):
        return sum(_with_modifiers(getattr(node, f.name)) for f in dataclasses.fields(node))
    if isinstance(node, tuple):
        return sum(_with_modifiers(x) for x in node)
    return 0


def test_the_parser_tells_where_with_may_be(modules: list[ast.Module]) -> None:
    seen = {True: 0, False: 0}
    for m in modules:
        seen[m.withs] += 1
        if not m.withs:
            assert _with_modifiers(m.rules) == 0, m
    assert seen[True] > 50 and seen[False] > 500
    # the word in a comment, a string, a name: no modifier
    text = 'package p\n\n# with\nr if {\n\tstartswith(input.x, "with")\n\tinput.with_x\n}\n'
    assert not parse_module(text, "p.rego", rego_v1=True).withs
    text = 'package p\n\nf(x) := x\n\np := $"{f(1) with f as g}"\n\ng(_) := 2\n'
    assert parse_module(text, "p.rego", rego_v1=True).withs


def test_with_targets_are_found_where_with_is(modules: list[ast.Module]) -> None:
    from pyrego.compile.pipeline import CompileState, _generate_code

    compared = mocked = 0
    for m in modules:
        if "with" not in repr(m.rules):
            continue
        try:
            tree = compile_modules([m])
        except RegoError:
            continue
        programs = []
        for module in (m, dataclasses.replace(m, withs=True)):
            state = CompileState([module], texts=["with"])
            state.tree = tree
            try:
                _generate_code(state)
            except RegoError as err:
                programs.append(str(err))
                continue
            assert state.program is not None
            programs.append(sorted(state.program.mockable))
        assert programs[0] == programs[1], m
        compared += 1
        mocked += bool(programs[0])
    assert compared > 50 and mocked > 10


@pytest.mark.parametrize("strict", [False, True])
def test_local_variable_checks_skip_only_rules_that_declare_nothing(modules: list[ast.Module], strict: bool) -> None:
    compared = with_errors = 0
    for m in modules:
        full = dataclasses.replace(m, closures=True)  # (every rule walked)
        got, want = _answer([m], strict), _answer([full], strict)
        assert got == want, m
        compared += 1
        with_errors += bool(want[0] or want[1])
    # the edge cases alone have errors and hidden calls
    assert compared == len(modules) and with_errors >= 8


def test_several_modules_at_once(modules: list[ast.Module]) -> None:
    for i in range(0, 600, 3):
        group = [dataclasses.replace(m, file=f"m{j}.rego") for j, m in enumerate(modules[i : i + 3])]
        full = [dataclasses.replace(m, closures=True) for m in group]
        assert _answer(group, False) == _answer(full, False)


def _expressions(body: ast.Body) -> Iterator[ast.Expr]:
    for e in body:
        yield e
        s = e.statement
        if isinstance(s, ast.Every):
            yield from _expressions(s.body)


def test_a_statement_has_variables_exactly_when_it_has_some(modules: list[ast.Module]) -> None:
    counts = {True: 0, False: 0}
    for m in modules:
        trees = [m.rules]
        try:
            tree = compile_modules([m])
        except RegoError:
            pass
        else:
            trees.append(tuple(r for node in tree.nodes.values() for r in node.rules))
        for rules in trees:
            for rule in rules:
                branch: ast.Rule | None = rule
                while branch is not None:
                    for e in _expressions(branch.body):
                        want = bool(stmt_vars(e.statement, set(), closures=True))
                        assert stmt_has_vars(e.statement) == want, e
                        counts[want] += 1
                    branch = branch.else_
    assert counts[True] > 1000 and counts[False] > 1000
