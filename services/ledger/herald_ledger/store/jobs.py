"""Jobs, their attempts and their history."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, insert, select, text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.dialects.postgresql import UUID as PG_UUID
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import attempts, dead_letters, job_events, jobs
from herald_ledger.job_status import TERMINAL, JobStatus, allowed_sources

JOB_SUMMARY_COLUMNS = [c for c in jobs.c if c.name not in ("body", "request", "publish_claimed_until")]


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


@dataclass
class NewAttempt:
    job_id: uuid.UUID
    target: str
    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: datetime
    next_status: JobStatus
    job_error: str | None
    dead_lettered: bool = False
    dead_letter_sequence: int | None = None
    # Webhooks: the failure's class and what the receiver answered (capped by the sender).
    error_class: str | None = None
    response_headers: dict[str, str] | None = None
    response_excerpt: str | None = None


@dataclass
class ProviderCall:
    """One provider in one email walk: a call, or a skip (outcome "skipped")."""

    provider_id: str
    target: str
    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: datetime
    provider_message_id: str | None


@dataclass
class NewWalk:
    job_id: uuid.UUID
    calls: list[ProviderCall]
    next_status: JobStatus
    job_error: str | None
    provider_id: str | None = None
    provider_message_id: str | None = None
    dead_lettered: bool = False
    dead_letter_sequence: int | None = None


@dataclass
class RetryOutcome:
    job_id: str
    retried: bool
    status: JobStatus | None
    detail: str = ""


@dataclass
class DeliveryStart:
    job_id: uuid.UUID
    proceed: bool
    status: JobStatus | None
    attempt_count: int
    wait: bool = False


_BLOCKED_BY_ORDER = text(
    """
    SELECT j.id FROM jobs j
    WHERE j.id = ANY(:ids) AND j.ordering_key IS NOT NULL AND EXISTS (
        SELECT 1 FROM jobs earlier
        WHERE earlier.tenant_id = j.tenant_id AND earlier.ordering_key = j.ordering_key
          AND earlier.id < j.id AND earlier.status NOT IN ('DELIVERED', 'FAILED', 'SUPPRESSED', 'BOUNCED', 'COMPLAINED')
    )
    """
).bindparams(bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True))))


async def create_jobs(conn: AsyncConnection, new_jobs: Sequence[NewJob], with_request: bool = True) -> list[Row[Any]]:
    """Writes the jobs and their first history row; returns their rows in order.
    `with_request=False` leaves the request and body out of the returned rows, for a
    caller that has them already (decoding them back is most of the cost of a row)."""
    if not new_jobs:
        return []

    def status(job: NewJob) -> JobStatus:
        return JobStatus.SUPPRESSED if job.suppressed else JobStatus.PENDING

    rows = [
        {
            "id": j.id,
            "tenant_id": j.tenant_id,
            "channel": j.channel,
            "status": status(j).value,
            "priority": j.priority,
            "request": j.request,
            "body": j.body,
            "idempotency_key": j.idempotency_key,
            "ordering_key": j.ordering_key,
            "target_id": j.target_id,
            "last_error": j.suppressed or None,
        }
        for j in new_jobs
    ]
    returned = jobs.c if with_request else JOB_SUMMARY_COLUMNS
    created = (await conn.execute(insert(jobs).returning(*returned), rows)).all()
    await conn.execute(
        insert(job_events),
        [
            {
                "job_id": j.id,
                "from_status": None,
                "to_status": status(j).value,
                "reason": j.suppressed or "accepted",
            }
            for j in new_jobs
        ],
    )
    by_id = {row.id: row for row in created}
    return [by_id[j.id] for j in new_jobs]


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
    channel: str | None,
    created_after: datetime | None,
    created_before: datetime | None,
) -> tuple[list[Row[Any]], str]:
    """Newest first. Ids are UUIDv7, so ordering by id is ordering by creation."""
    query = select(*JOB_SUMMARY_COLUMNS).where(jobs.c.tenant_id == tenant_id)
    if after is not None:
        query = query.where(jobs.c.id < after)
    if status is not None:
        query = query.where(jobs.c.status == status.value)
    if channel is not None:
        query = query.where(jobs.c.channel == channel)
    if created_after is not None:
        query = query.where(jobs.c.created_at >= created_after)
    if created_before is not None:
        query = query.where(jobs.c.created_at < created_before)
    rows = (await conn.execute(query.order_by(jobs.c.id.desc()).limit(page_size + 1))).all()
    next_cursor = encode_cursor(rows[page_size - 1].id) if len(rows) > page_size else ""
    return list(rows[:page_size]), next_cursor


_ids_param = bindparam("ids", type_=ARRAY(PG_UUID(as_uuid=True)))


def _status_array(statuses: frozenset[JobStatus]) -> list[str]:
    return sorted(s.value for s in statuses)


_TRANSITION = text(
    """
    WITH current AS (
        SELECT id, status FROM jobs WHERE id = ANY(:ids) AND status = ANY(:sources) FOR UPDATE
    ), changed AS (
        UPDATE jobs SET status = :target, updated_at = now(),
            last_error = COALESCE(:reason_error, jobs.last_error)
        FROM current WHERE jobs.id = current.id
        RETURNING jobs.id, current.status AS from_status, jobs.attempt_count, jobs.channel
    ), logged AS (
        INSERT INTO job_events (job_id, from_status, to_status, reason)
        SELECT id, from_status, :target, :reason FROM changed WHERE from_status <> :target AND :log_event
    )
    SELECT id, from_status, attempt_count, channel FROM changed
    """
).bindparams(_ids_param)


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
            "sources": _status_array(sources),
            "target": target.value,
            "reason": reason,
            "reason_error": error,
            "log_event": log_event,
        },
    )
    return list(result.all())


async def mark_published(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> list[Row[Any]]:
    return await transition(
        conn, job_ids, JobStatus.QUEUED, "published", only_from=frozenset({JobStatus.PENDING}), log_event=False
    )


async def start_deliveries(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> list[DeliveryStart]:
    """Moves the jobs that may start to DELIVERING. A job whose ordering key has an
    unfinished earlier job waits (it holds its place; its message comes back later)."""
    blocked = {row.id for row in (await conn.execute(_BLOCKED_BY_ORDER, {"ids": list(job_ids)})).all()}
    startable = [i for i in job_ids if i not in blocked]
    moved = {
        row.id: row
        for row in await transition(conn, startable, JobStatus.DELIVERING, "delivery started", log_event=False)
    }
    missing = [i for i in job_ids if i not in moved]
    current: dict[uuid.UUID, Any] = {}
    if missing:
        query = select(jobs.c.id, jobs.c.status, jobs.c.attempt_count).where(jobs.c.id.in_(missing))
        current = {row.id: row for row in (await conn.execute(query)).all()}
    starts = []
    for job_id in job_ids:
        if job_id in moved:
            starts.append(DeliveryStart(job_id, True, JobStatus.DELIVERING, moved[job_id].attempt_count))
        elif job_id in current:
            row = current[job_id]
            status = JobStatus(row.status)
            waiting = job_id in blocked and status not in TERMINAL
            starts.append(DeliveryStart(job_id, False, status, row.attempt_count, wait=waiting))
        else:
            starts.append(DeliveryStart(job_id, False, None, 0))
    return starts


# The attempt's number is its place among the job's rows (they survive explicit retries,
# which start the attempt budget, attempt_count, from zero again).
_RECORD_ATTEMPT = text(
    """
    WITH bumped AS (
        UPDATE jobs SET attempt_count = attempt_count + 1, updated_at = now()
        WHERE id = :job_id RETURNING id
    )
    INSERT INTO attempts (job_id, number, target, outcome, status_code, duration_ms, error, started_at,
                          error_class, response_headers, response_excerpt)
    SELECT :job_id, (SELECT count(*) FROM attempts a WHERE a.job_id = :job_id) + 1,
           :target, :outcome, :status_code, :duration_ms, :error, :started_at,
           :error_class, :response_headers, :response_excerpt FROM bumped
    """
).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True)), bindparam("response_headers", type_=JSONB))

_REASONS = {
    JobStatus.DELIVERED: "delivered",
    JobStatus.QUEUED: "retry scheduled",
    JobStatus.FAILED: "attempts exhausted or permanent failure",
}


@dataclass
class _Outcome:
    """What one recorded attempt (or walk) asks of its job once its rows are in."""

    job_id: uuid.UUID
    next_status: JobStatus
    job_error: str | None
    dead_lettered: bool = False
    dead_letter_sequence: int | None = None
    provider_id: str | None = None
    provider_message_id: str | None = None


async def record_attempts(conn: AsyncConnection, results: Sequence[NewAttempt]) -> int:
    """Records each attempt, then applies each job's next status (grouped by target)."""
    if not results:
        return 0
    await conn.execute(
        _RECORD_ATTEMPT,
        [
            {
                "job_id": r.job_id,
                "target": r.target,
                "outcome": r.outcome,
                "status_code": r.status_code,
                "duration_ms": r.duration_ms,
                "error": r.error,
                "started_at": r.started_at,
                "error_class": r.error_class,
                "response_headers": r.response_headers,
                "response_excerpt": r.response_excerpt,
            }
            for r in results
        ],
    )
    await _apply_outcomes(
        conn,
        [_Outcome(r.job_id, r.next_status, r.job_error, r.dead_lettered, r.dead_letter_sequence) for r in results],
    )
    return len(results)


_BUMP_WALK = text(
    """
    UPDATE jobs SET attempt_count = attempt_count + 1, updated_at = now()
    WHERE id = :job_id
    RETURNING attempt_count, (SELECT count(*) FROM attempts a WHERE a.job_id = jobs.id) AS rows
    """
).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True)))


async def record_walks(conn: AsyncConnection, walks: Sequence[NewWalk]) -> int:
    """Email: each walk spends one attempt (attempt_count + 1) and leaves one attempt row
    per provider it considered, numbered after the job's earlier rows and tagged with the
    walk; then each job moves to its next status."""
    if not walks:
        return 0
    rows: list[dict[str, Any]] = []
    for walk in walks:
        bumped = (await conn.execute(_BUMP_WALK, {"job_id": walk.job_id})).first()
        if bumped is None:
            continue  # the job is gone (its tenant was deleted): nothing to record
        rows.extend(
            {
                "job_id": walk.job_id,
                "number": bumped.rows + i,
                "target": call.target,
                "outcome": call.outcome,
                "status_code": call.status_code,
                "duration_ms": call.duration_ms,
                "error": call.error,
                "started_at": call.started_at,
                "provider_id": call.provider_id or None,
                "provider_message_id": call.provider_message_id or None,
                "walk": bumped.attempt_count,
            }
            for i, call in enumerate(walk.calls, start=1)
        )
    if rows:
        await conn.execute(insert(attempts), rows)
    await _apply_outcomes(
        conn,
        [
            _Outcome(
                w.job_id,
                w.next_status,
                w.job_error,
                w.dead_lettered,
                w.dead_letter_sequence,
                w.provider_id,
                w.provider_message_id,
            )
            for w in walks
        ],
    )
    return len(walks)


_DEAD_LETTER = text(
    """
    INSERT INTO dead_letters (job_id, tenant_id, channel, run, attempts, error, stream_sequence)
    SELECT id, tenant_id, channel, run, attempt_count, COALESCE(last_error, ''), :sequence FROM jobs WHERE id = :job_id
    """
).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True)))

_FINISH_PLATFORM_EMAIL = text(
    """
    UPDATE platform_emails SET status = :status, provider_message_id = :message_id, error = :error,
        finished_at = now()
    WHERE id = :job_id
    """
).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True)))


# Which report about one job wins when one batch holds several (two copies of one work
# message delivered at once): a success is final, then a failure, then a retry.
_PRECEDENCE = {JobStatus.DELIVERED: 0, JobStatus.FAILED: 1, JobStatus.QUEUED: 2}
# The statuses an outcome may move a job from. A retry only from DELIVERING; an end also
# from QUEUED, where a concurrent copy's retry (recorded earlier) left it: its message was
# acknowledged by the copy that ended, so nothing would ever run the job again.
_OUTCOME_SOURCES = {
    JobStatus.QUEUED: frozenset({JobStatus.DELIVERING}),
    JobStatus.DELIVERED: frozenset({JobStatus.DELIVERING, JobStatus.QUEUED}),
    JobStatus.FAILED: frozenset({JobStatus.DELIVERING, JobStatus.QUEUED}),
}


def _deciding(outcomes: Sequence[_Outcome]) -> list[_Outcome]:
    """One outcome per job, the same whatever the order of the batch (the first of equals)."""
    chosen: dict[uuid.UUID, _Outcome] = {}
    for o in outcomes:
        held = chosen.get(o.job_id)
        if held is None or _PRECEDENCE.get(o.next_status, 3) < _PRECEDENCE.get(held.next_status, 3):
            chosen[o.job_id] = o
    return list(chosen.values())


async def _apply_outcomes(conn: AsyncConnection, outcomes: Sequence[_Outcome]) -> None:
    """Moves each job to its next status (grouped by target and error, one statement
    each), then: a delivered email keeps its provider message id, a dead-lettered job
    gets its dead-letter row, and a platform email's log row its outcome. A job that did
    not move (a late or duplicate report: a retry or failure after a success) gets none of
    these; its attempt is recorded all the same."""
    outcomes = _deciding(outcomes)
    by_target: dict[tuple[JobStatus, str | None], list[uuid.UUID]] = {}
    for o in outcomes:
        by_target.setdefault((o.next_status, o.job_error), []).append(o.job_id)
    moved: set[uuid.UUID] = set()
    platform_mail: set[uuid.UUID] = set()
    for (target, error), ids in by_target.items():
        done = await transition(
            conn,
            ids,
            target,
            _REASONS.get(target, "attempt recorded"),
            error if target is not JobStatus.DELIVERED else None,
            only_from=_OUTCOME_SOURCES.get(target, frozenset({JobStatus.DELIVERING})),
        )
        moved.update(row.id for row in done)
        platform_mail.update(row.id for row in done if row.channel == "platform_email")
    finished = [o for o in outcomes if o.job_id in moved]
    delivered = [o for o in finished if o.next_status is JobStatus.DELIVERED and o.provider_message_id]
    if delivered:
        await conn.execute(
            text(
                "UPDATE jobs SET provider_id = :provider_id, provider_message_id = :message_id WHERE id = :job_id"
            ).bindparams(bindparam("job_id", type_=PG_UUID(as_uuid=True))),
            [
                {"job_id": o.job_id, "provider_id": o.provider_id or None, "message_id": o.provider_message_id}
                for o in delivered
            ],
        )
    dead = [o for o in finished if o.next_status is JobStatus.FAILED and o.dead_lettered]
    if dead:
        await conn.execute(_DEAD_LETTER, [{"job_id": o.job_id, "sequence": o.dead_letter_sequence} for o in dead])
    ended = [
        o for o in finished if o.next_status in (JobStatus.DELIVERED, JobStatus.FAILED) and o.job_id in platform_mail
    ]
    if ended:
        await conn.execute(
            _FINISH_PLATFORM_EMAIL,
            [
                {
                    "job_id": o.job_id,
                    "status": "delivered" if o.next_status is JobStatus.DELIVERED else "failed",
                    "message_id": o.provider_message_id,
                    "error": o.job_error if o.next_status is JobStatus.FAILED else None,
                }
                for o in ended
            ],
        )


async def list_attempts(conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID) -> list[Row[Any]] | None:
    owner = (await conn.execute(select(jobs.c.tenant_id).where(jobs.c.id == job_id))).scalar()
    if owner != tenant_id:
        return None
    query = select(attempts).where(attempts.c.job_id == job_id).order_by(attempts.c.id)
    return list((await conn.execute(query)).all())


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


# ---- explicit retries and dead letters ---------------------------------------------------

_RESET_FOR_RETRY = text(
    """
    UPDATE jobs SET attempt_count = 0, run = run + 1, last_error = NULL, provider_id = NULL,
        provider_message_id = NULL, publish_claimed_until = now() + make_interval(secs => :lease_s)
    WHERE id = ANY(:ids)
    RETURNING *
    """
).bindparams(_ids_param)

_RELEASE_DEAD_LETTERS = text(
    """
    UPDATE dead_letters SET retried_at = now()
    WHERE job_id = ANY(:ids) AND retried_at IS NULL
    RETURNING stream_sequence
    """
).bindparams(_ids_param)


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
    moved = {
        row.id
        for row in await transition(
            conn, ids_in_scope, JobStatus.PENDING, "retried", only_from=frozenset({JobStatus.FAILED})
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
        if job_id in moved:
            outcomes.append(RetryOutcome(str(job_id), True, JobStatus.PENDING))
        elif job_id in current:
            outcomes.append(
                RetryOutcome(
                    str(job_id),
                    False,
                    current[job_id],
                    f"only a failed job can be retried; it is {current[job_id].value.lower()}",
                )
            )
        else:
            outcomes.append(RetryOutcome(str(job_id), False, None, "not found"))
    by_id = {row.id: row for row in rows}
    return outcomes, [by_id[i] for i in ids if i in by_id], released


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
