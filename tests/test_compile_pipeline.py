"""The compile pipeline: its stages in order, their timings, and where errors stop it."""

from __future__ import annotations

import pytest

from pyrego.compile.pipeline import MODULE_STAGES, STAGES, CompileState, compile_program, run
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module


def _compile(text: str, **options: object) -> object:
    module = parse_module(text, "p.rego", rego_v1=True)
    return compile_program([module], [text], **options)  # type: ignore[arg-type]


def test_stage_order_and_metric_names() -> None:
    assert [s.name for s in STAGES] == [
        "early_checks",
        "resolve_refs",
        "check_rule_conflicts",
        "check_undefined_funcs",
        "check_safety_rule_heads",
        "check_recursion",
        "check_types",
        "generate_code",
        "check_deprecated_builtins",
    ]
    assert STAGES[: len(MODULE_STAGES)] == MODULE_STAGES
    assert all(s.metric == "compile_stage_" + s.name for s in STAGES)


def test_metrics_time_every_stage() -> None:
    metrics: dict[str, int] = {}
    _compile("package p\nallow if input.x == 1\n", metrics=metrics, type_check=True)
    assert sorted(metrics) == sorted(f"timer_{s.metric}_ns" for s in STAGES)


def test_a_failed_stage_stops_the_pipeline() -> None:
    ran: list[str] = []
    stages = [s._replace(run=lambda state, s=s: (ran.append(s.name), s.run(state))[1]) for s in STAGES]
    text = "package p\na := 1\na contains 2\nb if c\nc if b\n"
    state = CompileState([parse_module(text, "p.rego", rego_v1=True)], texts=[text])
    with pytest.raises(RegoError) as info:
        run(state, stages)
    assert ran == ["early_checks", "resolve_refs", "check_rule_conflicts"]
    assert state.failure is info.value
    assert [str(e.message) for e in info.value.errors] == ["conflicting rules data.p.a found"]  # type: ignore[attr-defined]


def test_recursion_is_reported_after_the_earlier_stages_pass() -> None:
    with pytest.raises(RegoError) as info:
        _compile("package p\nb if c\nc if b\n")
    assert [e.message for e in info.value.errors] == [  # type: ignore[attr-defined]
        "rule data.p.b is recursive: data.p.b -> data.p.c -> data.p.b",
        "rule data.p.c is recursive: data.p.c -> data.p.b -> data.p.c",
    ]
