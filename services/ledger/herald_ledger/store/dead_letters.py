"""Dead letters and explicit retries: FAILED (or an event's SKIPPED delivery, admitted against
the quota then) -> PENDING with a fresh attempt budget, the dead-letter entry released; the
dead-letter reads."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select, text
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import dead_letters, jobs
from herald_ledger.job_status import JobStatus
from herald_ledger.store.driver import in_transaction
from herald_ledger.store.job_creation import NewJob
from herald_ledger.store.jobs import ids_param, transition
from herald_ledger.store.quota import admit
from herald_ledger.store.usage import write_usage


@dataclass
class RetryOutcome:
    job_id: str
    retried: bool
    status: JobStatus | None
    detail: str = ""


# ---- explicit retries and dead letters ---------------------------------------------------

_RESET_FOR_RETRY = text(
    """
    UPDATE jobs SET attempt_count = 0, run = run + 1, run_started_at = now(), last_error = NULL, provider_id = NULL,
        provider_message_id = NULL, publish_claimed_until = now() + make_interval(secs => :lease_s)
    WHERE id = ANY(:ids)
    RETURNING *
    """
).bindparams(ids_param)

_RELEASE_DEAD_LETTERS = text(
    """
    UPDATE dead_letters SET retried_at = now()
    WHERE job_id = ANY(:ids) AND retried_at IS NULL
    RETURNING stream_sequence
    """
).bindparams(ids_param)


async def waiting_dead_letters(
    conn: AsyncConnection, tenant_id: uuid.UUID | None, since: datetime | None, limit: int
) -> list[uuid.UUID]:
    """Jobs whose dead-letter entry waits for a retry, oldest first."""
    query = select(dead_letters.c.job_id).where(dead_letters.c.retried_at.is_(None))
    if tenant_id is not None:
        query = query.where(dead_letters.c.tenant_id == tenant_id)
    if since is not None:
        query = query.where(dead_letters.c.dead_lettered_at >= since)
    rows = (await conn.execute(query.order_by(dead_letters.c.dead_lettered_at).limit(limit))).all()
    return list(dict.fromkeys(row.job_id for row in rows))


async def retry_jobs(
    conn: AsyncConnection, tenant_id: uuid.UUID | None, job_ids: Sequence[uuid.UUID], lease_s: float
) -> tuple[list[RetryOutcome], list[Row[Any]], list[int]]:
    """FAILED -> PENDING through the transition table, with a fresh attempt budget and
    the next run number; the jobs' waiting dead-letter entries are marked retried. The
    rows come back with their requests, leased for `lease_s` so the outbox leaves them to
    the caller, which publishes them at once. `tenant_id` scopes it (another tenant's job
    reads as not found)."""
    ids = list(dict.fromkeys(job_ids))
    if tenant_id is not None and ids:
        owned = select(jobs.c.id).where(and_(jobs.c.id.in_(ids), jobs.c.tenant_id == tenant_id))
        mine = {row.id for row in (await conn.execute(owned)).all()}
        ids_in_scope = [i for i in ids if i in mine]
    else:
        ids_in_scope = ids
    expunged = await _expunged(conn, ids_in_scope)
    ids_in_scope = [i for i in ids_in_scope if i not in expunged]
    over_quota = await _admit_skipped(conn, ids_in_scope)
    ids_in_scope = [i for i in ids_in_scope if i not in over_quota]
    moved = {
        row.id
        for row in await transition(
            conn, ids_in_scope, JobStatus.PENDING, "retried", only_from=frozenset({JobStatus.FAILED, JobStatus.SKIPPED})
        )
    }
    rows: list[Row[Any]] = []
    released: list[int] = []
    if moved:
        rows = list((await conn.execute(_RESET_FOR_RETRY, {"ids": sorted(moved), "lease_s": lease_s})).all())
        released = [
            int(r.stream_sequence)
            for r in (await conn.execute(_RELEASE_DEAD_LETTERS, {"ids": sorted(moved)})).all()
            if r.stream_sequence
        ]
    current: dict[uuid.UUID, JobStatus] = {}
    others = [i for i in ids_in_scope if i not in moved]
    if others:
        found = (await conn.execute(select(jobs.c.id, jobs.c.status).where(jobs.c.id.in_(others)))).all()
        current = {row.id: JobStatus(row.status) for row in found}
    outcomes = []
    for job_id in ids:
        if job_id in expunged:
            outcomes.append(RetryOutcome(str(job_id), False, expunged[job_id], EXPUNGED))
        elif job_id in over_quota:
            outcomes.append(RetryOutcome(str(job_id), False, JobStatus.SKIPPED, over_quota[job_id]))
        elif job_id in moved:
            outcomes.append(RetryOutcome(str(job_id), True, JobStatus.PENDING))
        elif job_id in current:
            outcomes.append(
                RetryOutcome(
                    str(job_id),
                    False,
                    current[job_id],
                    f"only a failed or skipped job can be retried; it is {current[job_id].value.lower()}",
                )
            )
        else:
            outcomes.append(RetryOutcome(str(job_id), False, None, "not found"))
    by_id = {row.id: row for row in rows}
    return outcomes, [by_id[i] for i in ids if i in by_id], released


EXPUNGED = "its payload was expunged: it cannot run again"


async def _expunged(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, JobStatus]:
    """The jobs among `job_ids` whose payload is gone (herald_ledger.store.payloads), with their status."""
    if not job_ids:
        return {}
    query = select(jobs.c.id, jobs.c.status).where(
        and_(jobs.c.id.in_(list(job_ids)), jobs.c.payload_expunged_at.is_not(None))
    )
    return {row.id: JobStatus(row.status) for row in await conn.execute(query)}


async def _admit_skipped(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, str]:
    """A skipped delivery never counted against the quota; running it now does: admitted like a
    new job (the counters written in this transaction). Returns the ones refused, with why."""
    query = select(jobs.c.id, jobs.c.tenant_id, jobs.c.channel, jobs.c.priority).where(
        and_(jobs.c.id.in_(list(job_ids)), jobs.c.status == JobStatus.SKIPPED.value)
    )
    rows = (await conn.execute(query)).all() if job_ids else []
    if not rows:
        return {}
    stubs = [NewJob(r.tenant_id, r.channel, r.priority, {}, b"", id=r.id) for r in rows]
    verdicts, usage = await admit(conn, stubs)
    await write_usage(await in_transaction(conn), usage)
    return {stub.id: v.rejection for stub, v in zip(stubs, verdicts, strict=True) if v.job is None}


async def list_dead_letters(
    conn: AsyncConnection,
    tenant_id: uuid.UUID | None,
    since: datetime | None,
    include_retried: bool,
    page_size: int,
    before_id: int | None,
) -> tuple[list[Row[Any]], str]:
    """Newest first; the cursor is the last entry's id."""
    query = select(dead_letters)
    if tenant_id is not None:
        query = query.where(dead_letters.c.tenant_id == tenant_id)
    if since is not None:
        query = query.where(dead_letters.c.dead_lettered_at >= since)
    if not include_retried:
        query = query.where(dead_letters.c.retried_at.is_(None))
    if before_id is not None:
        query = query.where(dead_letters.c.id < before_id)
    rows = list((await conn.execute(query.order_by(dead_letters.c.id.desc()).limit(page_size + 1))).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor


async def latest_dead_letter(conn: AsyncConnection, job_id: uuid.UUID) -> Row[Any] | None:
    query = select(dead_letters).where(dead_letters.c.job_id == job_id).order_by(dead_letters.c.id.desc()).limit(1)
    return (await conn.execute(query)).first()
