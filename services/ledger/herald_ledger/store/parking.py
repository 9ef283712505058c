"""Jobs the ledger holds off the bus (`jobs.parked_on`, migration 0028), and their release.

A work message NAKed with a delay stays unacknowledged on its consumer, one fairness lane
shared by many tenants, and JetStream delivers nothing new from a consumer whose
`max_ack_pending` messages are all unacknowledged. So what must wait long is acknowledged and
parked here instead: a retry of at least `park_retries_from_s` (recorded with its attempt, see
`store.deliveries`; `parked_on` ''), and a delivery the sender holds back (`park`, `parked_on`
its call lane: the target's open circuit, or a turn far away). The lane's release brings a
circuit's jobs back at once (`release`: due now, at a pace, and `parked_on` '' from then on, so
a lane still named has jobs nobody released; `parked_lanes` lists those lanes); a lane's recheck
makes one of its jobs due (`recheck`, to be a probe). The reconciler
publishes each parked job again when it is due (`due_parked`, then `unparked`): the same
republication as an overdue job's, without its grace, and without a history row (the retry, or
the waiting note, says why it waited).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

# A parked delivery's lane is the sender's (a target, a direct webhook's origin); longer is cut.
MAX_LANE = 300

# `updated_at` stays: the sender's waiting note (written just before) is shown until it moves.
_PARK = text(
    """
    UPDATE jobs SET parked_on = park.lane, next_attempt_at = now() + make_interval(secs => park.delay_s)
    FROM unnest(CAST(:ids AS uuid[]), CAST(:lanes AS text[]), CAST(:delays AS float8[])) AS park(id, lane, delay_s)
    WHERE jobs.id = park.id AND jobs.status = 'QUEUED'
    RETURNING jobs.id, jobs.tenant_id, jobs.parked_on
    """
)

# Due from now on, `per_s` a second in the order they were parked: a lane's whole backlog on
# the bus at once would wait there for its target's bound, unacknowledged, and fill its
# consumer's limit again. Released, a job waits on no lane: a second release finds only what
# was parked since. The later jobs of a released job's ordering key, parked until its old time
# (`parked_on` '', from their start's wait), come due a second after its new one: they would
# otherwise wait for the recheck the circuit no longer needs.
_RELEASE = text(
    """
    WITH lane AS (
        SELECT id, row_number() OVER (ORDER BY next_attempt_at, id) - 1 AS place FROM jobs
        WHERE tenant_id = :tenant_id AND parked_on = :lane AND parked_on <> '' AND status = 'QUEUED'
    ), released AS (
        UPDATE jobs SET parked_on = '',
            next_attempt_at = LEAST(jobs.next_attempt_at, now() + make_interval(secs => lane.place / :per_s))
        FROM lane WHERE jobs.id = lane.id
        RETURNING jobs.ordering_key, jobs.seq, jobs.next_attempt_at
    ), keys AS (
        SELECT ordering_key, min(seq) AS seq, max(next_attempt_at) + interval '1 second' AS due
        FROM released WHERE ordering_key IS NOT NULL GROUP BY ordering_key
    ), behind AS (
        UPDATE jobs SET next_attempt_at = keys.due FROM keys
        WHERE jobs.tenant_id = :tenant_id AND jobs.ordering_key = keys.ordering_key AND jobs.seq > keys.seq
          AND jobs.parked_on = '' AND jobs.status = 'QUEUED' AND jobs.next_attempt_at > keys.due
    )
    SELECT count(*) FROM released
    """
)

# The (tenant, lane) pairs jobs are parked on, one index probe each (a loose index scan of
# ix_jobs_tenant_id_parked_on), not a read of every parked row: a dead target's backlog may be
# tens of thousands. Rows of jobs that ended while parked are counted too (a release finds
# nothing there).
_LANES = text(
    """
    WITH RECURSIVE lane AS (
        (SELECT tenant_id, parked_on FROM jobs WHERE parked_on IS NOT NULL AND parked_on <> ''
         ORDER BY tenant_id, parked_on LIMIT 1)
        UNION ALL
        SELECT later.tenant_id, later.parked_on FROM lane, LATERAL (
            SELECT tenant_id, parked_on FROM jobs
            WHERE parked_on IS NOT NULL AND parked_on <> ''
              AND (tenant_id, parked_on) > (lane.tenant_id, lane.parked_on)
            ORDER BY tenant_id, parked_on LIMIT 1
        ) later
    )
    SELECT tenant_id, parked_on FROM lane LIMIT :limit
    """
)

# One job parked on each of these lanes, any one (the first the index gives), due now: the lane's
# recheck. Jobs due already are left alone (the pass publishes them anyway).
_RECHECK = text(
    """
    UPDATE jobs SET next_attempt_at = now()
    FROM (
        SELECT (SELECT id FROM jobs j
                WHERE j.tenant_id = l.tenant_id AND j.parked_on = l.lane AND j.status = 'QUEUED'
                  AND j.next_attempt_at > now()
                LIMIT 1) AS id
        FROM unnest(CAST(:tenants AS uuid[]), CAST(:lanes AS text[])) AS l(tenant_id, lane)
    ) AS pick
    WHERE jobs.id = pick.id
    """
)

# Oldest due first, FOR UPDATE SKIP LOCKED so several ledger replicas share the work; the rows
# stay locked while their copies are published, and only those the bus took leave the parking
# (`unparked`): one it refused is still parked and due, for the next pass.
_DUE = text(
    """
    SELECT * FROM jobs
    WHERE parked_on IS NOT NULL AND status = 'QUEUED' AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT :limit FOR UPDATE SKIP LOCKED
    """
)

# Back in the bus's care: due since now, so the reconciler's bound for a retry applies to the
# copy. `updated_at` stays: the job's waiting note (why it was parked) is shown until an attempt.
_UNPARKED = text(
    """
    UPDATE jobs SET parked_on = NULL, next_attempt_at = now()
    WHERE id = ANY(CAST(:ids AS uuid[])) AND parked_on IS NOT NULL
    """
)

# Parked jobs not QUEUED any more (ended by an erasure's or an operator's hand) release nothing.
_COUNT = text("SELECT count(*) FROM jobs WHERE parked_on IS NOT NULL AND status = 'QUEUED'")


async def park(conn: AsyncConnection, parks: Sequence[tuple[uuid.UUID, str, float]]) -> list[Row[Any]]:
    """Parks these QUEUED jobs (id, lane, seconds at most); others are left alone (one not yet
    committed among them: its message reached the sender first). Those parked: id, tenant_id,
    parked_on."""
    found = await conn.execute(
        _PARK,
        {
            "ids": [p[0] for p in parks],
            "lanes": [p[1][:MAX_LANE] for p in parks],
            "delays": [max(0.0, p[2]) for p in parks],
        },
    )
    return list(found.all())


async def release(conn: AsyncConnection, tenant_id: uuid.UUID, lane: str, per_s: float) -> int:
    """The tenant's jobs parked on `lane` are due from now on, `per_s` a second; how many."""
    found = await conn.execute(_RELEASE, {"tenant_id": tenant_id, "lane": lane[:MAX_LANE], "per_s": per_s})
    return int(found.scalar_one())


async def parked_lanes(conn: AsyncConnection, limit: int) -> list[tuple[str, str]]:
    """At most `limit` (tenant id, lane) pairs that have jobs parked on them, not released."""
    return [(str(row.tenant_id), row.parked_on) for row in await conn.execute(_LANES, {"limit": limit})]


async def recheck(conn: AsyncConnection, lanes: Sequence[tuple[str, str]]) -> int:
    """One job parked on each of these (tenant id, lane) pairs made due now; how many were."""
    found = await conn.execute(_RECHECK, {"tenants": [t for t, _ in lanes], "lanes": [lane for _, lane in lanes]})
    return int(found.rowcount)


async def due_parked(conn: AsyncConnection, limit: int) -> list[Row[Any]]:
    """At most `limit` parked jobs that are due, locked until the caller's transaction ends."""
    return list((await conn.execute(_DUE, {"limit": limit})).all())


async def unparked(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> None:
    """These jobs' copies are on the bus: it holds them again."""
    await conn.execute(_UNPARKED, {"ids": list(job_ids)})


async def parked_count(conn: AsyncConnection) -> int:
    return int((await conn.execute(_COUNT)).scalar_one())
