"""Making a payload gone: the one place that says what a job's or an event's payload is and how
it goes, used by expunge on demand (DELETE /v1/jobs/{id}/payload, /v1/events/{id}/payload) and
by retention (herald_ledger.retention).

A job's payload is its body, an email's request (recipients, subject, content) or a webhook's
request headers (the URL and content type stay: they say where it went, not what), its attempts'
response headers and excerpts, and the stored answer of the idempotency key it came with. An
event's is its payload; its deliveries are jobs and go by the job statement. The rows stay: a
job still answers with its status and its attempts' outcomes, and says when its payload went.

Only a settled job loses its payload: one still under way needs it for its next attempt.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Text, and_, bindparam, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import events, jobs
from herald_ledger.job_status import TERMINAL
from herald_ledger.store.jobs import ids_param, status_array

SETTLED = status_array(TERMINAL)

_EXPUNGE_JOBS = text(
    """
    WITH gone AS (
        UPDATE jobs SET body = '\\x'::bytea, payload_expunged_at = now(),
            request = CASE WHEN channel = 'webhook'
                THEN jsonb_build_object('url', request->'url', 'content_type', request->'content_type')
                ELSE '{}'::jsonb END
        WHERE id = ANY(:ids) AND payload_expunged_at IS NULL AND status = ANY(:settled)
        RETURNING id, tenant_id, idempotency_key
    ), excerpts AS (
        UPDATE attempts SET response_excerpt = NULL, response_headers = NULL
        WHERE job_id = ANY(:ids) AND job_id IN (SELECT id FROM gone)
            AND (response_excerpt IS NOT NULL OR response_headers IS NOT NULL)
    ), answers AS (
        UPDATE idempotency_keys SET body = NULL FROM gone
        WHERE idempotency_keys.tenant_id = gone.tenant_id AND idempotency_keys.key = gone.idempotency_key
            AND idempotency_keys.body IS NOT NULL
    )
    SELECT count(*) FROM gone
    """
).bindparams(ids_param, bindparam("settled", type_=ARRAY(Text)))

_EXPUNGE_EVENTS = text(
    """
    UPDATE events SET payload = NULL, payload_expunged_at = now()
    WHERE id = ANY(:ids) AND payload_expunged_at IS NULL
    """
).bindparams(ids_param)


async def expunge_jobs(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> int:
    """Takes the payload of every settled job among `job_ids` that still has it; how many lost it."""
    if not job_ids:
        return 0
    found = await conn.execute(_EXPUNGE_JOBS, {"ids": list(job_ids), "settled": SETTLED})
    return int(found.scalar() or 0)


async def expunge_events(conn: AsyncConnection, row_ids: Sequence[uuid.UUID]) -> int:
    """Takes the payload of the event rows `row_ids` (ids of rows, not the tenant's event ids)."""
    if not row_ids:
        return 0
    return int((await conn.execute(_EXPUNGE_EVENTS, {"ids": list(row_ids)})).rowcount or 0)


class UnderWay(Exception):
    """A job (or an event's delivery) still needs its payload for an attempt to come."""


async def expunge_job(conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID) -> bool:
    """On demand: False when the tenant has no such job; UnderWay while it is not settled."""
    query = select(jobs.c.status).where(and_(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id)).with_for_update()
    status = (await conn.execute(query)).scalar()
    if status is None:
        return False
    if status not in SETTLED:
        raise UnderWay("the job is still under way; its payload can go once it is settled")
    await expunge_jobs(conn, [job_id])
    return True


async def expunge_event(conn: AsyncConnection, tenant_id: uuid.UUID, event_id: str) -> bool:
    """On demand: the event's payload and its deliveries' (every row of that event id); False when
    the tenant has no such event; UnderWay while one of its deliveries is not settled."""
    rows = await conn.execute(
        select(events.c.id).where(and_(events.c.tenant_id == tenant_id, events.c.event_id == event_id))
    )
    row_ids = [row.id for row in rows]
    if not row_ids:
        return False
    deliveries = await conn.execute(
        select(jobs.c.id, jobs.c.status)
        .where(and_(jobs.c.tenant_id == tenant_id, jobs.c.event_id == event_id))
        .with_for_update()
    )
    found = list(deliveries)
    if any(row.status not in SETTLED for row in found):
        raise UnderWay("a delivery of the event is still under way; its payload can go once they are settled")
    await expunge_events(conn, row_ids)
    await expunge_jobs(conn, [row.id for row in found])
    return True
