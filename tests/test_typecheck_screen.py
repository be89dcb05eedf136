"""The type checker's body screen (pyrego.typecheck.screen) agrees with the full check.

A rule body the screen passes is not lowered or checked. Here every such
body is checked in full as well, on the seed benchmark policies, the
repositories under tests/repos and the generated programs of
test_typecheck_opa (many of them ill-typed): the full check must find no
error in it and make as many variables as the screen counted (later rules'
variables keep their numbers in messages). What the screen refuses, and
what it passes, is checked on hand-written bodies too.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
import pyrego.typecheck as tc  # noqa: E402
from pyrego.typecheck import rules as tc_rules  # noqa: E402
from pyrego.typecheck.screen import ground_head  # noqa: E402
from shared_material import SEED, need_shared  # noqa: E402
from test_typecheck_opa import documents_case, module_case, pyrego_outcome  # noqa: E402

ROOT = Path(__file__).resolve().parent


@pytest.fixture
def screened(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Checks every body the screen passes in full too; lists the rules it passed.
    (The whole-program screen, which would pass most of these programs before
    any rule is screened, is off: test_typecheck_fast holds it to the full check.)"""
    monkeypatch.setattr(tc, "FAST_SCREEN", False)
    passed: list[Any] = []
    original = tc_rules.ProgramChecker.check_rule

    def check_rule(self: tc_rules.ProgramChecker, pkg: tuple[str, ...], rule: Any, args: Any) -> None:
        if args is None and ground_head(rule.head):
            screened = self.screen.rule(rule)
            if screened is not None:
                made, tpe = screened
                before = self.lowerer.counter
                lowered = self.lowerer.rule(rule, args)
                env, errors = tc_rules.Checker().check_body(self.rules_env.wrap(), lowered.body)
                assert not errors, f"{rule.location}: screened, but {errors}"
                assert self.lowerer.counter - before == made, f"{rule.location}: {self.lowerer.counter - before} variables, screen counted {made}"
                assert str(tc_rules.rule_type(env, lowered)[1]) == str(tpe), f"{rule.location}: typed {tpe}"
                self.lowerer.counter = before
                passed.append(rule)
        original(self, pkg, rule, args)

    monkeypatch.setattr(tc_rules.ProgramChecker, "check_rule", check_rule)
    return passed


def _policy_sets() -> list[dict[str, str]]:
    seed = need_shared(*SEED, "policies")
    sets = [{p.name: p.read_text()} for p in sorted(seed.glob("*.rego"))]
    for repo in sorted((ROOT / "repos").iterdir()):
        if repo.is_dir() and not repo.name.endswith("_v0"):
            sets.append({str(p.relative_to(repo)): p.read_text() for p in sorted(repo.rglob("*.rego"))})
    return sets


def test_seed_and_repository_policies(screened: list[Any]) -> None:
    for modules in _policy_sets():
        engine = pyrego.Engine()
        engine.set_type_check(True)
        engine.add_policies(modules)  # compiled together: OPA accepts each set
        engine.eval_query("true")
    assert len(screened) >= 20, len(screened)


def test_generated_programs(screened: list[Any]) -> None:
    for seed in range(300):
        pyrego_outcome(*module_case(seed))
        pyrego_outcome(*documents_case(seed))
    assert len(screened) >= 300, len(screened)


def _screen(monkeypatch: pytest.MonkeyPatch, body: str) -> tuple[int | None, list[str]]:
    """What the screen says of the body of ``r`` (after the rules ``c`` and ``f``), and the engine's errors."""
    text = f'package p\n\nc := ["a", "b"]\n\nf(x) := x\n\nr if {{\n{body}\n}}\n'
    monkeypatch.setattr(tc, "FAST_SCREEN", False)
    engine = pyrego.Engine()
    engine.set_type_check(True)
    seen: list[int | None] = []
    original = tc_rules.BodyScreen.rule

    def screen_rule(self: Any, rule: Any) -> tuple[int, Any] | None:
        found = original(self, rule)
        seen.append(found[0] if found is not None else None)
        return found

    monkeypatch.setattr(tc_rules.BodyScreen, "rule", screen_rule)
    try:
        engine.add_policy("p.rego", text)
        engine.eval_rule("data.p.r")
        errors: list[str] = []
    except pyrego.RegoError as exc:
        errors = [e.message for e in getattr(exc, "errors", [exc])]
    return seen[-1], errors


@pytest.mark.parametrize(
    ("body", "made"),
    [
        ('input.method == "GET"', 0),
        ('startswith(input.path, "/api")', 1),  # the ref is bound to a variable first
        ("time.now_ns() - input.t < 10", 3),  # two nested calls' outputs and a ref
        ('input.role in ["admin", "ops"]', 1),
        ("not input.x in data.p.c", 2),
        ("data.p.c[0] == input.y", 0),
        ("count(input.items) > 0\n    input.ok == true", 2),
        ("x := input.a\n    x == 1", 0),
        ('some v in data.p.c\n    startswith(v, "a")', 1),  # the key variable
        ("x := count(input.a)\n    x > 1", 2),  # the call's output, the ref bound first
    ],
)
def test_bodies_the_screen_passes(monkeypatch: pytest.MonkeyPatch, screened: list[Any], body: str, made: int) -> None:
    assert _screen(monkeypatch, body) == (made, [])
    assert [r.head.ref.head.name for r in screened][-1] == "r"  # and the full check agrees (the fixture)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('input.x == 1 + "a"', "plus: invalid argument(s)"),
        ('startswith(1, "a")', "startswith: invalid argument(s)"),
        ("data.p.c.foo == 1", "undefined ref: data.p.c.foo"),
        ('data.p.c[0] == 1', "match error"),
        ("count(data.p.f) > 0", "function data.p.f used as reference, not called"),
        ("some v in data.p.c\n    v == 1", "match error"),
        ('x := 1\n    startswith(x, "a")', "startswith: invalid argument(s)"),
        ("some v in data.p.c[0]\n    v == 1", "undefined ref: data.p.c[0][__local"),
    ],
)
def test_failing_bodies_go_to_the_full_check(monkeypatch: pytest.MonkeyPatch, body: str, error: str) -> None:
    made, errors = _screen(monkeypatch, body)
    assert made is None
    assert any(e.startswith(error) for e in errors), errors


@pytest.mark.parametrize(
    "body",
    [
        "x = input.a\n    x == 1",
        'some v in input.xs\n    v.name == "a"',
        "some k, v in input.a\n    v == k",
        'h := time.clock([1, "UTC"])[0]\n    h > 1',
        "input.a == 1 with input as {}",
        "count([y | y := input.a[_]]) > 0",
    ],
)
def test_bodies_the_screen_leaves_to_the_full_check(monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    assert _screen(monkeypatch, body) == (None, [])


def test_negated_wildcards_are_left_to_the_safety_check() -> None:
    """``not input.c[_]`` is unsafe (OPA: var _ is unsafe), which OPA reports
    before any type error: the screen must not pass the body."""
    text = "package p\n\n# METADATA\n# schemas:\n#   - input: {\"type\": \"object\", \"properties\": {\"c\": {\"type\": \"array\"}}}\nr0 if upper(input) == \"A\"\n\nr1 if {\n\tnot input.c[_]\n}\n"
    engine = pyrego.Engine()
    engine.set_type_check(True)
    with pytest.raises(pyrego.RegoUnsafeVarError) as info:
        engine.add_policy("p.rego", text)
        engine.eval_query("data.p")
    assert str(info.value) == "p.rego:9: rego_unsafe_var_error: var _ is unsafe"
