"""Retention, a loop of the ledger's (every HERALD_RETENTION_INTERVAL_S): rows and payloads age out.

Each tenant keeps rows (jobs with their attempts and history, events) for its row retention and
payloads for its payload retention, in days: the operator's override on the tenant, else its
plan's (HERALD_ROW_RETENTION_DAYS, HERALD_PAYLOAD_RETENTION_DAYS). A day's partition holds every
tenant's rows, so a round

1. makes the partitions of the coming days (herald_ledger.partitions);
2. drops the days older than the longest row retention in force: nobody keeps them. The few
   rows of unpartitioned tables that refer to those jobs go first (dead letters, platform
   emails; provider events forget the job), then each partition is detached CONCURRENTLY (the
   parent is never locked against the traffic) and dropped;
3. deletes, in bounded batches, the rows of tenants whose retention is shorter than the longest
   (a DELETE, so it bloats; it is bounded by the traffic of the tenants on short retentions and
   their partitions are dropped anyway once the longest retention passes them), and audit log
   entries older than their tenant's row retention (the operators' own: the longest);
4. expires payloads, in bounded batches, per tenant from where the last round stopped
   (`payload_expiry`), through the one statement expunge uses (herald_ledger.store.payloads).

Every ledger replica runs the loop; one at a time runs a round (a session advisory lock
taken without waiting: the others skip the step that round).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from herald.config import Settings
from herald.plans import plan_days
from herald_ledger.partitions import (
    JOB_CHILDREN,
    PARTITIONED,
    day_of_partition,
    day_sql,
    day_start,
    days_ahead,
    id_at,
    partition_name,
)
from herald_ledger.store.payloads import expunge_events, expunge_jobs

log = logging.getLogger("herald.ledger.retention")

_RETENTION_LOCK = 0x48524554  # "HRET": any constant shared by all replicas
# A partition's DDL waits this long for its lock, then gives up until the next round (it must
# never queue in front of the traffic for long).
_LOCK_TIMEOUT = "2s"


@dataclass(frozen=True)
class TenantRetention:
    tenant_id: uuid.UUID
    row_days: int
    payload_days: int


@dataclass
class RoundReport:
    """What one round did (logged; the tests and the benchmark read it)."""

    partitions_made: list[str] = field(default_factory=list)
    partitions_dropped: list[str] = field(default_factory=list)
    rows_deleted: int = 0
    payloads_expired: int = 0
    skipped: bool = False


_TENANTS = text("SELECT id, plan, row_retention_days, payload_retention_days FROM tenants")
_PARTITIONS = text(
    """
    SELECT child.relname AS name, parent.relname AS parent, i.inhdetachpending AS pending
    FROM pg_inherits i
    JOIN pg_class child ON child.oid = i.inhrelid
    JOIN pg_class parent ON parent.oid = i.inhparent
    WHERE parent.relname = ANY(:parents)
    """
)
# The statements per table of rows (constant table and column names only).
_MARKS = {"jobs": "jobs_before", "events": "events_before"}
_DELETE_SHORT = {
    table: text(
        f"DELETE FROM {table} WHERE id = ANY(ARRAY(SELECT id FROM {table} "  # noqa: S608
        "WHERE tenant_id = ANY(:tenants) AND id < :bound LIMIT :batch))"
    )
    for table in _MARKS
}
_READ_MARK = {
    table: text(f"SELECT {mark} FROM payload_expiry WHERE tenant_id = :t FOR UPDATE")  # noqa: S608
    for table, mark in _MARKS.items()
}
_NEXT_IDS = {
    table: text(
        f"SELECT id FROM {table} WHERE tenant_id = :t AND id >= :start AND id < :bound "  # noqa: S608
        "ORDER BY id LIMIT :batch"
    )
    for table in _MARKS
}
_SET_MARK = {
    table: text(
        f"INSERT INTO payload_expiry (tenant_id, {mark}) VALUES (:t, :done) "  # noqa: S608
        f"ON CONFLICT (tenant_id) DO UPDATE SET {mark} = EXCLUDED.{mark}"
    )
    for table, mark in _MARKS.items()
}
_ALL_MARKS = text("SELECT tenant_id, jobs_before, events_before FROM payload_expiry")
_EXPIRY_SLACK = timedelta(hours=1)
_DELETE_AUDIT = text(
    """
    DELETE FROM audit_log WHERE id = ANY(ARRAY(
        SELECT id FROM audit_log
        WHERE (tenant_id = ANY(:tenants) OR (:operators AND tenant_id IS NULL)) AND id < :bound LIMIT :batch
    ))
    """
)
# Dropping a detached partition removes its foreign keys, whose triggers live on the referenced
# tables (today's jobs partition, tenants): such a lock must never queue long in front of the
# traffic, nor deadlock with a plan cached before the detach (it locks the detached table to see
# it is stale). Each statement waits at most _SHORT_LOCK, is tried _TRIES times, else the next
# round drops the table (it is detached: nothing reads it any more).
_SHORT_LOCK = "200ms"
_TRIES = 20
_GAVE_WAY = ("55P03", "40P01")  # lock_not_available, deadlock_detected
_PENDING_DETACH = "55000"  # object_not_in_prerequisite_state: "already pending detach"
_DETACHED = text(
    """
    SELECT c.relname FROM pg_class c
    WHERE c.relkind = 'r' AND c.relname ~ '^(jobs|attempts|job_events|events)_p[0-9]{8}$'
      AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid)
    """
)
# The table's own foreign keys (each has a clone per partition of the table it refers to, which
# goes with it).
_FOREIGN_KEYS = text(
    "SELECT conname FROM pg_constraint WHERE conrelid = CAST(:t AS regclass) AND contype = 'f' AND conparentid = 0"
)
# Rows of unpartitioned tables that refer to a day of jobs (their foreign keys would keep it).
_BEFORE_DROP = [
    "DELETE FROM dead_letters WHERE job_id >= :low AND job_id < :high",
    "DELETE FROM platform_emails WHERE id >= :low AND id < :high",
    "UPDATE inbound_events SET job_id = NULL WHERE job_id >= :low AND job_id < :high",
]


class Retention:
    def __init__(self, engine: AsyncEngine, settings: Settings) -> None:
        self.engine = engine
        self.row_days = plan_days(settings.row_retention_days)
        self.payload_days = plan_days(settings.payload_retention_days)
        self.batch = settings.retention_batch

    async def run(self, now: datetime | None = None) -> RoundReport:
        """One round (`now`: the clock, for a test's old rows)."""
        now = now or datetime.now(UTC)
        report = RoundReport()
        async with self.engine.connect() as lock:
            locked = (await lock.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": _RETENTION_LOCK})).scalar()
            await lock.commit()
            if not locked:
                report.skipped = True
                return report
            try:
                await self._round(now, report)
            finally:
                await lock.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _RETENTION_LOCK})
                await lock.commit()
        if report.partitions_dropped or report.rows_deleted or report.payloads_expired:
            log.info("retention round", extra={"report": report.__dict__})
        return report

    async def _round(self, now: datetime, report: RoundReport) -> None:
        async with self.engine.begin() as conn:
            tenants = await self.tenants(conn)
            present = list((await conn.execute(_PARTITIONS, {"parents": list(PARTITIONED)})).all())
        longest = max((t.row_days for t in tenants), default=max(self.row_days.values()))
        await self._finish_detaches(present)
        await self._make_partitions(now.date(), {row.name for row in present}, report)
        await self._drop_days(now - timedelta(days=longest), present, report)
        await self._delete_short_rows(now, tenants, longest, report)
        await self._delete_old_audit(now, tenants, longest, report)
        await self._expire_payloads(now, tenants, report)

    async def tenants(self, conn: AsyncConnection) -> list[TenantRetention]:
        found = []
        for row in await conn.execute(_TENANTS):
            rows = row.row_retention_days or self.row_days.get(row.plan, self.row_days["free"])
            payloads = row.payload_retention_days or self.payload_days.get(row.plan, self.payload_days["free"])
            found.append(TenantRetention(row.id, rows, min(payloads, rows)))
        return found

    async def _ddl(self, statements: list[str]) -> None:
        """Outside a transaction (DETACH ... CONCURRENTLY needs that), each waiting for its lock
        at most `_LOCK_TIMEOUT`."""
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text(f"SET lock_timeout = '{_LOCK_TIMEOUT}'"))
            for statement in statements:
                await conn.execute(text(statement))
            await conn.execute(text("RESET lock_timeout"))

    async def _finish_detaches(self, present: list[Any]) -> None:
        """A concurrent detach interrupted midway (a ledger stopped) leaves its partition pending;
        a detached partition whose drop gave way to the traffic is dropped now."""
        for row in present:
            if row.pending:
                await self._patiently(f"ALTER TABLE {row.parent} DETACH PARTITION {row.name} FINALIZE")
        async with self.engine.connect() as conn:
            detached = list((await conn.execute(_DETACHED)).scalars())
        for name in detached:
            await self._drop_detached(name)

    async def _patiently(self, statement: str) -> bool:
        """`statement`, waiting at most `_SHORT_LOCK` for its locks, tried `_TRIES` times; False
        when the traffic kept it out (the next round tries again)."""
        for _ in range(_TRIES):
            try:
                async with self.engine.connect() as conn:
                    conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                    await conn.execute(text(f"SET lock_timeout = '{_SHORT_LOCK}'"))
                    await conn.execute(text(statement))
                return True
            except DBAPIError as error:
                if str(getattr(error.orig, "sqlstate", "")) not in _GAVE_WAY:
                    raise
                await asyncio.sleep(0.5)
        log.info("retention gave way to the traffic", extra={"statement": statement})
        return False

    async def _detach(self, parent: str, name: str) -> bool:
        """DETACH ... CONCURRENTLY, giving way to the traffic (`_patiently`): it takes the
        partition's exclusive lock, which every statement whose plan covers all the partitions
        asks for too, so a long wait would hold the traffic queued behind it (the 2-second wait
        of `_ddl` stalled deliveries for a second in the retention bench, then deadlocked). One
        interrupted after its first step stays pending: FINALIZE ends it."""
        try:
            return await self._patiently(f"ALTER TABLE {parent} DETACH PARTITION {name} CONCURRENTLY")
        except DBAPIError as error:
            if str(getattr(error.orig, "sqlstate", "")) != _PENDING_DETACH:
                raise
        return await self._patiently(f"ALTER TABLE {parent} DETACH PARTITION {name} FINALIZE")

    async def _drop_detached(self, name: str) -> bool:
        """A detached partition: its foreign keys first, each on its own (their triggers live on
        the referenced tables: today's jobs partition, tenants), then the table."""
        async with self.engine.connect() as conn:
            keys = list((await conn.execute(_FOREIGN_KEYS, {"t": name})).scalars())
        for key in keys:
            if not await self._patiently(f"ALTER TABLE {name} DROP CONSTRAINT {key}"):
                return False
        return await self._patiently(f"DROP TABLE {name}")

    async def _make_partitions(self, today: date, present: set[str], report: RoundReport) -> None:
        for table in PARTITIONED:  # parents of foreign keys first: jobs before attempts
            for day in days_ahead(today):
                if partition_name(table, day) not in present:
                    await self._ddl(day_sql(table, day))
                    report.partitions_made.append(partition_name(table, day))

    async def _drop_days(self, cutoff: datetime, present: list[Any], report: RoundReport) -> None:
        """Every day wholly older than `cutoff`: its jobs (children first) and its events."""
        names = {row.name for row in present if not row.pending}
        for table in ("jobs", "events"):
            days = sorted({d for row in present if (d := day_of_partition(table, row.name)) is not None})
            for day in days:
                if datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1) > cutoff:
                    break
                if table == "jobs":
                    bounds = {"low": day_start(day), "high": day_start(day + timedelta(days=1))}
                    async with self.engine.begin() as conn:
                        for statement in _BEFORE_DROP:
                            await conn.execute(text(statement), bounds)
                for each in (*JOB_CHILDREN, "jobs") if table == "jobs" else ("events",):
                    name = partition_name(each, day)
                    if name in names:
                        if not await self._detach(each, name):
                            return  # the traffic kept it out: the next round goes on from here
                        if await self._drop_detached(name):
                            report.partitions_dropped.append(name)

    async def _delete_short_rows(
        self, now: datetime, tenants: list[TenantRetention], longest: int, report: RoundReport
    ) -> None:
        """The rows of tenants whose retention is shorter than the longest, by retention."""
        shorter: dict[int, list[uuid.UUID]] = defaultdict(list)
        for tenant in tenants:
            if tenant.row_days < longest:
                shorter[tenant.row_days].append(tenant.tenant_id)
        for days, tenant_ids in shorter.items():
            bound = id_at(now - timedelta(days=days))
            for statement in _DELETE_SHORT.values():
                while True:
                    async with self.engine.begin() as conn:
                        params = {"tenants": tenant_ids, "bound": bound, "batch": self.batch}
                        deleted = (await conn.execute(statement, params)).rowcount or 0
                    report.rows_deleted += deleted
                    if deleted < self.batch:
                        break

    async def _delete_old_audit(
        self, now: datetime, tenants: list[TenantRetention], longest: int, report: RoundReport
    ) -> None:
        """The audit log is kept like rows: a tenant's entries for its row retention, the operators'
        own (no tenant) for the longest. The log's trigger lets only a transaction that says so
        delete (migration 0021)."""
        by_days: dict[int, list[uuid.UUID]] = defaultdict(list)
        for tenant in tenants:
            by_days[tenant.row_days].append(tenant.tenant_id)
        groups = [(days, ids, False) for days, ids in by_days.items()] + [(longest, [], True)]
        for days, tenant_ids, operators in groups:
            params = {"tenants": tenant_ids, "operators": operators, "bound": id_at(now - timedelta(days=days))}
            while True:
                async with self.engine.begin() as conn:
                    await conn.execute(text("SELECT set_config('herald.audit_erasure', 'on', true)"))
                    deleted = (await conn.execute(_DELETE_AUDIT, {**params, "batch": self.batch})).rowcount or 0
                report.rows_deleted += deleted
                if deleted < self.batch:
                    break

    async def _expire_payloads(self, now: datetime, tenants: list[TenantRetention], report: RoundReport) -> None:
        """Each tenant's payloads past its retention, skipping a tenant whose mark is within
        `_EXPIRY_SLACK` of it (a payload outlives its retention by at most that much, and a round
        with many tenants costs one read instead of a transaction per tenant)."""
        async with self.engine.connect() as conn:
            marks: dict[uuid.UUID, dict[str, uuid.UUID | None]] = {
                row.tenant_id: dict(row._mapping) for row in await conn.execute(_ALL_MARKS)
            }
        for tenant in tenants:
            bound = id_at(now - timedelta(days=tenant.payload_days))
            near = id_at(now - timedelta(days=tenant.payload_days) - _EXPIRY_SLACK)
            for table, mark in _MARKS.items():
                done = (marks.get(tenant.tenant_id) or {}).get(mark)
                if done is None or done < near:
                    report.payloads_expired += await self._expire(table, tenant.tenant_id, bound)

    async def _expire(self, table: str, tenant_id: uuid.UUID, bound: uuid.UUID) -> int:
        """One tenant's payloads in `table` below `bound`, from its mark on, a batch a transaction."""
        expired = 0
        expunge = expunge_jobs if table == "jobs" else expunge_events
        while True:
            async with self.engine.begin() as conn:
                start = (await conn.execute(_READ_MARK[table], {"t": tenant_id})).scalar() or uuid.UUID(int=0)
                if start >= bound:
                    return expired
                params = {"t": tenant_id, "start": start, "bound": bound, "batch": self.batch}
                ids = list((await conn.execute(_NEXT_IDS[table], params)).scalars())
                expired += await expunge(conn, ids)
                done = uuid.UUID(int=ids[-1].int + 1) if len(ids) == self.batch else bound
                await conn.execute(_SET_MARK[table], {"t": tenant_id, "done": done})
            if len(ids) < self.batch:
                return expired
