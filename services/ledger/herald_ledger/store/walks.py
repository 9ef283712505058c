"""The email-sender's walks: each pass over a job's providers spends one attempt and leaves one
attempt row per provider it considered; the job's next status is applied like an attempt's
(`store.deliveries.apply_outcomes`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import TextClause, bindparam, insert, text
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import attempts
from herald_ledger.partitions import within_days
from herald_ledger.store.deliveries import Call, JobOutcome, apply_outcomes


@dataclass
class ProviderCall(Call):
    """One provider in one email walk: a call, or a skip (outcome "skipped")."""

    provider_id: str
    provider_message_id: str | None


@dataclass
class NewWalk(JobOutcome):
    calls: list[ProviderCall]


# The job's attempts so far and its row, locked; over the job's day (`partitions.within_days`).
_WALK_PLACE = """
    SELECT attempt_count, (SELECT count(*) FROM attempts a WHERE a.job_id = :job_id AND DAYS(a.job_id)) AS rows
    FROM jobs WHERE id = :job_id AND DAYS(jobs.id) FOR UPDATE
"""


def _walk_place(job_id: uuid.UUID) -> TextClause:
    return text(within_days(_WALK_PLACE, [job_id])).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True)))


async def record_walks(conn: AsyncConnection, walks: Sequence[NewWalk]) -> int:
    """Email: each walk spends one attempt (attempt_count + 1, in the same update as the
    job's next status) and leaves one attempt row per provider it considered, numbered
    after the job's earlier rows and tagged with the walk."""
    if not walks:
        return 0
    rows: list[dict[str, Any]] = []
    bumps: dict[uuid.UUID, int] = {}
    seen_rows: dict[uuid.UUID, int] = {}
    for walk in walks:
        place = (await conn.execute(_walk_place(walk.job_id), {"job_id": walk.job_id})).first()
        if place is None:
            continue  # the job is gone (its tenant was deleted): nothing to record
        earlier_walks = bumps.get(walk.job_id, 0)
        earlier_rows = seen_rows.get(walk.job_id, 0)
        bumps[walk.job_id] = earlier_walks + 1
        seen_rows[walk.job_id] = earlier_rows + len(walk.calls)
        rows.extend(
            {
                "job_id": walk.job_id,
                "number": place.rows + earlier_rows + i,
                "target": call.target,
                "outcome": call.outcome,
                "status_code": call.status_code,
                "duration_ms": call.duration_ms,
                "error": call.error,
                "started_at": call.started_at,
                "provider_id": call.provider_id or None,
                "provider_message_id": call.provider_message_id or None,
                "walk": place.attempt_count + earlier_walks + 1,
            }
            for i, call in enumerate(walk.calls, start=1)
        )
    if rows:
        await conn.execute(insert(attempts), rows)
    await apply_outcomes(conn, [w for w in walks if w.job_id in bumps], bumps)
    return len(walks)
