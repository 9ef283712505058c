"""`make bench-retention`: MODE=steady with an old day of RETENTION_JOBS jobs (1,000,000) in its own
partitions, dropped by retention in the middle of the measured window on one side and left alone on
the other (VARIANT_ENV names the dropping side), same invocation: what ageing out a day costs the
traffic (accept p99 and accept-to-delivery p99, dropping / not dropping).

The day is written in SQL (generate_series, UUIDv7 ids of RETENTION_DAYS_AGO days back, a
delivered job and its attempt each), then vacuumed and analysed, before the quiet-machine wait:
both sides start the window with the same database. The ledgers keep every row (SERVICE_ENV sets
their retention to 100 years), so only the bench's own round drops the day: a round of the real
retention (herald_ledger.retention.Retention) with rows kept 30 days, started RETENTION_AT seconds
(a third of SECONDS) into the window.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from harness.config import Config, env, log

DROP_MARK = "HERALD_BENCH_RETENTION_DROP=1"  # the VARIANT_ENV of the dropping side
KEEP_ALL = "free=36500,indie=36500,startup=36500"


def enabled() -> bool:
    return int(env("RETENTION_JOBS", "0")) > 0


def drops(cfg: Config) -> bool:
    return DROP_MARK in cfg.service_env.split()


def _day() -> datetime:
    day = (datetime.now(UTC) - timedelta(days=int(env("RETENTION_DAYS_AGO", "200")))).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


_FILL_JOBS = """
    INSERT INTO jobs (id, tenant_id, channel, status, priority, request, body, attempt_count, created_at, updated_at)
    SELECT CAST(lpad(to_hex($1::bigint + g * (86400000 - 1) / $2::bigint), 12, '0') || '7000' || '8'
                || lpad(to_hex(g), 15, '0') AS uuid),
           $3::uuid, 'webhook', 'DELIVERED', 'normal', '{"url": "http://127.0.0.1:9/old"}'::jsonb,
           convert_to(repeat('x', 200), 'UTF8'), 1, $4::timestamptz, $4::timestamptz
    FROM generate_series(0, $2::bigint - 1) AS g
"""
_FILL_ATTEMPTS = """
    INSERT INTO attempts (job_id, number, target, outcome, status_code, duration_ms, started_at, response_excerpt)
    SELECT id, 1, 'http://127.0.0.1:9/old', 'succeeded', 200, 3, created_at, 'ok' FROM {partition}
"""


def fill_old_day(database_url: str) -> dict[str, Any]:
    """RETENTION_JOBS delivered jobs (one attempt each) in the partitions of one old day."""
    from herald_ledger.partitions import PARTITIONED, day_sql, partition_name

    jobs = int(env("RETENTION_JOBS", "0"))
    day = _day()

    async def fill() -> float:
        connection = await asyncpg.connect(database_url)
        try:
            started = time.monotonic()
            for table in PARTITIONED:
                for statement in day_sql(table, day.date()):
                    await connection.execute(statement)
            tenant = await connection.fetchval("SELECT id FROM tenants ORDER BY id LIMIT 1")
            await connection.execute(_FILL_JOBS, int(day.timestamp() * 1000), jobs, tenant, day)
            await connection.execute(_FILL_ATTEMPTS.format(partition=partition_name("jobs", day.date())))
            for table in ("jobs", "attempts"):
                await connection.execute(f"VACUUM ANALYZE {partition_name(table, day.date())}")
            return time.monotonic() - started
        finally:
            await connection.close()

    took = asyncio.run(fill())
    log(f"retention: {jobs:,} jobs of {day.date()} written in {took:.0f}s")
    return {"retention_jobs": jobs, "retention_fill_s": round(took, 1)}


class Dropper:
    """One round of the ledger's retention, RETENTION_AT s after `start`, on a thread of its own.
    Herald's modules are imported here, before the window, so the round starts on time."""

    def __init__(self, database_url: str) -> None:
        from herald_ledger.db.engine import create_engine
        from herald_ledger.retention import Retention

        from herald.config import Settings

        self.database_url = database_url
        self.result: dict[str, Any] = {}
        self.make = lambda: Retention(
            create_engine(database_url, pool_size=2),
            Settings(row_retention_days="free=30,indie=30,startup=30", payload_retention_days=KEEP_ALL),
        )
        self.thread = threading.Thread(target=self._run, name="retention-drop", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        time.sleep(float(env("RETENTION_AT", str(float(env("SECONDS", "20")) / 3))))

        async def one_round() -> None:
            retention = self.make()
            try:
                started, at = time.monotonic(), time.time()
                report = await retention.run()
                self.result = {
                    "retention_drop_started_at": round(at, 3),
                    "retention_drop_s": round(time.monotonic() - started, 2),
                    "retention_dropped": report.partitions_dropped,
                }
            finally:
                await retention.engine.dispose()

        asyncio.run(one_round())
        log(f"retention: {self.result}")

    def join(self) -> dict[str, Any]:
        self.thread.join(timeout=600)
        return self.result


def retention_report(sides: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Per rate: accept p99 and accept-to-delivery p99 while the day drops, without, and their ratio."""
    dropping = next((label for label in sides if DROP_MARK in label), None)
    if dropping is None or "Herald" not in sides:
        return
    print(f"\n-- Retention: a day of {int(env('RETENTION_JOBS', '0')):,} jobs dropped during the window / not")
    for rate, with_drop in sides[dropping].items():
        without = sides["Herald"].get(rate)
        if without is None:
            continue
        line = f"{rate}/s:"
        for key, name in (("accept_p99_ms", "accept p99"), ("a2d_p99_ms", "accept-to-delivery p99")):
            a, b = with_drop.get(key), without.get(key)
            ratio = f" = {a / b:.2f}x" if a is not None and b else ""
            line += f" {name} {a} / {b} ms{ratio};"
        took = [r for r in (with_drop.get("retention_drop_s"),) if r is not None]
        line += f" the round took {statistics.median(took):.1f}s" if took else " (no drop recorded)"
        line += f", dropped {with_drop.get('retention_dropped')}"
        print(line)
