"""The example ticket service (examples/tickets) as a real HTTP server, on SQLite and PostgreSQL.

The app runs under uvicorn on a free localhost port, on a SQLite file and
on PostgreSQL (a schema of its own, dropped afterwards). Each demo user's
list (filtered in the database through the SQLAlchemy adapter) must be
what the policy says they see, and the same as the tickets the policy lets
them open one by one (evaluated per row).

PostgreSQL must answer at 127.0.0.1:5432 (the test fails, naming it,
otherwise; skipped with ``PYREGO_NO_DB_SERVERS=1``).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

import db_servers
from service_servers import UvicornServer, load_example

pytest.importorskip("fastapi", reason="pip install -e '.[dev]' installs FastAPI")
httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tickets"

# Who sees what in the demo data (examples/tickets/app.py), by the policy's rules:
# admins all of their tenant; everyone what they wrote or are assigned;
# support the unassigned open and the urgent tickets that are not
# confidential; a lead what their team's members are assigned.
VISIBLE = {
    "alice": [1, 2, 3, 4, 5, 7],
    "bob": [1, 3],
    "carol": [1, 2, 3],
    "sam": [1, 4, 7],
    "lena": [3, 7],
    "zoe": [6],
}


def _load_app_module() -> Any:
    return load_example("tickets", "pyrego_example_tickets_app")


@pytest.fixture(params=["sqlite", "postgresql"])
def service(request: Any, tmp_path: Path) -> Iterator[str]:
    """The base URL of the running service, on a fresh database."""
    module = _load_app_module()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'tickets.db'}"
        with UvicornServer(module.create_app(url)) as base:
            yield base
        return
    from sqlalchemy import create_engine, text

    server_url = db_servers.require("postgresql")
    schema = f"pyrego_example_{uuid.uuid4().hex[:10]}"
    admin = create_engine(server_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        app = module.create_app(f"{server_url}?options=-csearch_path%3D{schema}")
        with UvicornServer(app) as base:
            yield base
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def test_each_user_sees_what_the_policy_allows(service: str) -> None:
    with httpx.Client(base_url=service, timeout=30) as client:
        for user, ids in VISIBLE.items():
            response = client.get("/tickets", headers={"X-User": user})
            assert response.status_code == 200, response.text
            assert [t["id"] for t in response.json()] == ids, user
        # Two users of one tenant, side by side: an admin sees more than a member.
        alice = client.get("/tickets", headers={"X-User": "alice"}).json()
        bob = client.get("/tickets", headers={"X-User": "bob"}).json()
        assert {t["id"] for t in bob} < {t["id"] for t in alice}
        assert all(t["author"] == "bob" or t["assignee"] == "bob" for t in bob)


def test_list_matches_per_ticket_decisions(service: str) -> None:
    """The filtered list is exactly the tickets the policy lets the user open one by one."""
    with httpx.Client(base_url=service, timeout=30) as client:
        for user in VISIBLE:
            listed = [t["id"] for t in client.get("/tickets", headers={"X-User": user}).json()]
            opened = [i for i in range(1, 9) if client.get(f"/tickets/{i}", headers={"X-User": user}).status_code == 200]
            assert listed == opened, user


def test_query_parameters_and_unknown_users(service: str) -> None:
    with httpx.Client(base_url=service, timeout=30) as client:
        open_ones = client.get("/tickets", params={"status": "open"}, headers={"X-User": "alice"}).json()
        assert [t["id"] for t in open_ones] == [1, 2, 4, 7]
        assert client.get("/tickets", headers={"X-User": "mallory"}).status_code == 401
        assert client.get("/tickets/6", headers={"X-User": "alice"}).status_code == 404  # another tenant's
        assert client.get("/tickets/6", headers={"X-User": "zoe"}).json()["title"] == "Other tenant's outage"
