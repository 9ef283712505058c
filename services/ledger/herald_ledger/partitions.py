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

import functools
import re
import uuid
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

# Parent table -> the column its days are ranges of.
PARTITIONED: dict[str, str] = {"jobs": "id", "attempts": "job_id", "job_events": "job_id", "events": "id"}
# Dropped before their day of jobs: their foreign keys refer to it.
JOB_CHILDREN = ("attempts", "job_events")
# Days made ahead of today (and one behind, for a replica whose clock lags at midnight).
AHEAD_DAYS = 7
MS_PER_DAY = 86_400_000
_ID_MS_END = 1 << 48  # past the last millisecond a UUIDv7 can name
_MARKS = re.compile(r"\b(DAYS|SINCE)\((\w+\.\w+)\)")


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


def job_key_sql(table: str, day: date) -> str:
    """The foreign key of a day of a job's rows (`JOB_CHILDREN`) to that day of `jobs`, made once.

    Keys from partition to partition, not from parent to parent: a check of a parent's key looks
    the job up in `jobs` through a cached plan over every day, which PostgreSQL 15 locks whole at
    each inserted attempt or history row (docs/performance.md); a day's key looks in one table.
    Both hold the same rows, since a job's rows live in its day."""
    child, jobs_day = partition_name(table, day), partition_name("jobs", day)
    return (
        f"DO $$ BEGIN ALTER TABLE {child} ADD CONSTRAINT fk_{child}_job_id FOREIGN KEY (job_id) "
        f"REFERENCES {jobs_day} (id) ON DELETE CASCADE; "
        "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )


def day_sql(table: str, day: date) -> list[str]:
    """What makes `table`'s partition of `day` (after that day of `jobs`, for a job's rows)."""
    return [create_partition_sql(table, day), *([job_key_sql(table, day)] if table in JOB_CHILDREN else [])]


def days_ahead(today: date) -> list[date]:
    return [today + timedelta(days=n) for n in range(-1, AHEAD_DAYS + 1)]


# A day as SQL computes it from an id: the first 48 bits are the milliseconds since the epoch.
DAY_OF_ID_SQL = "(('x' || substr(replace({column}::text, '-', ''), 1, 12))::bit(48)::bigint / 86400000)"


def within_days(sql: str, ids: Iterable[uuid.UUID], since: uuid.UUID | None = None) -> str:
    """`sql` with each `DAYS(column)` made a constant range of ids, the whole UTC days that
    `ids` fall in, and each `SINCE(column)` that range from the day of `since` on and a day
    further (a job another replica made just before may carry a clock a little ahead).

    A hot statement names the ids it reads or changes (`id = ANY($1)`), which prunes the other
    days' partitions only as it runs: a cached plan holds every partition, and PostgreSQL 15
    locks each of them at every execution, so every statement paid for every day retained
    (docs/performance.md). With the days as constants the plan is made over those days'
    partitions alone. The texts differ only by day, so a connection prepares a few a day. A
    range only restates what the ids say of themselves, so it never leaves out a row the
    statement would have found; an id too large to name a day leaves the range open."""
    values = [i.int >> 80 for i in ids]
    if not values:
        return _bounded(sql, None, None, None)
    low = min(values) // MS_PER_DAY * MS_PER_DAY
    high = (max(values) // MS_PER_DAY + 1) * MS_PER_DAY
    since_day = low if since is None else min(low, (since.int >> 80) // MS_PER_DAY * MS_PER_DAY)
    return _bounded(sql, low, high, since_day)


@functools.lru_cache(maxsize=64)
def _bounded(sql: str, low: int | None, high: int | None, since_day: int | None) -> str:
    """`within_days`'s text for these days, made once (a substitution over the advance
    statement costs about 0.1 ms, and every call of a day asks for the same few texts)."""
    if low is None or high is None or since_day is None:
        return _MARKS.sub("FALSE", sql)

    def bounds(mark: re.Match[str]) -> str:
        first, end = (low, high) if mark[1] == "DAYS" else (since_day, high + MS_PER_DAY)
        column = mark[2]
        if end >= _ID_MS_END:
            return f"{column} >= '{uuid.UUID(int=first << 80)}'::uuid"
        return f"({column} >= '{uuid.UUID(int=first << 80)}'::uuid AND {column} < '{uuid.UUID(int=end << 80)}'::uuid)"

    return _MARKS.sub(bounds, sql)
