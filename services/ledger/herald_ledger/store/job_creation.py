"""Job creation: the rows of new jobs (the hot insert of CreateJobs and RecordEvent), and what
the outbox needs of them: published or not, the unpublished claimed for republishing."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import and_, insert, select, text
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import jobs
from herald_ledger.job_status import JobStatus
from herald_ledger.store.driver import in_transaction
from herald_ledger.store.jobs import JOB_SUMMARY_COLUMNS, transition
from herald_ledger.store.usage import UsageWrite, set_usage, write_usage


@dataclass
class NewJob:
    tenant_id: uuid.UUID
    channel: str
    priority: str
    request: dict[str, Any]
    body: bytes
    idempotency_key: str | None = None
    ordering_key: str | None = None
    target_id: uuid.UUID | None = None
    id: uuid.UUID = field(default_factory=new_id)
    # With an idempotency key: the digest of the request, to claim the key with the job.
    request_hash: bytes = b""
    # Set when admission wrote the job as SUPPRESSED.
    suppressed: str = ""
    # Set when the fan-out records an event's delivery it does not attempt (SKIPPED, this reason).
    skipped: str = ""
    # An event's delivery: the tenant's event id; a resend: the job it sends again.
    event_id: str | None = None
    origin_job_id: uuid.UUID | None = None
    # The draft (ledger.v1 JobDraft) it came from: its work message is built from it, not
    # from the row; and the trace context of the call that sent it (a coalesced
    # transaction publishes many callers' jobs).
    draft: Any = None
    trace: dict[str, str] | None = None


def written_status(job: NewJob, admitted: JobStatus) -> JobStatus:
    if job.suppressed:
        return JobStatus.SUPPRESSED
    return JobStatus.SKIPPED if job.skipped else admitted


async def create_jobs(
    conn: AsyncConnection, new_jobs: Sequence[NewJob], with_request: bool = True, published: bool = False
) -> list[Row[Any]]:
    """Writes the jobs; returns their rows in order. `published=True` writes them QUEUED:
    the caller publishes their work messages before this transaction commits and sets
    back to PENDING the few the bus refused (see `herald_ledger.outbox`). The creation
    needs no history row: the job's `created_at` is it. `with_request=False` leaves the
    request and body out of the returned rows, for a caller that has them already
    (decoding them back is most of the cost of a row)."""
    if not new_jobs:
        return []
    admitted = JobStatus.QUEUED if published else JobStatus.PENDING

    rows = [
        {
            "id": j.id,
            "tenant_id": j.tenant_id,
            "channel": j.channel,
            "status": written_status(j, admitted).value,
            "priority": j.priority,
            "request": j.request,
            "body": j.body,
            "idempotency_key": j.idempotency_key,
            "ordering_key": j.ordering_key,
            "target_id": j.target_id,
            "last_error": j.suppressed or j.skipped or None,
            "event_id": j.event_id,
            "origin_job_id": j.origin_job_id,
        }
        for j in new_jobs
    ]
    returned = jobs.c if with_request else JOB_SUMMARY_COLUMNS
    created = (await conn.execute(insert(jobs).returning(*returned), rows)).all()
    by_id = {row.id: row for row in created}
    return [by_id[j.id] for j in new_jobs]


# The columns the hot insert writes, with the type of the array each is sent in (`request` as
# text: orjson writes it, PostgreSQL parses it).
_WRITTEN = (
    ("id", "uuid"),
    ("tenant_id", "uuid"),
    ("channel", "text"),
    ("status", "text"),
    ("priority", "text"),
    ("request", "text"),
    ("body", "bytea"),
    ("idempotency_key", "text"),
    ("ordering_key", "text"),
    ("target_id", "uuid"),
    ("last_error", "text"),
    ("event_id", "text"),
    ("origin_job_id", "uuid"),
)
_COPIED_COLUMNS = tuple(name for name, _ in _WRITTEN)


# Up to this many rows the jobs go in as one INSERT from arrays, which can carry the usage
# counters' update (one round trip); a larger batch (the batch routes) goes in by `COPY` (two
# round trips, cheaper per row), after the update. Measured in a standalone loop on a 2-core
# machine (docs/performance.md, "Measurements behind the defaults"): 10 rows cost the client 0.94-1.11 ms with the
# INSERT against 1.20-1.41 with COPY, 100 rows 2.02-2.41 against 1.89-2.05.
INSERT_ROWS_MAX = 48
_NAMES = ", ".join(_COPIED_COLUMNS)
_INSERT_ARRAYS = (
    f"INSERT INTO jobs ({_NAMES}) SELECT "  # noqa: S608 (constant column names and argument numbers)
    + ", ".join(f"{name}::jsonb" if name == "request" else name for name in _COPIED_COLUMNS)
    + " FROM unnest("
    + ", ".join(f"${n}::{kind}[]" for n, (_, kind) in enumerate(_WRITTEN, start=1))
    + f") AS r({_NAMES})"
)
_INSERT_WITH_USAGE = f"WITH usage AS ({set_usage(first=len(_WRITTEN) + 1)}) {_INSERT_ARRAYS}"


async def insert_jobs(
    conn: AsyncConnection, new_jobs: Sequence[NewJob], published: bool, usage: UsageWrite | None = None
) -> None:
    """The hot path's insert (CreateJobs, RecordEvent), with the usage counters admission left
    to write (`usage`), on the driver, inside the caller's transaction, nothing returned (the
    caller answers from what it has; the timestamps are the database's `now()`). Same rows as
    `create_jobs`."""
    driver = await in_transaction(conn)
    if not new_jobs:
        await write_usage(driver, usage)
        return
    admitted = JobStatus.QUEUED if published else JobStatus.PENDING
    records = [
        (
            j.id,
            j.tenant_id,
            j.channel,
            written_status(j, admitted).value,
            j.priority,
            orjson.dumps(j.request).decode(),
            j.body,
            j.idempotency_key,
            j.ordering_key,
            j.target_id,
            j.suppressed or j.skipped or None,
            j.event_id,
            j.origin_job_id,
        )
        for j in new_jobs
    ]
    if len(records) > INSERT_ROWS_MAX:
        await write_usage(driver, usage)
        await driver.copy_records_to_table("jobs", records=records, columns=_COPIED_COLUMNS)
        return
    columns = [list(column) for column in zip(*records, strict=True)]
    if usage is None:
        await driver.execute(_INSERT_ARRAYS, *columns)
    else:
        await driver.execute(_INSERT_WITH_USAGE, *columns, *usage.arguments())


_BACK_TO_PENDING = (
    "UPDATE jobs SET status = 'PENDING' WHERE id = ANY($1::uuid[]) AND status = 'QUEUED' AND attempt_count = 0"
)


async def unpublished(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> None:
    """Jobs written QUEUED whose work message the bus refused, in the same transaction:
    PENDING, for the outbox. Not a transition (the row was never seen QUEUED)."""
    if job_ids:
        await (await in_transaction(conn)).execute(_BACK_TO_PENDING, list(job_ids))


async def mark_published(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> list[Row[Any]]:
    return await transition(
        conn, job_ids, JobStatus.QUEUED, "published", only_from=frozenset({JobStatus.PENDING}), log_event=False
    )


_CLAIM_UNPUBLISHED = text(
    """
    UPDATE jobs SET publish_claimed_until = now() + make_interval(secs => :lease_s)
    WHERE id IN (
        SELECT id FROM jobs
        WHERE status = 'PENDING' AND updated_at < now() - make_interval(secs => :older_than_s)
          AND (publish_claimed_until IS NULL OR publish_claimed_until < now())
        ORDER BY updated_at LIMIT :limit FOR UPDATE SKIP LOCKED
    )
    RETURNING *
    """
)


async def claim_unpublished(conn: AsyncConnection, older_than_s: float, lease_s: float, limit: int) -> list[Row[Any]]:
    params = {"older_than_s": older_than_s, "lease_s": lease_s, "limit": limit}
    return list((await conn.execute(_CLAIM_UNPUBLISHED, params)).all())


async def fail_unpublished(conn: AsyncConnection, older_than_s: float, reason: str) -> list[uuid.UUID]:
    query = select(jobs.c.id).where(
        and_(
            jobs.c.status == JobStatus.PENDING.value,
            jobs.c.updated_at < text("now() - make_interval(secs => :age)"),
        )
    )
    ids = [row.id for row in (await conn.execute(query, {"age": older_than_s})).all()]
    moved = await transition(conn, ids, JobStatus.FAILED, reason, reason, only_from=frozenset({JobStatus.PENDING}))
    return [row.id for row in moved]
