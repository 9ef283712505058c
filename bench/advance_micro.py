"""The senders' advance statement alone, run by several connections at once, against a database
with as many day partitions as a deployment keeps: calls per second.

The ledger's advance (outcomes of 5 attempts and 5 starts, `store.deliveries.advance_attempts`)
is the statement every delivery pays for; on the partitioned schema its cost depends on how many
partitions exist, read or not. This makes a database of its own (migrated by the ledger's
migrations), adds `--days-back` past days of partitions (a deployment's retention), fills today
with `--jobs` queued jobs, runs `--connections` loops for `--seconds` and prints one JSON line.

    PYTHONPATH=services/ledger:src .venv/bin/python bench/advance_micro.py --days-back 30

Run it against another tree with that tree's `services/ledger` and `src` on PYTHONPATH, in the
same invocation: absolute figures do not carry over between machines or hours.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import time
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
from herald_ledger import partitions
from herald_ledger.db.engine import create_engine
from herald_ledger.job_status import JobStatus
from herald_ledger.migrate import upgrade
from herald_ledger.store import deliveries
from sqlalchemy.engine import make_url

BATCH = 5


def today_id() -> uuid.UUID:
    """A UUIDv7 of now with random low bits."""
    millis = int(time.time() * 1000)
    return uuid.UUID(int=(millis << 80) | (0x7 << 76) | (secrets.randbits(76) & ((1 << 76) - 1)))


async def prepare(url: str, days_back: int, jobs: int) -> list[uuid.UUID]:
    await upgrade(url)
    conn = await asyncpg.connect(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False))
    try:
        today = datetime.now(UTC).date()
        # A day as the tree makes it (with its keys; a tree from before `day_sql` had one per table).
        make = getattr(partitions, "day_sql", lambda table, day: [partitions.create_partition_sql(table, day)])
        for n in range(2, days_back + 1):
            for table in partitions.PARTITIONED:
                for statement in make(table, today - timedelta(days=n)):
                    await conn.execute(statement)
        tenant = await conn.fetchval(
            "INSERT INTO tenants (id, name, plan) VALUES (gen_random_uuid(), 'micro', 'startup') RETURNING id"
        )
        ids = [today_id() for _ in range(jobs)]
        await conn.copy_records_to_table(
            "jobs",
            records=[(i, tenant, "webhook", "QUEUED", "normal", "{}", b"{}") for i in ids],
            columns=["id", "tenant_id", "channel", "status", "priority", "request", "body"],
        )
        await conn.execute("ANALYZE")
        counted = await conn.fetchval(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'jobs'::regclass",
        )
        print(json.dumps({"partitions_per_table": counted}), flush=True)
        return ids
    finally:
        await conn.close()


def attempt(job_id: uuid.UUID) -> deliveries.NewAttempt:
    return deliveries.NewAttempt(
        target="http://127.0.0.1:1/hook",
        outcome="succeeded",
        status_code=200,
        duration_ms=3,
        error=None,
        started_at=datetime.now(UTC),
        job_id=job_id,
        next_status=JobStatus.DELIVERED,
        job_error=None,
    )


async def run(url: str, ids: list[uuid.UUID], connections: int, seconds: float) -> dict[str, float]:
    engine = create_engine(url, pool_size=connections)
    pool = iter(ids)
    calls = 0
    latencies: list[float] = []
    began_at = time.monotonic()
    deadline = began_at + seconds

    async def loop() -> None:
        nonlocal calls
        while time.monotonic() < deadline:
            try:
                done = [next(pool) for _ in range(BATCH)]
                starting = [next(pool) for _ in range(BATCH)]
            except StopIteration:
                return
            began = time.perf_counter()
            async with engine.connect() as conn:
                await deliveries.advance_attempts(conn, [attempt(i) for i in done], starting)
            latencies.append(time.perf_counter() - began)
            calls += 1

    await asyncio.gather(*(loop() for _ in range(connections)))
    elapsed = time.monotonic() - began_at
    await engine.dispose()
    latencies.sort()
    return {
        "calls_per_s": round(calls / elapsed, 1),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--server", default=os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    )
    parser.add_argument("--days-back", type=int, default=1, help="past days of partitions (yesterday is always there)")
    parser.add_argument("--jobs", type=int, default=150_000, help="ids for every round: 10 a call (5 ended, 5 started)")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    server = make_url(args.server)
    name = f"herald_micro_{secrets.token_hex(4)}"
    admin = server.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    control = await asyncpg.connect(admin)
    await control.execute(f'CREATE DATABASE "{name}"')
    url = server.set(drivername="postgresql", database=name).render_as_string(hide_password=False)
    try:
        ids = await prepare(url, args.days_back, args.jobs)
        random.shuffle(ids)
        per_round = len(ids) // args.rounds
        for n in range(args.rounds):
            figures = await run(url, ids[n * per_round : (n + 1) * per_round], args.connections, args.seconds)
            print(json.dumps({"round": n + 1, "days_back": args.days_back, **figures}), flush=True)
    finally:
        await control.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await control.close()


if __name__ == "__main__":
    asyncio.run(main())
