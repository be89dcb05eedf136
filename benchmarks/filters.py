"""Data filter figures: how fast filters are made, and what filtering in the database saves.

(a) Filters per second for the example policy (examples/tickets), four
    callers in turn: pyrego's ``Engine.compile_filters`` (the Compile API's
    SQL text) and ``policy_condition`` + ``to_sqlalchemy`` (the adapter's
    path), on one engine whose program is compiled once, against OPA's
    ``compile_filters`` through its Python bindings (the test oracle), in
    the same process, measured in alternating slices. The SQL texts are
    checked equal first.
(b) On PostgreSQL (127.0.0.1:5432, database ``test``, a schema of its own,
    dropped afterwards): listing the tickets a caller may see with the
    filtered query (filter made, query run, rows fetched) against fetching
    every ticket with its assignee and evaluating the policy per row, at
    10k and 1M tickets; both must give the same tickets.

    python benchmarks/filters.py                      # both, ~3 minutes
    python benchmarks/filters.py --rows 10000 --seconds 1
    python benchmarks/filters.py --no-db              # (a) only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

import pyrego  # noqa: E402
from pyrego.filters.policy_condition import policy_condition  # noqa: E402

POLICY = REPO / "examples" / "tickets" / "policy" / "tickets.rego"
DECISION = "data.tickets.include"
UNKNOWNS = ["input.tickets", "input.users"]
CALLERS = {
    "member": {"name": "u1_7", "tenant": 1, "role": "member", "team": "t3"},
    "admin": {"name": "u1_0", "tenant": 1, "role": "admin", "team": None},
    "support": {"name": "u1_1", "tenant": 1, "role": "support", "team": None},
    "lead": {"name": "u1_6", "tenant": 1, "role": "lead", "team": "t3"},
}


def _rate(fn: Callable[[int], Any], seconds: float) -> tuple[int, float]:
    """Calls of ``fn(i)`` in about ``seconds``: (count, elapsed)."""
    n, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(20):
            fn(n)
            n += 1
        now = time.perf_counter()
        if now >= deadline:
            return n, now - start


def filter_rates(seconds: float) -> dict[str, Any]:
    """(a): filters per second, pyrego against OPA."""
    from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table

    from pyrego.filters.sqlalchemy import to_sqlalchemy

    text = POLICY.read_text()
    users = list(CALLERS.values())
    engine = pyrego.Engine()
    engine.add_policy("tickets.rego", text)
    md = MetaData()
    tickets = _tickets_table(md, Table, Column, Integer, String, Boolean)
    users_t = Table("users", md, Column("name", String, primary_key=True), Column("tenant", Integer), Column("role", String), Column("team", String))
    columns = {"tickets": tickets, "users": users_t}

    def pyrego_sql(i: int) -> Any:
        return engine.compile_filters(DECISION, {"user": users[i % 4]}, unknowns=UNKNOWNS)

    def pyrego_adapter(i: int) -> Any:
        cond, _ = policy_condition(engine, DECISION, {"user": users[i % 4]}, unknowns=UNKNOWNS)
        return to_sqlalchemy(cond, columns, outer={"users"})

    contenders: dict[str, Callable[[int], Any]] = {"pyrego compile_filters (SQL)": pyrego_sql, "pyrego policy_condition + to_sqlalchemy": pyrego_adapter}
    opa_note = None
    try:
        from pyrego.bench.engines import load_opa_class

        opa = load_opa_class()()
        opa.add_policy("tickets.rego", text)
        for i, user in enumerate(users):
            mine, theirs = pyrego_sql(i)["query"], opa.compile_filters(DECISION, {"user": user}, unknowns=UNKNOWNS)["query"]
            if mine != theirs:
                raise SystemExit(f"pyrego and OPA disagree for {user}: {mine!r} != {theirs!r}")

        def opa_sql(i: int) -> Any:
            return opa.compile_filters(DECISION, {"user": users[i % 4]}, unknowns=UNKNOWNS)

        contenders["OPA compile_filters (SQL), Go via ctypes"] = opa_sql
    except Exception as exc:  # noqa: BLE001 -- no OPA: pyrego's figures alone
        opa_note = f"OPA not measured: {exc}"
    for fn in contenders.values():
        _rate(fn, min(1.0, seconds))  # warm-up
    counts = dict.fromkeys(contenders, 0)
    elapsed = dict.fromkeys(contenders, 0.0)
    for _ in range(3):  # alternating slices: load changes fall on all alike
        for name, fn in contenders.items():
            n, dt = _rate(fn, seconds / 3)
            counts[name] += n
            elapsed[name] += dt
    rates = {name: counts[name] / elapsed[name] for name in contenders}
    return {"rates": rates, "note": opa_note}


def _tickets_table(md: Any, Table: Any, Column: Any, Integer: Any, String: Any, Boolean: Any) -> Any:  # noqa: N803
    return Table(
        "tickets",
        md,
        Column("id", Integer, primary_key=True),
        Column("tenant", Integer, nullable=False),
        Column("title", String, nullable=False),
        Column("author", String, nullable=False),
        Column("assignee", String),
        Column("status", String, nullable=False),
        Column("priority", Integer, nullable=False),
        Column("confidential", Boolean, nullable=False),
    )


TENANTS, USERS_PER_TENANT, TEAMS = 20, 100, 10


def _load(conn: Any, schema: str, rows: int) -> None:
    """Users (roles and teams as in CALLERS' tenant) and ``rows`` tickets, by COPY."""
    rng = random.Random(rows)
    raw = conn.connection.dbapi_connection
    with raw.cursor() as cur:
        cur.execute(f"CREATE SCHEMA {schema}")
        cur.execute(f"SET search_path TO {schema}")
        cur.execute("CREATE TABLE users (name text PRIMARY KEY, tenant int NOT NULL, role text NOT NULL, team text)")
        cur.execute(
            "CREATE TABLE tickets (id int PRIMARY KEY, tenant int NOT NULL, title text NOT NULL, author text NOT NULL, "
            "assignee text, status text NOT NULL, priority int NOT NULL, confidential boolean NOT NULL)"
        )
        roles = ["admin", "support"] + ["member"] * 4 + ["lead"] + ["member"] * 3
        with cur.copy("COPY users (name, tenant, role, team) FROM STDIN") as copy:
            for t in range(1, TENANTS + 1):
                for u in range(USERS_PER_TENANT):
                    role = roles[u % len(roles)]
                    copy.write_row((f"u{t}_{u}", t, role, None if role in ("admin", "support") else f"t{u % TEAMS}"))
        statuses = ["open", "open", "triage", "closed", "closed", "resolved"]
        with cur.copy("COPY tickets (id, tenant, title, author, assignee, status, priority, confidential) FROM STDIN") as copy:
            for i in range(1, rows + 1):
                t = rng.randint(1, TENANTS)
                assignee = None if rng.random() < 0.3 else f"u{t}_{rng.randrange(USERS_PER_TENANT)}"
                copy.write_row((i, t, f"ticket {i}", f"u{t}_{rng.randrange(USERS_PER_TENANT)}", assignee, rng.choice(statuses), rng.randint(1, 4), rng.random() < 0.1))
        cur.execute("CREATE INDEX ON tickets (tenant, author)")
        cur.execute("CREATE INDEX ON tickets (tenant, assignee)")
        cur.execute("ANALYZE")
    raw.commit()


def database_figures(row_counts: list[int], repeats: int) -> list[dict[str, Any]]:
    """(b): the filtered query against fetch-all-and-evaluate, on PostgreSQL."""
    from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table, create_engine, select

    import db_servers
    from pyrego.filters.sqlalchemy import to_sqlalchemy

    url = db_servers.url("postgresql")
    engine = pyrego.Engine()
    engine.add_policy_from_file(str(POLICY))
    out = []
    for rows in row_counts:
        schema = f"pyrego_bench_{uuid.uuid4().hex[:10]}"
        db = create_engine(f"{url}?options=-csearch_path%3D{schema}")
        md = MetaData()
        tickets = _tickets_table(md, Table, Column, Integer, String, Boolean)
        users = Table("users", md, Column("name", String, primary_key=True), Column("tenant", Integer, nullable=False), Column("role", String), Column("team", String))
        assignee = users.alias("assignee_user")
        try:
            with db.connect() as conn:
                started = time.perf_counter()
                _load(conn, schema, rows)
                print(f"  {rows} tickets loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
                for caller, user in CALLERS.items():

                    def filtered(user: dict[str, Any] = user, tickets: Any = tickets, assignee: Any = assignee) -> set[int]:
                        cond, _ = policy_condition(engine, DECISION, {"user": user}, unknowns=UNKNOWNS)
                        where = to_sqlalchemy(cond, {"tickets": tickets, "users": assignee}, outer={"users"})
                        query = select(*tickets.c).select_from(tickets.outerjoin(assignee, tickets.c.assignee == assignee.c.name)).where(where)
                        return {r[0] for r in conn.execute(query).fetchall()}

                    def fetch_all(user: dict[str, Any] = user) -> set[int]:
                        cur = conn.connection.dbapi_connection.cursor()
                        cur.execute(
                            "SELECT t.id, t.tenant, t.title, t.author, t.assignee, t.status, t.priority, t.confidential, "
                            "u.name, u.tenant, u.role, u.team FROM tickets t LEFT JOIN users u ON t.assignee = u.name"
                        )
                        keep = set()
                        evaluate = engine.eval_rule
                        for r in cur.fetchall():
                            row = {"id": r[0], "tenant": r[1], "title": r[2], "author": r[3], "assignee": r[4], "status": r[5], "priority": r[6], "confidential": r[7]}
                            doc = {"user": user, "tickets": row, "users": {"name": r[8], "tenant": r[9], "role": r[10], "team": r[11]}}
                            if evaluate(DECISION, input=doc) is True:
                                keep.add(r[0])
                        cur.close()
                        return keep

                    a, b = filtered(), fetch_all()
                    if a != b:
                        raise SystemExit(f"{rows} rows, {caller}: the filtered query and the per-row evaluation disagree ({len(a)} vs {len(b)} tickets)")
                    slow_repeats = 1 if rows >= 500_000 else repeats
                    t_filtered = _median_ms(filtered, repeats)
                    t_all = _median_ms(fetch_all, slow_repeats)
                    out.append({"rows": rows, "caller": caller, "visible": len(a), "filtered_ms": t_filtered, "fetch_all_ms": t_all, "ratio": t_all / t_filtered})
                    print(f"  {rows} rows, {caller}: {len(a)} visible, {t_filtered:.1f} ms vs {t_all:.1f} ms", file=sys.stderr)
                conn.connection.dbapi_connection.rollback()
        finally:
            with db.connect() as conn:
                conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                conn.commit()
            db.dispose()
    return out


def _median_ms(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def report(rates: dict[str, Any], db: list[dict[str, Any]]) -> str:
    lines = ["### Filters per second (example policy, 4 callers in turn)", "", "| how | filters/s | vs OPA |", "|---|---:|---:|"]
    opa = next((v for k, v in rates["rates"].items() if k.startswith("OPA")), None)
    for name, rate in rates["rates"].items():
        lines.append(f"| {name} | {rate:,.0f} | {f'{rate / opa:.2f}x' if opa else '-'} |")
    if rates.get("note"):
        lines += ["", rates["note"]]
    if db:
        lines += [
            "",
            "### PostgreSQL: filtered query vs fetch all and evaluate per row",
            "",
            "| tickets | caller | visible | filtered query (ms) | fetch all + per-row policy (ms) | ratio |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for r in db:
            lines.append(f"| {r['rows']:,} | {r['caller']} | {r['visible']:,} | {r['filtered_ms']:.1f} | {r['fetch_all_ms']:,.1f} | {r['ratio']:,.0f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="measured time per contender in (a)")
    parser.add_argument("--rows", default="10000,1000000", help="ticket counts for (b)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure in (b) (median; 1 for the per-row path at 500k rows and more)")
    parser.add_argument("--no-db", action="store_true", help="skip (b)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    rates = filter_rates(args.seconds)
    db = [] if args.no_db else database_figures([int(x) for x in args.rows.split(",") if x], args.repeats)
    print(report(rates, db))
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"rates": rates, "database": db}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
