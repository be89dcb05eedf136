"""Partial evaluation (Engine.eval_partial / pyrego.partial).

The property test: for random small policies and random values of the
unknowns, the residual queries (with their support rules) decide as the
original policy does. The residual queries are written out as Rego and
evaluated by the engine, next to the original policy (a residual query may
refer back to a rule OPA does not inline, such as one with an ``else``).

The other tests pin down the shapes of results that OPA produces (where the
oracle cannot be asked directly, the filters built on them are compared with
OPA's Compile API in tests/test_filters_opa.py).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from filter_policies import INPUT, generate
from pyrego import Engine
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module
from pyrego.partial import PartialResult
from pyrego.partial.output import line_text, rule_text
from pyrego.runtime.values import UNDEF

QUERY = "data.filters.include"

# -- random policies ---------------------------------------------------------------------------

_EXTRA = [
    "input.tickets.prio + 1 > input.limit",
    "count(input.tickets.tags) > 1",
    'input.tickets.tags[_] == "red"',
    'every t in input.tickets.tags { t != "bad" }',
    'count([t | some t in input.tickets.tags; t == "red"]) > 0',
    "input.tickets.status in allowed",
    "input.tickets.status in tagged",
    "level(input.tickets.prio) == \"high\"",
    "input.tickets.title == sprintf(\"%s-%d\", [input.user.name, input.limit])",
    "abs(input.tickets.prio) >= 2",
    "not input.tickets.open == true",
    "object.get(input.tickets, \"status\", \"none\") == \"open\"",
    "is_string(input.tickets.title)",
    "input.tickets.prio == input.tickets.tenant",
    "x := input.tickets.title; x != \"\"",
]

_HELPERS = """
default level(_) := "low"
level(p) := "high" if p > 3
allowed contains s if some s in data.roles[input.user.role]
tagged contains t if some t in input.tickets.tags
"""


def random_policy(seed: int) -> str:
    """A filter policy from the shared generator, with some constructs a filter cannot hold added."""
    rng = random.Random(seed)
    policy = generate(seed).policy
    extra = []
    for _ in range(rng.randint(0, 2)):
        extra.append("include if { " + "; ".join(rng.sample(_EXTRA, rng.randint(1, 2))) + " }")
    if rng.random() < 0.15:
        extra.append('include := "yes" if { input.tickets.status == "triage" } else := false')
    return policy + "\n".join(extra) + "\n" + _HELPERS


ROW = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from([1, 2, 3]),
        "tenant": st.sampled_from([1, 3, 4, 3.0]),
        "prio": st.sampled_from([-1, 0, 1, 2.5, 3, 4, 10, "3", None]),
        "status": st.sampled_from(["open", "closed", "triage", "x"]),
        "assignee": st.sampled_from(["bob", "alice", "a_b"]),
        "title": st.sampled_from(["open", "bob-4", "it's", "100%", "a_bc", "", 3]),
        "open": st.sampled_from([True, False, None]),
        "tags": st.lists(st.sampled_from(["red", "blue", "bad"]), max_size=3),
    },
)


def _engine(policy: str) -> Engine:
    eng = Engine()
    eng.add_policy("p.rego", policy)
    eng.add_data(generate(0).data)
    return eng


def _decides(value: Any) -> bool:
    """A query ``data.filters.include`` holds when the value is defined and not false."""
    return value is not UNDEF and value is not False


def residual_engine(original: str, result: PartialResult) -> Engine:
    """The original policy, the residual queries as rule ``data.residual.allow`` and the support modules."""
    lines = ["package residual", ""]
    for q in result.queries:
        lines.append("allow if {")
        lines += ["\t" + line_text(e) for e in q] or ["\ttrue"]
        lines.append("}")
    modules = {"p.rego": original, "residual.rego": "\n".join(lines) + "\n"}
    for i, m in enumerate(result.support):
        modules[f"support{i}.rego"] = m.text
    eng = Engine()
    eng.add_policies(modules)
    eng.add_data(generate(0).data)
    return eng


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), rows=st.lists(ROW, min_size=1, max_size=4))
def test_residual_queries_decide_as_the_original(seed: int, rows: list[dict[str, Any]]) -> None:
    policy = random_policy(seed)
    eng = _engine(policy)
    known = dict(INPUT)
    result = eng.eval_partial(QUERY, unknowns=["input.tickets"], input=known)
    residual = residual_engine(policy, result)
    for row in rows:
        full = {**known, "tickets": row}
        try:
            want = _decides(eng.eval_rule(QUERY, input=full))
        except RegoError:
            assume(False)
        got = residual.eval_rule("data.residual.allow", input=full)
        assert _decides(got) == want, f"{policy}\nrow: {row}\nresidual: {result.query_texts}\nsupport: {result.support_texts}"


# -- shapes -----------------------------------------------------------------------------------


def _partial(policy: str, **kw: Any) -> PartialResult:
    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\n" + policy)
    return eng.eval_partial(QUERY, **{"unknowns": ["input.tickets"], **kw})


def test_known_parts_are_folded() -> None:
    r = _partial('include if { input.tickets.owner == input.user; input.mode == "strict"; count(input.tags) > 1 }', input={"user": "bob", "mode": "strict", "tags": [1, 2]})
    assert r.query_texts == ['input.tickets.owner = "bob"']
    assert _partial('include if { input.tickets.owner == input.user; input.mode == "strict" }', input={"user": "bob", "mode": "lax"}).queries == []


def test_rules_and_functions_are_inlined() -> None:
    r = _partial("include if is_owner\nis_owner if input.tickets.owner == input.user\nis_owner if f(input.tickets.level)\nf(x) if x > 3", input={"user": "bob"})
    assert sorted(r.query_texts) == ['input.tickets.level > 3', 'input.tickets.owner = "bob"']


def test_iteration_over_known_values() -> None:
    r = _partial("include if { some r in input.roles; input.tickets.role == r }", input={"roles": ["a", "b"]})
    assert r.query_texts == ['input.tickets.role = "a"', 'input.tickets.role = "b"']


def test_copy_propagation_and_existence() -> None:
    assert _partial("include if { x := input.tickets.a; x > 3 }").query_texts == ["input.tickets.a > 3"]
    assert _partial("include if { x := input.tickets.a }").query_texts == ["__local0__ = input.tickets.a"]


def test_negation_is_expanded() -> None:
    r = _partial("include if not both\nboth if { input.tickets.a == 1; input.tickets.b == 2 }")
    assert r.query_texts == ["not input.tickets.a = 1", "not input.tickets.b = 2"]


def test_default_rules_become_support_rules() -> None:
    r = _partial("default include := false\ninclude if input.tickets.a == 1")
    assert r.query_texts == ["data.partial.filters.include"]
    assert r.support_texts == ['package partial.filters\n\ndefault include := false\ninclude := true if {\n\tinput.tickets.a = 1\n}\n']


def test_always_and_never() -> None:
    assert _partial("include if true").queries == [()]
    assert _partial("include if false").queries == []


def test_unknowns_from_metadata() -> None:
    eng = Engine()
    eng.add_policy(
        "p.rego",
        "package filters\n\n# METADATA\n# compile:\n#   unknowns: [input.tickets]\ninclude if input.tickets.a == input.x\n",
    )
    r = eng.eval_partial(QUERY, unknowns=None, input={"x": 1})
    assert r.query_texts == ["input.tickets.a = 1"]


def test_whole_input_unknown_by_default() -> None:
    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\ninclude if input.tickets.a == input.x\n")
    assert eng.eval_partial(QUERY).query_texts == ["input.tickets.a = input.x"]


def test_query_variables_are_kept() -> None:
    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\nlevel := input.tickets.a + 1\n")
    r = eng.eval_partial("x := data.filters.level; x > 3", unknowns=["input.tickets"])
    assert r.query_texts == ["x = input.tickets.a + 1; x > 3"]


def test_bad_unknowns() -> None:
    from pyrego.partial import UnknownsError

    eng = Engine()
    eng.add_policy("p.rego", "package filters\n\ninclude if true\n")
    with pytest.raises(UnknownsError):
        eng.eval_partial(QUERY, unknowns=["foo.bar"])


def test_a_body_line_starting_with_a_minus_sign_keeps_its_meaning() -> None:
    # `input.p < 1` then a line `-1 <= input.p` would read as one expression.
    text = "package r\n\nallow if {\n\tinput.p < 1; -1 <= input.p\n}\n"
    rule = parse_module(text).rules[0]
    printed = "package r\n\n" + rule_text(rule) + "\n"
    assert "\t(-1 <= input.p)\n" in printed
    again = parse_module(printed).rules[0]
    assert len(again.body) == 2
    engine = Engine()
    engine.add_policy("r.rego", printed)
    assert engine.eval_rule("data.r.allow", input={"p": 1}) is UNDEF
    assert engine.eval_rule("data.r.allow", input={"p": 0}) is True


def test_residual_line_starting_with_a_negative_number_reads_back() -> None:
    """A residual unification whose left side is a negative number (``-1 =
    input.tickets.prio``) cannot be put in parentheses: it is written with
    its sides swapped, and the residual module parses and decides as the
    original (found by the property test above, seed 49917)."""
    policy = random_policy(49917)
    eng = _engine(policy)
    result = eng.eval_partial(QUERY, unknowns=["input.tickets"], input=dict(INPUT))
    lines = [line_text(e) for q in result.queries for e in q]
    assert "input.tickets.prio = -1" in lines
    residual = residual_engine(policy, result)
    for prio in (-1, 2, 0, "-1"):
        row = {"prio": prio}
        full = {**INPUT, "tickets": row}
        assert _decides(residual.eval_rule("data.residual.allow", input=full)) == _decides(eng.eval_rule(QUERY, input=full))
