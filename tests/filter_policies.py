"""A seeded generator of data filter policies (for tests/test_filters_opa.py).

Each generated case is a policy (package ``filters``, decision
``include``), the known input, base data and the unknowns, built from the
constructs filter policies use: comparisons of columns with constants or
known values (either way round), ``in`` over known collections, string
prefix/suffix/infix tests, negation, several rules, helper rules and
functions, ``some x in <known>``, ``default`` and ``else`` (which OPA
refuses), data lookups, joins across two tables, and a few shapes a filter
cannot express (refused, with OPA's message).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

COLUMNS = {
    "tickets": {"id": "num", "tenant": "num", "prio": "num", "status": "str", "assignee": "str", "title": "str", "open": "bool"},
    "users": {"id": "str", "name": "str", "team": "str"},
}

INPUT = {"user": {"name": "bob", "role": "admin", "tenant": 3, "teams": ["red", "blue"]}, "limit": 4}
DATA = {
    "roles": {"admin": ["open", "closed", "triage"], "viewer": ["open"]},
    "limits": {"admin": 5, "viewer": 2},
    "statuses": {"open": True, "closed": False},
}


@dataclass
class Case:
    policy: str
    unknowns: list[str]
    input: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(INPUT)))
    data: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(DATA)))


class _Gen:
    def __init__(self, rng: random.Random, tables: list[str]) -> None:
        self.r = rng
        self.tables = tables
        self.helpers: list[str] = []
        self.n = 0

    def col(self, kind: str | None = None, table: str | None = None) -> tuple[str, str]:
        table = table or self.r.choice(self.tables)
        cols = [c for c, k in COLUMNS[table].items() if kind is None or k == kind]
        if not cols:
            table = "tickets"
            cols = [c for c, k in COLUMNS[table].items() if kind is None or k == kind]
        c = self.r.choice(cols)
        return f"input.{table}.{c}", COLUMNS[table][c]

    def const(self, kind: str) -> str:
        r = self.r
        if kind == "num":
            return r.choice(["1", "3", "4", "10", "2.5", "1.0", "-1", "0"])
        if kind == "bool":
            return r.choice(["true", "false"])
        return json.dumps(r.choice(["open", "closed", "bob", "alice", "a_b", "100%", "it's", "x\\y"]))

    def known(self, kind: str) -> str:
        if kind == "num":
            return self.r.choice(["input.user.tenant", "input.limit", "data.limits[input.user.role]", "count(input.user.teams)"])
        if kind == "bool":
            return self.r.choice(["data.statuses.open", "true"])
        return self.r.choice(["input.user.name", "input.user.role", "data.roles.admin[0]", 'lower("BOB")'])

    def comparison(self) -> str:
        r = self.r
        col, kind = self.col()
        op = r.choice(["==", "!=", "<", "<=", ">", ">="] if kind == "num" else ["==", "!="])
        other = self.const(kind) if r.random() < 0.6 else self.known(kind)
        return f"{col} {op} {other}" if r.random() < 0.75 else f"{other} {op} {col}"

    def membership(self) -> str:
        r = self.r
        col, kind = self.col("str")
        coll = r.choice(['["open", "closed"]', '{"open", "triage"}', "data.roles[input.user.role]", "input.user.teams", "[]", "data.roles.viewer"])
        return f"{col} in {coll}"

    def pattern(self) -> str:
        col, _ = self.col("str", "tickets")
        fn = self.r.choice(["startswith", "endswith", "contains"])
        return f"{fn}({col}, {self.const('str')})"

    def known_test(self) -> str:
        return self.r.choice(
            [
                'input.user.role == "admin"',
                'input.user.role == "viewer"',
                "input.limit > 3",
                "input.user.tenant == 3",
                'not input.user.name == "bob"',
                'every t in input.user.teams { t != "green" }',
            ]
        )

    def expr(self, depth: int = 0) -> str:
        r = self.r
        roll = r.random()
        if roll < 0.32:
            return self.comparison()
        if roll < 0.45:
            return self.membership()
        if roll < 0.53:
            return self.pattern()
        if roll < 0.60:
            return self.known_test()
        if roll < 0.68:
            inner = r.choice([self.comparison, self.membership, self.pattern])()
            return f"not {inner}"
        if roll < 0.74 and depth == 0:
            return self.helper()
        if roll < 0.79 and depth == 0:
            return self.function_call()
        if roll < 0.84:
            col, kind = self.col("str", "tickets")
            self.n += 1
            return f'some s{self.n} in ["open", "triage"]; {col} == s{self.n}'
        if roll < 0.88:
            col, kind = self.col("num")
            self.n += 1
            return f"x{self.n} := {col}; x{self.n} > {self.const('num')}"
        if roll < 0.91:
            col, kind = self.col()
            return f"{col} == null" if r.random() < 0.5 else f"{col} != null"
        if roll < 0.94 and "users" in self.tables:
            return "input.tickets.assignee == input.users.id; input.users.team in input.user.teams"
        if roll < 0.96 and depth == 0:
            return self.special_helper()
        return self.refused()

    def special_helper(self) -> str:
        """A helper OPA does not inline (default, else) or a partial set of the rows."""
        self.n += 1
        name = f"g{self.n}"
        col, kind = self.col("str", "tickets")
        form = self.r.randrange(3)
        if form == 0:
            self.helpers += [f"default {name} := false", f"{name} if {col} == {self.const(kind)}"]
            return name
        if form == 1:
            self.helpers.append(f"{name}(v) := true if v == {self.const(kind)} else := false")
            return f"{name}({col})"
        self.helpers.append(f"{name} contains v if {{ v := {col} }}")
        return '"open" in ' + name

    def refused(self) -> str:
        r = self.r
        col, kind = self.col()
        return r.choice(
            [
                f"count({col}) > 1",
                col,
                f"{col}.sub == 1",
                f"not {col}",
                f"{self.const('str')} in {col}",
                f"upper({col}) == \"X\"",
                f"y := {col}",
                f"{col} == [1, 2]",
            ]
        )

    def helper(self) -> str:
        self.n += 1
        name = f"h{self.n}"
        bodies = [self.body(1, depth=1) for _ in range(self.r.randint(1, 2))]
        self.helpers.extend(f"{name} if {{ {b} }}" for b in bodies)
        return name if self.r.random() < 0.8 else f"not {name}"

    def function_call(self) -> str:
        self.n += 1
        name = f"f{self.n}"
        col, kind = self.col("num" if self.r.random() < 0.5 else "str", "tickets")
        for _ in range(self.r.randint(1, 2)):
            op = self.r.choice(["==", "!=", ">"] if kind == "num" else ["==", "!="])
            self.helpers.append(f"{name}(v) if v {op} {self.const(kind)}")
        return f"{name}({col})"

    def body(self, n: int, depth: int = 0) -> str:
        return "; ".join(self.expr(depth) for _ in range(n))


def generate(seed: int) -> Case:
    """The policy for ``seed`` (the same each time)."""
    rng = random.Random(seed)
    case_input = json.loads(json.dumps(INPUT))
    case_input["user"]["role"] = rng.choice(["admin", "admin", "viewer"])
    tables = ["tickets", "users"] if rng.random() < 0.25 else ["tickets"]
    g = _Gen(rng, tables)
    lines = ["package filters", ""]
    style = rng.random()
    rules = [f"include if {{ {g.body(rng.randint(1, 3))} }}" for _ in range(rng.randint(1, 4))]
    if style < 0.05:
        lines.append("default include := false")
    elif style < 0.08:
        rules[0] = rules[0] + " else := false"
    lines += rules + g.helpers
    unknowns = [f"input.{t}" for t in tables] if rng.random() < 0.85 else ["input"]
    return Case("\n".join(lines) + "\n", unknowns, case_input)
