"""The database servers the database tests use, and a check that they answer.

PostgreSQL at 127.0.0.1:5432 (user ``postgres``, else the current user;
trust authentication; database ``test``) and MariaDB (or MySQL) at
127.0.0.1:3306 (``root`` without a password; database ``test``).
``PYREGO_POSTGRES_URL`` / ``PYREGO_MARIADB_URL`` (SQLAlchemy URLs) point
elsewhere.

Tests that need a server fail when it does not answer, saying which one;
with ``PYREGO_NO_DB_SERVERS=1`` they are skipped instead.

``python tests/db_servers.py`` checks both and says what is missing (exit 1).
"""

from __future__ import annotations

import getpass
import os
import sys
from functools import cache

SERVERS = ("postgresql", "mariadb")
_DESCRIPTION = {
    "postgresql": "PostgreSQL at 127.0.0.1:5432 (user postgres or the current user, trust auth, database 'test')",
    "mariadb": "MariaDB/MySQL at 127.0.0.1:3306 (root without password, database 'test')",
}


class ServerMissing(RuntimeError):
    """A database server the tests need does not answer."""


def servers_optional() -> bool:
    """``PYREGO_NO_DB_SERVERS=1``: tests needing a server are skipped, not failed."""
    return os.environ.get("PYREGO_NO_DB_SERVERS", "") == "1"


@cache
def url(server: str) -> str:
    """A SQLAlchemy URL for ``server`` (``postgresql`` or ``mariadb``) that answers;
    raises :class:`ServerMissing` with what was tried."""
    if server == "postgresql":
        given = os.environ.get("PYREGO_POSTGRES_URL")
        users = [] if given else list(dict.fromkeys(["postgres", getpass.getuser()]))
        candidates = [given] if given else [f"postgresql+psycopg://{u}@127.0.0.1:5432/test" for u in users]
    elif server == "mariadb":
        given = os.environ.get("PYREGO_MARIADB_URL")
        candidates = [given or "mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4"]
    else:
        raise ValueError(server)
    errors = []
    for candidate in candidates:
        try:
            _probe(candidate)
            return candidate
        except Exception as exc:  # any driver error: the server is not usable
            errors.append(f"{candidate}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    where = f"{server} ({'PYREGO_POSTGRES_URL' if server == 'postgresql' else 'PYREGO_MARIADB_URL'})" if given else _DESCRIPTION[server]
    raise ServerMissing(f"{where} does not answer: " + "; ".join(errors))


def _probe(candidate: str) -> None:
    from sqlalchemy import create_engine, text

    connect_args = {"connect_timeout": 3}
    engine = create_engine(candidate, connect_args=connect_args)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    finally:
        engine.dispose()


def require(server: str) -> str:
    """The URL of ``server`` for a test: fails the test if it does not answer
    (skips it with ``PYREGO_NO_DB_SERVERS=1``)."""
    import pytest

    try:
        return url(server)
    except ServerMissing as exc:
        missing = str(exc)
    if servers_optional():
        pytest.skip(f"{missing} (PYREGO_NO_DB_SERVERS=1)")
    pytest.fail(f"{missing}; start it, or set PYREGO_NO_DB_SERVERS=1 to skip the tests that need it", pytrace=False)


def main() -> int:
    missing = 0
    for server in SERVERS:
        try:
            print(f"{server}: ok ({url(server)})")
        except ServerMissing as exc:
            missing += 1
            print(f"{server}: MISSING: {exc}", file=sys.stderr)
        except ImportError as exc:
            missing += 1
            print(f"{server}: cannot check, a driver is not installed: {exc}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
