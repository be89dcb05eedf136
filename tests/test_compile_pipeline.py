"""The compile pipeline: its stages in order, their timings, and where errors
stop it; the same for a query's stages."""

from __future__ import annotations

import pytest

from opa_oracle import Oracle
from pyrego import Engine
from pyrego.compile.pipeline import (
    MODULE_STAGES,
    QUERY_STAGES,
    STAGES,
    CompileState,
    QueryState,
    compile_modules,
    compile_program,
    resolve_query,
    run,
)
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module, parse_query


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


QUERY_POLICY = "package p\na := 1\n"


def _query_state(query: str, *, strict: bool = False, metrics: dict[str, int] | None = None) -> QueryState:
    tree = compile_modules([parse_module(QUERY_POLICY, "p.rego", rego_v1=True)], strict=strict)
    return QueryState(parse_query(query, "query", rego_v1=True), tree, metrics=metrics)


def test_query_stage_order_and_metric_names() -> None:
    assert [s.name for s in QUERY_STAGES] == [
        "check_keyword_overrides",
        "check_declarations",
        "resolve_refs",
        "check_undefined_funcs",
        "check_deprecated_builtins",
    ]
    assert all(s.metric == "query_compile_stage_" + s.name for s in QUERY_STAGES)
    metrics: dict[str, int] = {}
    state = run(_query_state("x := data.p.a", metrics=metrics), QUERY_STAGES)
    assert sorted(metrics) == sorted(f"timer_{s.metric}_ns" for s in QUERY_STAGES)
    assert state.names == {"x#0": "x"} and state.failure is None


#: (query, strict mode, the stage that fails, its message)
QUERY_FAILURES = [
    ("input := 1", True, "check_keyword_overrides", "variables must not shadow input (use a different variable name)"),
    ("x := 1; x := 2", False, "check_declarations", "var x assigned above"),
    ("x := foo(1)", False, "check_undefined_funcs", "undefined function foo"),
    ("count := 1; count([1])", False, "check_undefined_funcs", "undefined function count"),  # (a hidden call)
    ("any([true])", True, "check_deprecated_builtins", "deprecated built-in function calls in expression: any"),
]


@pytest.mark.parametrize(("query", "strict", "stage", "message"), QUERY_FAILURES)
def test_a_failed_query_stage_stops_the_query_pipeline(query: str, strict: bool, stage: str, message: str) -> None:
    ran: list[str] = []
    stages = [s._replace(run=lambda state, s=s: (ran.append(s.name), s.run(state))[1]) for s in QUERY_STAGES]
    state = _query_state(query, strict=strict)
    with pytest.raises(RegoError) as info:
        run(state, stages)
    assert ran[-1] == stage and state.failure is info.value
    assert [e.message for e in info.value.errors] == [message]  # type: ignore[attr-defined]
    # The engine's queries fail the same way.
    engine = Engine()
    engine.set_strict(strict)
    engine.add_policy("p.rego", QUERY_POLICY)
    with pytest.raises(RegoError) as by_engine:
        engine.eval_query(query)
    assert (by_engine.value.code, by_engine.value.message) == (info.value.code, message)
    with pytest.raises(RegoError):
        resolve_query(parse_query(query, "query", rego_v1=True), state.tree)


@pytest.mark.parametrize(("query", "message"), [(q, m) for q, strict, _, m in QUERY_FAILURES if not strict])
def test_query_stage_errors_are_opas(oracle: Oracle, query: str, message: str) -> None:
    engine = Engine()
    engine.add_policy("p.rego", QUERY_POLICY)
    with pytest.raises(RegoError) as info:
        engine.eval_query(query)
    err = info.value
    theirs = oracle.evaluate({"p.rego": QUERY_POLICY}, query)
    assert err.location is not None
    assert (theirs.error_code, theirs.error_message) == (err.code, f"1 error occurred: {err.location.row}:{err.location.col}: {err.code}: {message}")
