"""The whole-program screen (pyrego.typecheck.fast) agrees with the full type check.

A program the screen finds clean is not checked in full: the rules' types
it found are what queries are checked against. Here every program the
tests compile is checked both ways: the full check must find no error in a
program the screen passed, and leave the same type at every path of the
rules' environment. The programs are the seed benchmark policies, the
repositories under tests/repos, the examples, every OPA conformance case and
the generated programs of test_typecheck_opa (many of them ill-typed).
What the screen passes and what it leaves to the full check is pinned on
hand-written bodies too.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
import pyrego.typecheck as tc  # noqa: E402
from pyrego.conformance import iter_cases  # noqa: E402
from pyrego.typecheck.env import Node  # noqa: E402
from shared_material import CONFORMANCE, SEED, need_shared, needs_shared, shared_path  # noqa: E402
from test_typecheck_opa import documents_case, module_case, pyrego_outcome, query_case  # noqa: E402

ROOT = Path(__file__).resolve().parent
CONFORMANCE_DIR = shared_path(*CONFORMANCE)


def _dump(node: Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], str]) -> dict[tuple[Any, ...], str]:
    if node.value is not None:
        out[path] = str(node.value)
    for key, child in node.children.items():
        _dump(child, path + (key,), out)
    return out


def _outcome(fn: Any) -> tuple[Any, pyrego.RegoError | None]:
    try:
        return fn(), None
    except pyrego.RegoError as exc:
        return None, exc


def _messages(exc: pyrego.RegoError | None) -> list[str] | None:
    return None if exc is None else [str(e) for e in getattr(exc, "errors", [exc])]


class Passed:
    """How many programs the screen passed (each also checked in full: the fixture)."""

    def __init__(self) -> None:
        self.count = 0


@pytest.fixture
def screened(monkeypatch: pytest.MonkeyPatch) -> Passed:
    passed = Passed()
    original = tc.check_program

    def check_program(tree: Any, dependencies: Any, modules: Any = None, schemas: Any = None) -> Any:
        fast, fast_error = _outcome(lambda: original(tree, dependencies, modules, schemas))
        monkeypatch.setattr(tc, "FAST_SCREEN", False)
        try:
            full, full_error = _outcome(lambda: original(tree, dependencies, modules, schemas))
        finally:
            monkeypatch.setattr(tc, "FAST_SCREEN", True)
        assert _messages(fast_error) == _messages(full_error)
        if fast is not None and fast._rules_env is None:  # the screen passed it
            passed.count += 1
            assert full is not None, "screened, but the full check could not check it"
            assert _dump(fast.rules_env.tree, (), {}) == _dump(full.rules_env.tree, (), {})
        if fast_error is not None:
            raise fast_error
        return fast

    monkeypatch.setattr(tc, "check_program", check_program)
    return passed


def _policy_sets() -> list[dict[str, str]]:
    seed = need_shared(*SEED, "policies")
    sets = [{p.name: p.read_text()} for p in sorted(seed.glob("*.rego"))]
    for base in (ROOT / "repos", ROOT.parent / "examples"):
        for repo in sorted(base.iterdir()):
            if repo.is_dir() and not repo.name.endswith("_v0"):
                sets.append({str(p.relative_to(repo)): p.read_text() for p in sorted(repo.rglob("*.rego"))})
    return [s for s in sets if s]


def test_seed_and_repository_policies(screened: Passed) -> None:
    for modules in _policy_sets():
        engine = pyrego.Engine()
        engine.set_type_check(True)
        engine.add_policies(modules)  # compiled together: OPA accepts each set
        engine.eval_query("true")
    assert screened.count >= 9, screened.count  # the seed policies at least


def test_generated_programs(screened: Passed) -> None:
    for seed in range(400):
        pyrego_outcome(*module_case(seed))
        pyrego_outcome(*documents_case(seed))
        pyrego_outcome(*query_case(seed))
    assert screened.count >= 50, screened.count


@needs_shared(*CONFORMANCE)
def test_conformance_programs(screened: Passed) -> None:
    assert CONFORMANCE_DIR is not None
    for case in iter_cases(CONFORMANCE_DIR):
        engine = pyrego.Engine()
        engine.set_type_check(True)
        try:
            if case.data is not None:
                engine.add_data(case.data)
            engine.add_policies({f"test-{i}.rego": m for i, m in enumerate(case.modules)})
            engine.eval_query(case.query)
        except pyrego.RegoError:
            pass
    assert screened.count >= 500, screened.count


def _verdict(screened: Passed, body: str, rules: str = "") -> tuple[bool, list[str]]:
    """Whether the screen passes ``r`` (after the rules ``c``, ``o`` and ``rules``), and the engine's errors."""
    text = f'package p\n\nc := ["a", "b"]\n\no := {{"k": [1, 2]}}\n{rules}\nr if {{\n{body}\n}}\n'
    engine = pyrego.Engine()
    engine.set_type_check(True)
    before = screened.count
    try:
        engine.add_policy("p.rego", text)
        engine.eval_rule("data.p.r")
        errors: list[str] = []
    except pyrego.RegoError as exc:
        errors = [e.message for e in getattr(exc, "errors", [exc])]
    return screened.count > before, errors


@pytest.mark.parametrize(
    "body",
    [
        'input.method == "GET"',
        "time.now_ns() - input.t < 10",
        'input.role in ["admin", "ops"]',
        "not input.x in data.p.c",
        "data.p.c[0] == input.y",
        "x := input.a\n    x == 1",
        'some v in data.p.c\n    startswith(v, "a")',
        'h := time.clock([time.now_ns(), "UTC"])[0]\n    h > 1',
        'count([y | y := input.a[_]; y.s == "x"]) > 0',
        "some k in input.ks\n    data.p.o[k][_] > 1",
        "input.items[i].x == 1\n    i > 0",
        'x := [input.a, "b"]\n    x[0] == 1',
        "x = input.a\n    x == 1",
        "some k, v in input.a\n    v == k",
        'some x in [1, 2]\n    x > 1',
        'some i, x in ["a"]\n    i > 0\n    startswith(x, "a")',
    ],
)
def test_bodies_the_screen_passes(screened: Passed, body: str) -> None:
    assert _verdict(screened, body) == (True, [])


@pytest.mark.parametrize(
    ("body", "rules"),
    [
        ("f(input.a)", "\nf(x) := x\n"),
        ("f(input.a, 1)", "\nf(x, y) := z if {\n    z := count(x) + y\n    z > count(x)\n}\n"),
        ('g(input.a) == "b"', '\ng(x) := upper(x)\n'),
        ('h(input.a, input.b)', '\nh(r, m) if {\n    r.method in {m, "*"}\n    glob.match(r.path, ["/"], m)\n}\n'),
        ("count(s(input.p)) > 0", '\ns(p) := [x | some x in split(p, "/"); x != ""]\n'),
        ("w(input.ns)", '\nw(ns) if not time.weekday(ns) in {"Saturday", "Sunday"}\n'),
    ],
)
def test_functions_the_screen_passes(screened: Passed, body: str, rules: str) -> None:
    assert _verdict(screened, body, rules) == (True, [])


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('input.x == 1 + "a"', "plus: invalid argument(s)"),
        ('startswith(1, "a")', "startswith: invalid argument(s)"),
        ("data.p.c.foo == 1", "undefined ref: data.p.c.foo"),
        ("data.p.c[0] == 1", "match error"),
        ("some v in data.p.c\n    v == 1", "match error"),
        ('x := 1\n    startswith(x, "a")', "startswith: invalid argument(s)"),
        ('data.p.o.k[_] == "a"', "match error"),
        ("count([y | y := data.p.c[_]; y + 1 > 1]) > 0", "plus: invalid argument(s)"),
        ('x := [input.a, "b"]\n    x[1] == 1', "match error"),
        ("some i in data.p.c\n    data.p.o[i] == 1", "match error"),
    ],
)
def test_failing_bodies_go_to_the_full_check(screened: Passed, body: str, error: str) -> None:
    passed, errors = _verdict(screened, body)
    assert not passed
    assert any(e.startswith(error) for e in errors), errors


@pytest.mark.parametrize(
    ("body", "rules", "error"),
    [
        ("g(1)", "\ng(x) := upper(x)\n", "data.p.g: invalid argument(s)"),
        ("h(1)", '\nh(x) if x == "a"\n', "data.p.h: invalid argument(s)"),
        ('k(1) == 1', "\nk(x) := count(x)\n", "data.p.k: invalid argument(s)"),
        ('k(input.a) == "b"', "\nk(x) := count(x)\n", "match error"),
    ],
)
def test_failing_function_calls_go_to_the_full_check(screened: Passed, body: str, rules: str, error: str) -> None:
    passed, errors = _verdict(screened, body, rules)
    assert not passed
    assert any(e.startswith(error) for e in errors), errors


@pytest.mark.parametrize(
    ("body", "rules"),
    [
        ("[x, y] = input.pair\n    x == y", ""),
        ('[a, b] := split(input.s, ":")\n    a == b', ""),
        ("input.a == 1 with input as {}", ""),
        ("f(input.a)", "\nf(x) := z if {\n    z := count(x) + count(x)\n}\n"),
        ("every x in input.a { x > 1 }", ""),
    ],
)
def test_bodies_the_screen_leaves_to_the_full_check(screened: Passed, body: str, rules: str) -> None:
    assert _verdict(screened, body, rules) == (False, [])
