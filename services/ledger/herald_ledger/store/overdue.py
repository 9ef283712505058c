"""The reconciler's statements: jobs the bus should have acted on by now, claimed in bounded
batches, and the age of the oldest job waiting in each status (herald_ledger.reconciler)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

# A job is overdue when the bus has not acted on it within `queued_s` of the time its work was
# due (its commit: `updated_at`), or `grace_s` after its scheduled retry (`next_attempt_at`).
# The index ix_jobs_unsettled_due orders unsettled jobs by that time, so the scan reads the
# overdue ones (and those between the shorter and the longer bound), oldest first. A claim
# moves the job's time to now (the copy's publication), so it is republished at most once per
# bound, and SKIP LOCKED lets several ledger replicas share the work, as does a row that an
# outcome is updating (it is being acted on). The history says why the job was published again.
# A job held back by an unfinished earlier job of its ordering key waits for that one (whose
# retries may take hours): it is overdue only once nothing before it is left. A parked job is
# the ledger's to publish when due (store.parking), never overdue.
_CLAIM = text(
    """
    WITH due AS (
        SELECT id, status FROM jobs
        WHERE status IN ('QUEUED', 'DELIVERING') AND parked_on IS NULL AND NOT id = ANY(:delivering)
          AND COALESCE(next_attempt_at, updated_at) < now() - make_interval(secs => :least_s)
          AND CASE WHEN next_attempt_at IS NULL THEN updated_at < now() - make_interval(secs => :queued_s)
                   ELSE next_attempt_at < now() - make_interval(secs => :grace_s) END
          AND NOT (ordering_key IS NOT NULL AND EXISTS (
              SELECT 1 FROM jobs earlier
              WHERE earlier.tenant_id = jobs.tenant_id AND earlier.ordering_key = jobs.ordering_key
                AND earlier.seq < jobs.seq
                AND earlier.status NOT IN ('DELIVERED', 'FAILED', 'SUPPRESSED', 'BOUNCED', 'COMPLAINED')
          ))
        ORDER BY COALESCE(next_attempt_at, updated_at)
        LIMIT :limit FOR UPDATE SKIP LOCKED
    ), claimed AS (
        UPDATE jobs SET updated_at = now(), next_attempt_at = NULL FROM due WHERE jobs.id = due.id
        RETURNING jobs.*
    ), logged AS (
        INSERT INTO job_events (job_id, from_status, to_status, reason)
        SELECT id, status, status, :reason FROM due
    )
    SELECT * FROM claimed
    """
).bindparams(bindparam("delivering", type_=ARRAY(PG_UUID(as_uuid=True))))

REASON = "republished: the bus had not acted on it in time"


async def claim_overdue(
    conn: AsyncConnection, queued_s: float, grace_s: float, limit: int, delivering: Sequence[uuid.UUID] = ()
) -> list[Row[Any]]:
    """Claims at most `limit` overdue jobs, but none of `delivering` (known in flight: a sender
    is acting on them, whatever their time says)."""
    params = {
        "delivering": list(delivering),
        "least_s": min(queued_s, grace_s),
        "queued_s": queued_s,
        "grace_s": grace_s,
        "limit": limit,
        "reason": REASON,
    }
    return list((await conn.execute(_CLAIM, params)).all())


# One probe per status, each the first row of an index in order (never a scan of a backlog).
_OLDEST = text(
    """
    SELECT 'PENDING' AS status,
           (SELECT EXTRACT(EPOCH FROM now() - updated_at) FROM jobs
            WHERE status = 'PENDING' ORDER BY updated_at LIMIT 1) AS age_s
    UNION ALL
    SELECT s.status,
           (SELECT EXTRACT(EPOCH FROM now() - COALESCE(next_attempt_at, updated_at)) FROM jobs
            WHERE status IN ('QUEUED', 'DELIVERING') AND jobs.status = s.status
            ORDER BY COALESCE(next_attempt_at, updated_at) LIMIT 1)
    FROM (VALUES ('QUEUED'), ('DELIVERING')) AS s(status)
    """
)


async def oldest_unsettled(conn: AsyncConnection) -> dict[str, float]:
    """Per non-terminal status, the age in seconds of the job waiting longest (0: none waits,
    or its retry is not due yet)."""
    rows = (await conn.execute(_OLDEST)).all()
    return {row.status: max(float(row.age_s or 0.0), 0.0) for row in rows}
