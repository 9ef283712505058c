"""PostgreSQL as the bench sees it: one-off statements, the poll connection, the counters.

The bench itself runs on the measured database, so it keeps its footprint there small and
known: one connection for all the polls of a run, and counters read only once they settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import asyncpg


def sql(url: str, statement: str, *args: Any) -> list[asyncpg.Record]:
    """One statement on a connection of its own (CREATE/DROP DATABASE, outside any run's window)."""

    async def go() -> list[asyncpg.Record]:
        connection = await asyncpg.connect(url)
        try:
            return list(await connection.fetch(statement, *args))
        finally:
            await connection.close()

    return asyncio.run(go())


def with_database(url: str, database: str) -> str:
    """The same server's URL for another database."""
    return url.rsplit("/", 1)[0] + "/" + database


class Db:
    """One connection for the polls during a run (a new connection per poll would start a
    PostgreSQL backend each time, and the sampler counts the postmaster's children)."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.connection = self.loop.run_until_complete(asyncpg.connect(url))

    def fetch(self, statement: str, *args: Any) -> list[asyncpg.Record]:
        """The rows of one statement, on the run's connection."""
        return list(self.loop.run_until_complete(self.connection.fetch(statement, *args)))

    def delivered_rows(self) -> int:
        """How many jobs the ledger has DELIVERED (the bench waits for N + warm-up)."""
        return int(self.fetch("SELECT count(*) AS n FROM jobs WHERE status = 'DELIVERED'")[0]["n"])

    def close(self) -> None:
        """Close the connection and its loop; a server already gone is no error at cleanup."""
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.connection.close())
        self.loop.close()


DB_COUNTERS = (
    "SELECT xact_commit AS commits, tup_inserted AS rows_inserted, tup_updated AS rows_updated, "
    "tup_deleted AS rows_deleted, blks_hit + blks_read AS blocks_touched, "
    "pg_current_wal_lsn() - '0/0'::pg_lsn AS wal_bytes "
    "FROM pg_stat_database WHERE datname = current_database()"
)


def db_counters(db: Db) -> dict[str, float]:
    """The database's cumulative counters once settled: backends flush their statistics at most
    every second, idle ones up to 10 s later, so the counters are read until they stop moving."""
    last: dict[str, float] = {}
    deadline = time.monotonic() + 15
    while True:
        with contextlib.suppress(Exception):
            db.fetch("SELECT pg_stat_force_next_flush()")
        now = {k: float(v) for k, v in dict(db.fetch(DB_COUNTERS)[0]).items()}
        moved = {k: v for k, v in now.items() if k != "wal_bytes" and last.get(k) != v}
        if (last and not moved) or time.monotonic() > deadline:
            return now
        last = now
        time.sleep(2.0)


def db_sessions(db: Db) -> int | None:
    """Sessions ever opened on this database (pg_stat_database.sessions, PostgreSQL 14+)."""
    try:
        return int(db.fetch("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")[0]["sessions"])
    except Exception:
        return None
