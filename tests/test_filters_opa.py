"""Data filters (pyrego.filters) against OPA's Compile API (the oracle's compile_filters).

Every case is compiled by both, for all four SQL dialects and four UCAST
dialects, and must give byte-identical SQL, equal UCAST, or the same refusal
(error code and message). Generated policies come from
:mod:`filter_policies` (seeded: the same policies every run).

Where OPA's own answer varies between runs (it orders rules with the same
indexed value by iterating a Go map), the comparison asks OPA again, on fresh
engines, and accepts pyrego's answer if OPA gives it too; the tests count
how often that was needed.

``PYREGO_FILTER_CASES`` sets the number of generated policies (default 150).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from filter_policies import Case, generate
from pyrego import Engine
from pyrego.filters import ALWAYS, Compound, FieldCondition, FieldRef, FilterError, compile_condition, compile_filters

TARGETS = [
    ("sql", "postgresql"),
    ("sql", "mysql"),
    ("sql", "sqlserver"),
    ("sql", "sqlite"),
    ("ucast", "all"),
    ("ucast", "minimal"),
    ("ucast", "prisma"),
    ("ucast", "linq"),
]
GENERATED = int(os.environ.get("PYREGO_FILTER_CASES", "150"))
QUERY = "data.filters.include"


def _opa(cls: Any, case: Case, target: str, dialect: str, **kw: Any) -> Any:
    from opa_bindings.engine import OpaError

    eng = cls()
    try:
        eng.add_policy("p.rego", case.policy)
        eng.add_data(case.data)
        return eng.compile_filters(QUERY, case.input, unknowns=case.unknowns, target=target, dialect=dialect, **kw)
    except OpaError as exc:
        return ["error", exc.code, exc.message]
    finally:
        eng.close()


def _pyrego(case: Case, target: str, dialect: str, **kw: Any) -> Any:
    eng = Engine()
    eng.add_policy("p.rego", case.policy)
    eng.add_data(case.data)
    try:
        return compile_filters(eng, QUERY, case.input, unknowns=case.unknowns, target=target, dialect=dialect, **kw)
    except FilterError as exc:
        return ["error", exc.code, exc.message]


def _same(a: Any, b: Any) -> bool:
    # JSON text, so that 1 and 1.0 (and true and 1) stay apart.
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


RETRIES = 8
agreement = {"exact": 0, "after_retry": 0}


def check(cls: Any, case: Case, targets: list[tuple[str, str]] = TARGETS, **kw: Any) -> None:
    for target, dialect in targets:
        got = _pyrego(case, target, dialect, **kw)
        want = _opa(cls, case, target, dialect, **kw)
        if _same(got, want):
            agreement["exact"] += 1
            continue
        answers = [want] + [_opa(cls, case, target, dialect, **kw) for _ in range(RETRIES)]
        if any(_same(got, a) for a in answers):
            agreement["after_retry"] += 1
            continue
        raise AssertionError(f"{target}/{dialect} disagrees with OPA for\n{case.policy}\nOPA:    {json.dumps(want)}\npyrego: {json.dumps(got)}")


# -- generated policies ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(GENERATED))
def test_generated_policy(opa_engine: Any, seed: int) -> None:
    check(opa_engine, generate(seed))


def test_report_agreement(opa_engine: Any) -> None:
    """Runs last in this module: the counts the generated cases gave (shown with -s)."""
    total = agreement["exact"] + agreement["after_retry"]
    print(f"\nfilters agreeing with OPA: {total} ({agreement['exact']} at once, {agreement['after_retry']} after asking OPA again)")
    assert agreement["after_retry"] <= agreement["exact"]


# -- hand-written cases ---------------------------------------------------------------------------

HAND_WRITTEN = [
    "include if input.tickets.tenant == input.user.tenant\ninclude if { input.tickets.assignee == \"bob\"; input.tickets.prio > 3 }\ninclude if startswith(input.tickets.title, \"ab\")",
    "default include := false\ninclude if input.tickets.prio == 1",
    "include if input.tickets.prio == 1 else := false",
    "include if is_a\nis_a if input.tickets.prio == 1\nis_a if input.tickets.tenant == 2",
    "include if { some x in [\"a\", \"b\"]; input.tickets.status == x }",
    "include if not input.tickets.prio == 1",
    "include if not is_ab\nis_ab if { input.tickets.prio == 1; input.tickets.tenant == 2 }",
    "include if not is_ab\nis_ab if input.tickets.prio == 1\nis_ab if input.tickets.tenant == 2",
    "include if not gt3\ngt3 if input.tickets.prio > 3",
    "include if not input.tickets.prio > 3",
    "include if input.tickets.status in data.roles[input.user.role]",
    "include if { x := input.tickets.prio }",
    "include if input.tickets.prio != input.tickets.tenant",
    "include if input.tickets.title",
    "include if count(input.tickets.title) > 3",
    "include if input.tickets.title.first == 3",
    "include if input.tickets == 3",
    "include if true",
    "include if false",
    "include if { input.tickets.prio == 1 }\ninclude if true",
    'include if input.tickets.title == "tab\\there\\nnl\\u0000z\\u001a it\'s \\"q\\" \\\\"',
    'include if endswith(input.tickets.title, "a_b%c\\\\d")',
    'include if contains(input.tickets.title, "it\'s \\"q\\"")',
    'include if startswith("abc", input.tickets.title)',
    'include if "x" in input.tickets.title',
    "include if input.tickets.prio in []",
    "include if input.tickets.prio in [1, [2]]",
    'include if input.tickets.prio in [{"a": 1}]',
    "include if input.tickets.prio in [null, 1.50, -0, 1e3, false, 12345678901234567890123]",
    "include if input.tickets.prio > null",
    "include if 3 < input.tickets.prio",
    'include if input.tickets.prio == {"k": 1}',
    "include if input.tickets.prio == 100000000000000000000000",
    'include if upper(input.tickets.title) == "X"',
    "include if { every x in input.tickets.tags { x == 1 } }",
    "include if f(input.tickets.prio)\nf(x) if x == 1",
    "include if f(input.tickets.prio)\nf(x) := true if x == 1 else := false",
    "include if { not input.tickets.a; input.tickets.b == 1 }\ninclude if input.tickets.x.y == 1\ninclude if input.tickets.q",
]


@pytest.mark.parametrize("n", range(len(HAND_WRITTEN)))
def test_hand_written(opa_engine: Any, n: int) -> None:
    check(opa_engine, Case("package filters\n\n" + HAND_WRITTEN[n] + "\n", ["input.tickets"]))


def test_joins_across_two_tables(opa_engine: Any) -> None:
    policy = "package filters\n\ninclude if { input.tickets.assignee == input.users.id; input.users.name == input.user.name }\n"
    check(opa_engine, Case(policy, ["input.tickets", "input.users"]))


def test_unknowns_of_whole_input_and_none(opa_engine: Any) -> None:
    policy = "package filters\n\ninclude if input.tickets.prio > input.limit\n"
    check(opa_engine, Case(policy, ["input"]))
    check(opa_engine, Case(policy, []))


MAPPINGS: list[Any] = [
    {"tickets": {"$self": "ticket_table", "prio": "priority"}},
    {"tickets": {"title": "name"}, "other": {"a": "b"}},
    {"tickets": {"$table": "x"}},
    {"sql": {"tickets": "t"}, "tickets": {}},
    {},
    {"tickets": "x"},
    {"tickets": {"prio": 1}},
    {"tickets": {"$self": None}},
    [],
    "x",
]


@pytest.mark.parametrize("n", range(len(MAPPINGS)))
def test_mappings(opa_engine: Any, n: int) -> None:
    policy = "package filters\n\ninclude if input.tickets.prio > 3\ninclude if input.tickets.title == input.tickets.assignee\n"
    check(opa_engine, Case(policy, ["input.tickets"]), mappings=MAPPINGS[n])


@pytest.mark.parametrize("mask_rule", ["data.filters.masks", "data.filters.nope", "data.filters.number", "masks"])
def test_masks(opa_engine: Any, mask_rule: str) -> None:
    policy = (
        "package filters\n\ninclude if input.tickets.prio == 1\n"
        'masks := {"tickets": {"title": {"replace": {"value": "***"}}}, "x": [1, {"y": 2.50}], "s": {1, 2}}\n'
        "number := 3\n"
    )
    check(opa_engine, Case(policy, ["input.tickets"]), mask_rule=mask_rule)


@pytest.mark.parametrize("target,dialect", [("sql", "oracle"), ("foo", "bar"), ("ucast", "anything")])
def test_unsupported_targets(opa_engine: Any, target: str, dialect: str) -> None:
    check(opa_engine, Case("package filters\n\ninclude if input.tickets.prio == 1\n", ["input.tickets"]), [(target, dialect)])


# -- the condition tree ---------------------------------------------------------------------------


def test_condition_tree() -> None:
    eng = Engine()
    eng.add_policy(
        "p.rego",
        'package filters\n\ninclude if { input.tickets.prio > 3; input.tickets.owner == input.users.id }\ninclude if not input.tickets.title == "x"\n',
    )
    f, result = compile_condition(eng, QUERY, unknowns=["input.tickets", "input.users"])
    assert len(result.queries) == 2
    assert isinstance(f, Compound) and f.operator == "or"
    # OPA's order: the rule its index cannot place (no equality) comes first.
    first, second = f.conditions
    assert first == Compound("not", (FieldCondition("eq", "tickets.title", "x"),))
    assert second == Compound("and", (FieldCondition("gt", "tickets.prio", 3), FieldCondition("eq", "tickets.owner", FieldRef("users.id"))))


def test_condition_tree_always_and_never() -> None:
    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\ninclude if input.user == \"bob\"\n")
    assert compile_condition(eng, QUERY, {"user": "bob"}, unknowns=["input.tickets"])[0] is ALWAYS
    assert compile_condition(eng, QUERY, {"user": "eve"}, unknowns=["input.tickets"])[0] is None


def test_refusal_is_a_pyrego_error() -> None:
    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\ninclude if count(input.tickets.tags) > 1\n")
    with pytest.raises(FilterError) as info:
        compile_filters(eng, QUERY, unknowns=["input.tickets"])
    assert info.value.code == "compile_error"
    assert info.value.message == "1 error occurred: p.rego:3: pe_fragment_error: gt: nested call operand: count(input.tickets.tags)"
