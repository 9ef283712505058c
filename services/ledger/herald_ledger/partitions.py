"""The day partitions of the tables that grow with traffic (migration 0023).

`jobs` and `events` are range-partitioned by their UUIDv7 id: a UTC day is the range of ids
whose first 48 bits (the milliseconds) fall in it, so the primary key and every lookup by id
stay as they were and prune to one partition. A job's `attempts` and `job_events` are
partitioned by `job_id` over the same ranges: they live in their job's day and go with it.
Ageing out a day is detaching and dropping four tables, not a DELETE that bloats.

Partitions are named `<table>_pYYYYMMDD`; the ledger's maintenance creates them
`AHEAD_DAYS` ahead (herald_ledger.retention), the migration made the first ones.
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta

# Parent table -> the column its days are ranges of.
PARTITIONED: dict[str, str] = {"jobs": "id", "attempts": "job_id", "job_events": "job_id", "events": "id"}
# Dropped before their day of jobs: their foreign keys refer to it.
JOB_CHILDREN = ("attempts", "job_events")
# Days made ahead of today (and one behind, for a replica whose clock lags at midnight).
AHEAD_DAYS = 7


def id_at(moment: datetime) -> uuid.UUID:
    """The smallest UUIDv7 made at `moment`'s millisecond: ids below it are older."""
    return uuid.UUID(int=int(moment.timestamp() * 1000) << 80)


def day_start(day: date) -> uuid.UUID:
    return id_at(datetime(day.year, day.month, day.day, tzinfo=UTC))


def day_of(value: uuid.UUID) -> date:
    """The UTC day a UUIDv7 was made on (any UUID: the day its first 48 bits would say)."""
    return datetime.fromtimestamp((value.int >> 80) / 1000, tz=UTC).date()


def partition_name(table: str, day: date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def day_of_partition(table: str, name: str) -> date | None:
    prefix = f"{table}_p"
    if not name.startswith(prefix):
        return None
    try:
        return datetime.strptime(name[len(prefix) :], "%Y%m%d").replace(tzinfo=UTC).date()
    except ValueError:
        return None


def create_partition_sql(table: str, day: date) -> str:
    low, high = day_start(day), day_start(day + timedelta(days=1))
    return (
        f"CREATE TABLE IF NOT EXISTS {partition_name(table, day)} PARTITION OF {table} "
        f"FOR VALUES FROM ('{low}') TO ('{high}')"
    )


def days_ahead(today: date) -> list[date]:
    return [today + timedelta(days=n) for n in range(-1, AHEAD_DAYS + 1)]


# A day as SQL computes it from an id: the first 48 bits are the milliseconds since the epoch.
DAY_OF_ID_SQL = "(('x' || substr(replace({column}::text, '-', ''), 1, 12))::bit(48)::bigint / 86400000)"
