"""A ticket service whose list endpoint is filtered by a Rego policy, in the database.

Run it (SQLite file ``tickets.db`` by default, ``DATABASE_URL`` for another
database, e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``)::

    uvicorn --factory app:create_app --port 8000
    curl -H 'X-User: bob' localhost:8000/tickets

- ``GET /tickets`` (optional ``?status=open``): the tickets the caller may
  see. The policy (``policy/tickets.rego``, decision ``data.tickets.include``)
  is partially evaluated with the caller known and the ticket and its
  assignee unknown; the rest becomes a SQLAlchemy ``WHERE`` clause, so the
  database returns only those rows.
- ``GET /tickets/{id}``: one ticket, if the policy, evaluated for that row,
  lets the caller see it (404 otherwise, as for a ticket that does not exist).

The caller is named by the ``X-User`` header (a row of the users table; a
real service would take it from its authentication). The tables are
created, with demo rows, when the users table is empty.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Header, HTTPException
from sqlalchemy import Boolean, ForeignKey, Integer, String, create_engine, select
from sqlalchemy.engine import Engine as Database
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, aliased, mapped_column

import pyrego
from pyrego.filters.policy_condition import policy_condition
from pyrego.filters.sqlalchemy import to_sqlalchemy

POLICY = Path(__file__).with_name("policy") / "tickets.rego"
DECISION = "data.tickets.include"


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    tenant: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(20))
    team: Mapped[str | None] = mapped_column(String(40))


class Ticket(Base):
    __tablename__ = "tickets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(200))
    author: Mapped[str] = mapped_column(String(40))
    assignee: Mapped[str | None] = mapped_column(String(40), ForeignKey("users.name"))
    status: Mapped[str] = mapped_column(String(20))
    priority: Mapped[int] = mapped_column(Integer)
    confidential: Mapped[bool] = mapped_column(Boolean, default=False)


# The assignee's row, outer-joined: the policy's input.users.
Assignee = aliased(User, name="assignee_user")
TICKET_COLUMNS = ("id", "tenant", "title", "author", "assignee", "status", "priority", "confidential")

DEMO_USERS = [
    {"name": "alice", "tenant": 1, "role": "admin", "team": None},
    {"name": "bob", "tenant": 1, "role": "member", "team": "red"},
    {"name": "carol", "tenant": 1, "role": "member", "team": "blue"},
    {"name": "sam", "tenant": 1, "role": "support", "team": None},
    {"name": "lena", "tenant": 1, "role": "lead", "team": "red"},
    {"name": "zoe", "tenant": 2, "role": "admin", "team": None},
]
DEMO_TICKETS = [
    {"id": 1, "tenant": 1, "title": "Printer on fire", "author": "bob", "assignee": "carol", "status": "open", "priority": 3, "confidential": False},
    {"id": 2, "tenant": 1, "title": "Salary review", "author": "carol", "assignee": None, "status": "open", "priority": 1, "confidential": True},
    {"id": 3, "tenant": 1, "title": "VPN drops", "author": "carol", "assignee": "bob", "status": "triage", "priority": 2, "confidential": False},
    {"id": 4, "tenant": 1, "title": "New laptop", "author": "alice", "assignee": None, "status": "open", "priority": 1, "confidential": False},
    {"id": 5, "tenant": 1, "title": "Old request", "author": "alice", "assignee": None, "status": "closed", "priority": 1, "confidential": False},
    {"id": 6, "tenant": 2, "title": "Other tenant's outage", "author": "zoe", "assignee": None, "status": "open", "priority": 3, "confidential": False},
    {"id": 7, "tenant": 1, "title": "Badge not working", "author": "sam", "assignee": "lena", "status": "open", "priority": 2, "confidential": False},
]


def create_app(database_url: str | None = None) -> FastAPI:
    """The app on ``database_url`` (default ``$DATABASE_URL``, else ``sqlite:///tickets.db``)."""
    database = create_engine(database_url or os.environ.get("DATABASE_URL") or "sqlite:///tickets.db")
    Base.metadata.create_all(database)
    _seed(database)
    policy = pyrego.Engine()
    policy.add_policy_from_file(str(POLICY))

    app = FastAPI(title="tickets")

    def session() -> Any:
        with Session(database) as s:
            yield s

    def caller(s: Session = Depends(session), x_user: str = Header()) -> dict[str, Any]:  # noqa: B008
        user = s.get(User, x_user)
        if user is None:
            raise HTTPException(401, "unknown user")
        return {"name": user.name, "tenant": user.tenant, "role": user.role, "team": user.team}

    @app.get("/tickets")
    def list_tickets(status: str | None = None, user: dict[str, Any] = Depends(caller), s: Session = Depends(session)) -> list[dict[str, Any]]:  # noqa: B008
        # The policy with the caller known and the rows unknown: a condition on the columns.
        condition, _ = policy_condition(policy, DECISION, {"user": user}, unknowns=["input.tickets", "input.users"])
        where = to_sqlalchemy(condition, {"tickets": Ticket, "users": Assignee}, outer={"users"})
        query = select(Ticket).outerjoin(Assignee, Ticket.assignee == Assignee.name).where(where).order_by(Ticket.id)
        if status is not None:
            query = query.where(Ticket.status == status)
        return [_ticket(t) for t in s.scalars(query)]

    @app.get("/tickets/{ticket_id}")
    def get_ticket(ticket_id: int, user: dict[str, Any] = Depends(caller), s: Session = Depends(session)) -> dict[str, Any]:  # noqa: B008
        ticket = s.get(Ticket, ticket_id)
        assignee = s.get(User, ticket.assignee) if ticket is not None and ticket.assignee else None
        # The same policy for one row: the ticket and its assignee as input.
        if ticket is None or policy.eval_rule(DECISION, input={"user": user, "tickets": _ticket(ticket), "users": _user(assignee)}) is not True:
            raise HTTPException(404, "no such ticket")
        return _ticket(ticket)

    return app


def _ticket(t: Ticket) -> dict[str, Any]:
    return {c: getattr(t, c) for c in TICKET_COLUMNS}


def _user(u: User | None) -> dict[str, Any]:
    if u is None:
        return {"name": None, "tenant": None, "role": None, "team": None}
    return {"name": u.name, "tenant": u.tenant, "role": u.role, "team": u.team}


def _seed(database: Database) -> None:
    with Session(database) as s:
        if s.scalar(select(User.name).limit(1)) is not None:
            return
        s.add_all(User(**u) for u in DEMO_USERS)
        s.flush()
        s.add_all(Ticket(**t) for t in DEMO_TICKETS)
        s.commit()
