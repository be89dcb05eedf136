"""Policies, rows and the rows each policy accepts, for the database filter tests.

The rows are a tickets table and a users table with NULLs, mixed case,
LIKE wildcards and quotes in them. A case's *accepted* rows are those for
which the policy, evaluated by pyrego with that row as input, says yes:

- ``pairs``: the (ticket, user) pairs of the cross join (every pair; for a
  policy that reads only tickets, the tickets alone);
- ``related``: each ticket with its assignee's user row (all NULL where it
  has none), the way an ORM reaches a related table through a foreign key.

Cases are the seeded generated policies of :mod:`filter_policies` and
hand-written ones aimed at NULLs, types and string tests.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from filter_policies import DATA, INPUT, generate
from pyrego import UNDEFINED, Engine
from pyrego.filters import FilterError, compile_condition
from pyrego.filters.policy_condition import policy_condition

QUERY = "data.filters.include"

USERS: list[dict[str, Any]] = [
    {"id": "bob", "name": "Bob", "team": "red"},
    {"id": "alice", "name": "alice", "team": "blue"},
    {"id": "carol", "name": "carol", "team": None},
    {"id": "dave", "name": "it's", "team": "green"},
]
NO_USER = {"id": None, "name": None, "team": None}
_USER_BY_ID = {u["id"]: u for u in USERS}


def _tickets() -> list[dict[str, Any]]:
    rng = random.Random(20240611)
    pools: dict[str, list[Any]] = {
        "tenant": [1, 3, 3, 4, 10, None],
        "prio": [-1, 0, 1, 2.5, 3, 4, 10, 1.5, None],
        "status": ["open", "closed", "triage", "Open", "open ", "bob", None],
        "assignee": ["bob", "alice", "carol", "dave", None],
        "title": ["a_b", "axb", "100%", "1000", "it's", "x\\y", "Bob", "bob", "alice in wonderland", "closed", "", None],
        "open": [True, False, None],
    }
    rows = []
    for i in range(1, 49):
        row: dict[str, Any] = {"id": i}
        for column, pool in pools.items():
            row[column] = rng.choice(pool)
        rows.append(row)
    # A few rows without any NULL for sure (OPA's SQL is compared on those).
    for i, status in enumerate(["open", "closed", "triage", "bob"], start=49):
        rows.append({"id": i, "tenant": 3, "prio": 2.5 if i % 2 else 4, "status": status, "assignee": "bob", "title": "a_b", "open": True})
    return rows


TICKETS = _tickets()

# Hand-written cases: NULLs, negation, types, string tests, joins, always/never.
HAND_WRITTEN: dict[str, str] = {
    "ne_keeps_null": 'include if input.tickets.status != "closed"',
    "not_eq_keeps_null": 'include if not input.tickets.status == "closed"',
    "lt_keeps_null": "include if input.tickets.prio < 3",
    "lte_keeps_null": "include if input.tickets.prio <= 2.5",
    "not_gt": "include if not input.tickets.prio > 2",
    "gte_drops_null": "include if input.tickets.prio >= 1",
    "eq_null": "include if input.tickets.status == null",
    "ne_null": "include if input.tickets.title != null",
    "bool_ne_false": "include if input.tickets.open != false",
    "not_bool": "include if not input.tickets.open == true",
    "int_column_fraction_eq": "include if input.tickets.tenant == 2.5",
    "int_column_fraction_lt": "include if input.tickets.tenant < 3.5",
    "int_column_fraction_gte": "include if input.tickets.tenant >= 3.5",
    "int_column_fraction_in": "include if input.tickets.tenant in [1.5, 3.0, 4]",
    "string_vs_number": 'include if input.tickets.tenant == "3"',
    "number_lt_string": 'include if input.tickets.prio < "a"',
    "string_gt_number": "include if input.tickets.status > 10",
    "in_with_null": 'include if input.tickets.status in ["open", null]',
    "not_in_with_null": 'include if not input.tickets.status in ["open", null]',
    "in_mixed_types": 'include if input.tickets.status in ["open", 1, true]',
    "not_in": 'include if not input.tickets.status in {"open", "triage"}',
    "in_empty": "include if input.tickets.status in []",
    "not_in_empty": "include if not input.tickets.status in []",
    "startswith_case": 'include if startswith(input.tickets.title, "B")',
    "contains_underscore": 'include if contains(input.tickets.title, "_")',
    "endswith_percent": 'include if endswith(input.tickets.title, "%")',
    "contains_backslash": 'include if contains(input.tickets.title, "\\\\")',
    "contains_quote": "include if contains(input.tickets.title, \"'\")",
    "not_startswith": 'include if not startswith(input.tickets.title, "a")',
    "startswith_number_column": 'include if startswith(input.tickets.tenant, "1")',
    "column_vs_column": "include if input.tickets.prio >= input.tickets.tenant",
    "column_lt_column": "include if input.tickets.prio < input.tickets.tenant",
    "not_column_eq_column": "include if not input.tickets.prio == input.tickets.tenant",
    "join": "include if { input.tickets.assignee == input.users.id; input.users.team in input.user.teams }",
    "join_ne": "include if { input.tickets.assignee != input.users.id; input.users.name == \"alice\" }",
    "join_null_team": "include if { input.tickets.assignee == input.users.id; input.users.team == null }",
    "join_or_own": "include if input.tickets.assignee == input.users.id\ninclude if input.tickets.tenant == 4",
    "not_join": "include if { not input.tickets.assignee == input.users.id; input.users.id == \"carol\" }",
    "always": 'include if input.user.role == "admin"',
    "never": 'include if input.user.role == "nobody"',
}


@dataclass
class DbCase:
    name: str
    policy: str
    input: dict[str, Any]
    data: dict[str, Any] = field(default_factory=lambda: DATA)

    @property
    def tables(self) -> list[str]:
        return ["tickets", "users"] if "input.users" in self.policy else ["tickets"]

    @property
    def unknowns(self) -> list[str]:
        return [f"input.{t}" for t in self.tables]


# A lone existence test (`y := input.t.c`) is IS NOT NULL in the filter, but
# holds in Rego for a null column: the condition tree cannot tell them apart.
_LONE_EXISTENCE = re.compile(r"\by := input\.")


def cases(generated: int) -> list[DbCase]:
    """The hand-written cases, then the first ``generated`` generated policies
    (those with a lone existence test left out)."""
    out = [DbCase(f"hand:{name}", "package filters\n\n" + body + "\n", INPUT) for name, body in HAND_WRITTEN.items()]
    for seed in range(generated):
        case = generate(seed)
        if _LONE_EXISTENCE.search(case.policy):
            continue
        out.append(DbCase(f"gen:{seed}", case.policy, case.input, case.data))
    return out


@dataclass
class Expected:
    """What pyrego makes of a case: its filter (or refusal) and the accepted rows."""

    engine: Engine
    condition: Any  # the filter (policy_condition), or None with `refusal` set
    opa_condition: Any  # OPA's (compile_condition): differs where OPA negates a mirrored comparison
    refusal: str | None
    pairs: set[tuple[Any, ...]]
    related: set[int]

    @property
    def opa_quirk(self) -> bool:
        """OPA's filter differs (it negates ``<value> < <column>`` instead of mirroring it)."""
        return self.condition != self.opa_condition


def _accepts(engine: Engine, case: DbCase, ticket: dict[str, Any], user: dict[str, Any] | None) -> bool:
    doc = dict(case.input)
    doc["tickets"] = ticket
    if user is not None:
        doc["users"] = user
    value = engine.eval_rule(QUERY, input=doc)
    return value is not UNDEFINED and value is not False


@cache
def _expected_by_key(name: str, policy: str) -> Expected:
    case = _BY_NAME[name]
    engine = Engine()
    engine.add_policy("filters.rego", case.policy)
    engine.add_data(case.data)
    opa_condition = None
    try:
        condition, _ = policy_condition(engine, QUERY, case.input, unknowns=case.unknowns)
        opa_condition, _ = compile_condition(engine, QUERY, case.input, unknowns=case.unknowns)
        refusal = None
    except FilterError as exc:
        condition, refusal = None, exc.message
    pairs: set[tuple[Any, ...]] = set()
    related: set[int] = set()
    if refusal is None:
        with_users = "users" in case.tables
        for t in TICKETS:
            if with_users:
                pairs.update((t["id"], u["id"]) for u in USERS if _accepts(engine, case, t, u))
                if _accepts(engine, case, t, _USER_BY_ID.get(t["assignee"], NO_USER)):
                    related.add(t["id"])
            elif _accepts(engine, case, t, None):
                pairs.add((t["id"],))
                related.add(t["id"])
    return Expected(engine, condition, opa_condition, refusal, pairs, related)

_BY_NAME: dict[str, DbCase] = {}


def expected(case: DbCase) -> Expected:
    """pyrego's filter and the accepted rows of ``case`` (computed once)."""
    _BY_NAME[case.name] = case
    return _expected_by_key(case.name, case.policy)


def no_nulls(ticket_id: int, user_id: str | None = None) -> bool:
    """Whether the ticket (and the user) have no NULL column."""
    t = next(t for t in TICKETS if t["id"] == ticket_id)
    if any(v is None for v in t.values()):
        return False
    return user_id is None or all(v is not None for v in _USER_BY_ID[user_id].values())
