"""Fresh planner statistics for the day partitions that are filling, a loop of the ledger's.

A day's partition starts empty. A statement whose plan is cached on a connection while the
day holds a few rows reads it whole (the cheapest way then), and keeps doing so as the day
fills, until the partition is analyzed: only then do the connections plan again. Autovacuum
analyzes at its own pace (a round a minute at best, and after the load that made the rows),
so for the first minutes of every day, and of every new installation, each advance call read
the whole day so far: 11.6 ms a call at 100,000 jobs against 1.25 ms once analyzed
(docs/performance.md).

So every `partition_stats_interval_s` the ledger analyzes each partition of today and of the
days beside it that has doubled since its last analysis (or holds `FIRST_ROWS` never
analyzed). A plan made at N rows then serves at most 2N: a read of the whole day stays within
about twice what it cost when it was the cheapest plan. A day costs about log2(its rows)
analyses a table, each of a sample (PostgreSQL reads at most 30,000 rows of it).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from herald_ledger.partitions import PARTITIONED, partition_name

log = logging.getLogger("herald.ledger.statistics")

# Below this, a never-analyzed day is left to autovacuum: reading it whole costs little.
FIRST_ROWS = 1_000
_LOCK = 0x48535441  # "HSTA": one replica analyzes at a time; the others skip the round

_GROWN = text(
    """
    SELECT c.relname
    FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
    WHERE c.relname = ANY(:names)
      AND s.n_mod_since_analyze >= greatest(:first_rows, c.reltuples)
    """
)


def filling_days(now: datetime) -> list[str]:
    """The partitions rows are being written to: today's and the days beside it (a replica's
    clock may be a little off at midnight)."""
    days = [(now + timedelta(days=n)).date() for n in (-1, 0, 1)]
    return [partition_name(table, day) for table in PARTITIONED for day in days]


async def refresh(engine: AsyncEngine, now: datetime | None = None) -> list[str]:
    """Analyzes the filling partitions that have doubled since they were last analyzed; returns
    their names."""
    async with engine.begin() as conn:
        if not (await conn.execute(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": _LOCK})).scalar():
            return []
        names = filling_days(now or datetime.now(UTC))
        grown = [r.relname for r in await conn.execute(_GROWN, {"names": names, "first_rows": FIRST_ROWS})]
        if grown:
            # Names of our own making (partition_name), never a tenant's input.
            await conn.execute(text("ANALYZE " + ", ".join(grown)))
            log.info("partitions analyzed", extra={"partitions": grown})
    return grown
