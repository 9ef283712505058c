"""Jobs: the reads of jobs and their attempts, and the one guarded status transition every
writer uses (store/job_creation.py, store/deliveries.py, store/dead_letters.py)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, or_, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import attempts, jobs
from herald_ledger.job_status import JobStatus, allowed_sources

JOB_SUMMARY_COLUMNS = [c for c in jobs.c if c.name not in ("body", "request", "publish_claimed_until")]

ids_param = bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))


def status_array(statuses: frozenset[JobStatus]) -> list[str]:
    return sorted(s.value for s in statuses)


_TRANSITION = text(
    """
    WITH current AS (
        SELECT id, status FROM jobs WHERE id = ANY(:ids) AND status = ANY(:sources) FOR UPDATE
    ), changed AS (
        UPDATE jobs SET status = :target, updated_at = now(),
            last_error = COALESCE(:reason_error, jobs.last_error)
        FROM current WHERE jobs.id = current.id AND jobs.id = ANY(:ids)
        RETURNING jobs.id, current.status AS from_status, jobs.attempt_count, jobs.channel
    ), logged AS (
        INSERT INTO job_events (job_id, from_status, to_status, reason)
        SELECT id, from_status, :target, :reason FROM changed WHERE from_status <> :target AND :log_event
    )
    SELECT id, from_status, attempt_count, channel FROM changed
    """
).bindparams(ids_param)


async def transition(
    conn: AsyncConnection,
    job_ids: Sequence[uuid.UUID],
    target: JobStatus,
    reason: str,
    error: str | None = None,
    only_from: frozenset[JobStatus] | None = None,
    log_event: bool = True,
) -> list[Row[Any]]:
    """Moves the jobs that may legally move to `target`; returns those that moved.

    `log_event=False` skips the history row for the two routine hops (published,
    delivery started): they carry no information a tenant needs, and every row
    written per job costs (profiled at 9 rows a job before).

    `only_from` narrows the legal sources to the edge an operation means: "the bus
    took it" is PENDING -> QUEUED only, while "retry scheduled" is DELIVERING ->
    QUEUED only. Without the narrowing, a late "published" mark could pull a job
    that a sender is already delivering back to QUEUED.
    """
    sources = allowed_sources(target) if only_from is None else allowed_sources(target) & only_from
    if not job_ids or not sources:
        return []
    result = await conn.execute(
        _TRANSITION,
        {
            "ids": list(job_ids),
            "sources": status_array(sources),
            "target": target.value,
            "reason": reason,
            "reason_error": error,
            "log_event": log_event,
        },
    )
    return list(result.all())


async def job_summaries(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Row[Any]]:
    if not job_ids:
        return {}
    rows = (await conn.execute(select(*JOB_SUMMARY_COLUMNS).where(jobs.c.id.in_(list(job_ids))))).all()
    return {row.id: row for row in rows}


async def get_job(
    conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID, include_request: bool
) -> Row[Any] | None:
    columns = list(jobs.c) if include_request else JOB_SUMMARY_COLUMNS
    query = select(*columns).where(and_(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id))
    return (await conn.execute(query)).first()


def encode_cursor(job_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(job_id.bytes).decode().rstrip("=")


def decode_cursor(cursor: str) -> uuid.UUID | None:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return uuid.UUID(bytes=raw)
    except (ValueError, TypeError):
        return None


async def list_jobs(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    page_size: int,
    after: uuid.UUID | None,
    status: JobStatus | None,
    delivering: Sequence[uuid.UUID],
    channel: str | None,
    created_after: datetime | None,
    created_before: datetime | None,
    url: str = "",
    event_id: str = "",
    target_id: uuid.UUID | None = None,
) -> tuple[list[Row[Any]], str]:
    """Newest first. Ids are UUIDv7, so ordering by id is ordering by creation. A webhook's
    URL comes along (not the rest of the request: headers and body stay out of a list).
    `delivering`: the jobs known in flight (herald_ledger.inflight), whose rows say
    PENDING or QUEUED while readers are told DELIVERING; a status filter follows that."""
    columns: list[Any] = [*JOB_SUMMARY_COLUMNS, jobs.c.request["url"].astext.label("url")]
    query = select(*columns).where(jobs.c.tenant_id == tenant_id)
    if url:
        query = query.where(jobs.c.request["url"].astext == url)
    if event_id:
        query = query.where(jobs.c.event_id == event_id)
    if target_id is not None:
        query = query.where(jobs.c.target_id == target_id)
    if after is not None:
        query = query.where(jobs.c.id < after)
    under_way = [JobStatus.PENDING.value, JobStatus.QUEUED.value]
    if status is JobStatus.DELIVERING:
        query = query.where(
            or_(
                jobs.c.status == status.value,
                and_(jobs.c.status.in_(under_way), jobs.c.id.in_(list(delivering))),
            )
        )
    elif status is not None:
        query = query.where(jobs.c.status == status.value)
        if status.value in under_way and delivering:
            query = query.where(jobs.c.id.not_in(list(delivering)))
    if channel is not None:
        query = query.where(jobs.c.channel == channel)
    if created_after is not None:
        query = query.where(jobs.c.created_at >= created_after)
    if created_before is not None:
        query = query.where(jobs.c.created_at < created_before)
    rows = (await conn.execute(query.order_by(jobs.c.id.desc()).limit(page_size + 1))).all()
    next_cursor = encode_cursor(rows[page_size - 1].id) if len(rows) > page_size else ""
    return list(rows[:page_size]), next_cursor


async def list_attempts(conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID) -> list[Row[Any]] | None:
    owner = (await conn.execute(select(jobs.c.tenant_id).where(jobs.c.id == job_id))).scalar()
    if owner != tenant_id:
        return None
    query = select(attempts).where(attempts.c.job_id == job_id).order_by(attempts.c.id)
    return list((await conn.execute(query)).all())


_NOTE_WAITING = text(
    """
    UPDATE jobs SET waiting_reason = note.reason, waiting_noted_at = clock_timestamp()
    FROM unnest(CAST(:ids AS uuid[]), CAST(:reasons AS text[])) AS note(id, reason)
    WHERE jobs.id = note.id AND jobs.status = 'QUEUED'
    """
)


async def note_waiting(conn: AsyncConnection, notes: Sequence[tuple[uuid.UUID, str]]) -> int:
    """Why these QUEUED jobs wait without a call (others are left alone); how many were noted.
    `clock_timestamp()`, not the transaction's `now()`, so a note is never older than an
    attempt recorded before it."""
    found = await conn.execute(_NOTE_WAITING, {"ids": [n[0] for n in notes], "reasons": [n[1] for n in notes]})
    return int(found.rowcount or 0)
