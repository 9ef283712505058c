"""Deliveries: the senders' starts, and the attempts that end or retry a job (their outcomes
applied in one statement per batch, a dead letter, its operational event or a platform email
finished with them); the email-sender's walks (`store.walks`) end theirs the same way."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import created_at_of
from herald_ledger.job_status import TERMINAL, JobStatus, allowed_sources
from herald_ledger.partitions import id_at, within_days
from herald_ledger.store import operational
from herald_ledger.store.driver import driver_of, in_transaction
from herald_ledger.store.jobs import status_array


@dataclass
class Call:
    """What every attempt row says of one call: where, how it ended, how long it took."""

    target: str
    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: datetime


@dataclass(kw_only=True)
class JobOutcome:
    """What one recorded attempt (or walk) asks of its job once its rows are in."""

    job_id: uuid.UUID
    next_status: JobStatus
    job_error: str | None
    dead_lettered: bool = False
    dead_letter_sequence: int | None = None
    # Email: the provider that accepted, and its message id (kept on the delivered job).
    provider_id: str | None = None
    provider_message_id: str | None = None
    # QUEUED: seconds until the next attempt (the job's `next_attempt_at`, for the reconciler).
    retry_delay_s: float | None = None
    # With retry_delay_s: the sender acknowledged the message; the ledger holds the job until
    # then (store.parking).
    parked: bool = False


@dataclass
class NewAttempt(Call, JobOutcome):
    # Webhooks: the failure's class and what the receiver answered (capped by the sender).
    error_class: str | None = None
    response_headers: dict[str, str] | None = None
    response_excerpt: str | None = None


@dataclass
class DeliveryStart:
    job_id: uuid.UUID
    proceed: bool
    status: JobStatus | None
    attempt_count: int
    wait: bool = False
    # With `wait`: how long before asking again (0: shortly).
    wait_s: float = 0.0


# A start reads and writes nothing: what a sender may do is decided from the row, and
# "delivering" is what the ledger knows in flight (`herald_ledger.inflight`), so a
# delivered webhook costs its row one update (the outcome), not two.
# On the driver, like the outcome and attempt statements below (see store.driver).
# "Finished" is every terminal status (a SKIPPED delivery holds no later one back).
_FINISHED = ", ".join(f"'{status.value}'" for status in sorted(TERMINAL))
# The earlier jobs of an ordering key are looked for among ids from `$2` on (ORDERING_WINDOW
# back). Jobs are partitioned by day of id: `DAYS(...)` and `SINCE(...)` become those days as
# constants (`partitions.within_days`), so a plan holds those days' partitions, not every
# retained day's.
_STARTS_QUERY = f"""
    SELECT j.id, j.status, j.attempt_count, j.parked_on IS NOT NULL AS parked,
        EXTRACT(EPOCH FROM j.next_attempt_at - now())::float8 AS due_in_s,
        CASE WHEN j.ordering_key IS NOT NULL THEN (
        SELECT EXTRACT(EPOCH FROM max(COALESCE(earlier.next_attempt_at, now())) - now())::float8 FROM jobs earlier
        WHERE earlier.tenant_id = j.tenant_id AND earlier.ordering_key = j.ordering_key
          AND earlier.seq < j.seq AND earlier.id >= $2::uuid AND SINCE(earlier.id)
          AND earlier.status NOT IN ({_FINISHED})
    ) END AS blocked_for_s
    FROM jobs j WHERE j.id = ANY($1::uuid[]) AND DAYS(j.id)
"""  # noqa: S608 (constant status names)
# No job stays unfinished this long (webhook retries end within 24 hours, the reconciler settles
# what the bus lost), so an older one never holds a later one of its key back.
ORDERING_WINDOW = timedelta(days=3)


def ordering_since() -> uuid.UUID:
    return id_at(datetime.now(UTC) - ORDERING_WINDOW)


# A copy of a work message that comes more than this before its job's next attempt is due
# waits for it (the reconciler published a second copy, and the first scheduled a retry).
EARLY_COPY_TOLERANCE_S = 1.0

# A work message can reach a sender before the transaction that wrote its job commits
# (the ledger publishes inside it): an unknown job this young is waited for, not dropped.
UNCOMMITTED_GRACE_S = 60.0


async def start_deliveries(conn: AsyncConnection, job_ids: Sequence[uuid.UUID]) -> list[DeliveryStart]:
    """Says which jobs may start (those a sender could legally deliver now)."""
    if not job_ids:
        return []
    since = ordering_since()
    query = within_days(_STARTS_QUERY, job_ids, since)
    return _starts(job_ids, await (await driver_of(conn)).fetch(query, list(job_ids), since))


def _starts(job_ids: Sequence[uuid.UUID], rows: Sequence[Any]) -> list[DeliveryStart]:
    """The starts of `job_ids` from their rows (`_STARTS_QUERY`). A job whose ordering key has
    an unfinished earlier job waits (it holds its place; its message comes back later, when the
    earlier jobs' next attempts are due, a sender parking a long wait in the ledger); so
    does a job not committed yet (see UNCOMMITTED_GRACE_S), and a job whose next attempt is
    not due yet (a second copy of its message, see EARLY_COPY_TOLERANCE_S): never an attempt
    before its backoff ends. A copy of a parked job's (`store.parking`) is not waited for but
    acknowledged: the ledger publishes that job when it is due."""
    found = {row["id"]: row for row in rows}
    startable = allowed_sources(JobStatus.DELIVERING)
    now = time.time()
    starts = []
    for job_id in job_ids:
        row = found.get(job_id)
        if row is None:
            born = created_at_of(str(job_id))
            young = born is not None and now - born < UNCOMMITTED_GRACE_S
            starts.append(DeliveryStart(job_id, False, None, 0, wait=young))
            continue
        status = JobStatus(row["status"])
        due_in_s = row["due_in_s"]
        if status in startable and due_in_s is not None and due_in_s > EARLY_COPY_TOLERANCE_S:
            # A copy of a parked job's message is dropped: the ledger publishes the job when due.
            parked = bool(row["parked"])
            starts.append(DeliveryStart(job_id, False, status, row["attempt_count"], wait=not parked, wait_s=due_in_s))
        elif status in startable and row["blocked_for_s"] is None:
            starts.append(DeliveryStart(job_id, True, JobStatus.DELIVERING, row["attempt_count"]))
        else:
            # Held back by its ordering key: until the latest next attempt of the earlier jobs
            # left (0, shortly, when one is under way or due).
            waiting = row["blocked_for_s"] is not None and status not in TERMINAL
            wait_s = max(0.0, row["blocked_for_s"]) if waiting else 0.0
            starts.append(DeliveryStart(job_id, False, status, row["attempt_count"], wait=waiting, wait_s=wait_s))
    return starts


# The attempt's number is its place among the job's rows (they survive explicit retries,
# which start the attempt budget, attempt_count, from zero again). Only attempts of jobs the
# outcome statement found are kept (a deleted tenant's jobs are gone); reading `changed` also
# makes the insert follow the outcome's row locks. Parameters from $13 (after the outcomes').
_INSERT_ATTEMPTS = """
    , attempted AS (
        INSERT INTO attempts (job_id, number, target, outcome, status_code, duration_ms, error, started_at,
                              error_class, response_headers, response_excerpt)
        SELECT a.job_id,
               (SELECT count(*) FROM attempts p
                WHERE p.job_id = a.job_id AND p.job_id = ANY($13::uuid[]) AND DAYS(p.job_id))
                 + row_number() OVER (PARTITION BY a.job_id ORDER BY a.ord),
               a.target, a.outcome, a.status_code, a.duration_ms, a.error, a.started_at,
               a.error_class, CAST(a.response_headers AS jsonb), a.response_excerpt
        FROM unnest($13::uuid[], $14::text[], $15::text[], $16::int[], $17::int[], $18::text[], $19::timestamptz[],
                    $20::text[], $21::text[], $22::text[])
             WITH ORDINALITY AS a(job_id, target, outcome, status_code, duration_ms, error, started_at,
                                  error_class, response_headers, response_excerpt, ord)
        WHERE a.job_id IN (SELECT id FROM changed)
    )
"""

_REASONS = {
    JobStatus.DELIVERED: "delivered",
    JobStatus.QUEUED: "retry scheduled",
    JobStatus.FAILED: "attempts exhausted or permanent failure",
}


async def advance_attempts(
    conn: AsyncConnection, results: Sequence[NewAttempt], start_job_ids: Sequence[uuid.UUID]
) -> tuple[int, list[DeliveryStart]]:
    """Records the attempts, moves each job to its next status (counting its attempts in the
    same update: one new row version per job and batch) and says which of `start_job_ids`
    may start: one statement, so one round trip and its own transaction (`conn` has none
    begun). A start the statement cannot answer from the rows as they were before it (a job
    this call also records, or one held back by its ordering key) is read after it, by a
    second statement."""
    if not results:
        return 0, await start_deliveries(conn, start_job_ids)
    recorded = {r.job_id for r in results}
    now_ids = [i for i in start_job_ids if i not in recorded]
    bumps: dict[uuid.UUID, int] = {}
    for r in results:
        bumps[r.job_id] = bumps.get(r.job_id, 0) + 1
    since = ordering_since()
    statement = _ADVANCE_ATTEMPTS_TELLING if dead_letters_in(results) else _ADVANCE_ATTEMPTS
    rows = await (await driver_of(conn)).fetch(
        within_days(statement, [*recorded, *now_ids], since),
        *_outcome_arguments(_deciding(results), bumps),
        [r.job_id for r in results],
        [r.target for r in results],
        [r.outcome for r in results],
        [r.status_code for r in results],
        [r.duration_ms for r in results],
        [r.error for r in results],
        [r.started_at for r in results],
        [r.error_class for r in results],
        [orjson.dumps(r.response_headers).decode() if r.response_headers else None for r in results],
        [r.response_excerpt for r in results],
        now_ids,
        since,
    )
    starts = {s.job_id: s for s in _starts(now_ids, rows)}
    # Read again after the statement: the starts of jobs it recorded, and those it found held
    # back by their ordering key (the earlier job may be one this call just ended; otherwise
    # the held one would go back to the bus for ORDERING_RETRY_S for nothing).
    later = [i for i in start_job_ids if i in recorded or (starts[i].wait and starts[i].status is not None)]
    if later:
        starts.update((s.job_id, s) for s in await start_deliveries(conn, later))
    return len(results), [starts[i] for i in start_job_ids]


# Which report about one job wins when one batch holds several (two copies of one work
# message delivered at once): a success is final, then a failure, then a retry.
_PRECEDENCE = {JobStatus.DELIVERED: 0, JobStatus.FAILED: 1, JobStatus.QUEUED: 2}

# The statuses an outcome may move a job from: any a sender may be delivering it in (a
# start writes nothing, so that is the status it was published with: QUEUED, or PENDING
# when its "queued" mark lagged behind the outbox's republish; DELIVERING for rows written
# before starts stopped writing). Never from an end: a report after a success moves nothing.
_IN_DELIVERY = frozenset({JobStatus.PENDING, JobStatus.QUEUED, JobStatus.DELIVERING})

_OUTCOME_SOURCES = {
    JobStatus.QUEUED: _IN_DELIVERY,
    JobStatus.DELIVERED: _IN_DELIVERY,
    JobStatus.FAILED: _IN_DELIVERY,
}


def _deciding(outcomes: Sequence[JobOutcome]) -> list[JobOutcome]:
    """One outcome per job, the same whatever the order of the batch (the first of equals)."""
    chosen: dict[uuid.UUID, JobOutcome] = {}
    for o in outcomes:
        held = chosen.get(o.job_id)
        if held is None or _PRECEDENCE.get(o.next_status, 3) < _PRECEDENCE.get(held.next_status, 3):
            chosen[o.job_id] = o
    return list(chosen.values())


# Every job of a batch in one statement, which the callers end with their own parts: its
# attempts counted (`bump`) and, where the table allows it from the status it has, its next
# status; the history row only when the status changed. A job that did not move (a late or
# duplicate report: a retry or failure after a success) gets none of what follows; its attempt
# is counted all the same. What follows a move: a delivered email keeps its provider message
# id (in the same update), a dead-lettered job gets its dead-letter row, a platform email's
# log row its outcome. Sources travel as one comma-separated string per job.
_OUTCOMES = """
    WITH input AS (
        SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[],
                             $7::text[], $8::text[], $9::boolean[], $10::bigint[], $11::float8[], $12::boolean[])
            AS i(id, bump, target, sources, error, reason, provider_id, message_id, dead, dead_sequence, delay,
                 parked)
    ), current AS (
        SELECT jobs.id, jobs.status, jobs.status = ANY(string_to_array(input.sources, ',')) AS legal
        FROM jobs JOIN input ON jobs.id = input.id WHERE jobs.id = ANY($1::uuid[]) AND DAYS(jobs.id)
        ORDER BY jobs.id FOR UPDATE OF jobs
    ), changed AS (
        UPDATE jobs SET attempt_count = jobs.attempt_count + input.bump, updated_at = now(),
            status = CASE WHEN c.legal THEN input.target ELSE jobs.status END,
            last_error = CASE WHEN c.legal THEN COALESCE(input.error, jobs.last_error) ELSE jobs.last_error END,
            provider_id = CASE WHEN c.legal AND input.target = 'DELIVERED' AND input.message_id IS NOT NULL
                               THEN input.provider_id ELSE jobs.provider_id END,
            provider_message_id = CASE WHEN c.legal AND input.target = 'DELIVERED' AND input.message_id IS NOT NULL
                                       THEN input.message_id ELSE jobs.provider_message_id END,
            next_attempt_at = CASE WHEN NOT c.legal THEN jobs.next_attempt_at
                                   WHEN input.target = 'QUEUED' AND input.delay IS NOT NULL
                                   THEN now() + make_interval(secs => input.delay) END,
            parked_on = CASE WHEN NOT c.legal THEN jobs.parked_on
                             WHEN input.target = 'QUEUED' AND input.delay IS NOT NULL AND input.parked THEN '' END
        FROM input JOIN current c ON c.id = input.id
        WHERE jobs.id = input.id AND jobs.id = ANY($1::uuid[]) AND DAYS(jobs.id)
        RETURNING jobs.id, jobs.tenant_id, jobs.channel, jobs.run, jobs.attempt_count, jobs.last_error,
                  c.status AS from_status, jobs.status AS to_status, c.legal,
                  input.reason, input.error, input.message_id, input.dead, input.dead_sequence
    ), logged AS (
        INSERT INTO job_events (job_id, from_status, to_status, reason)
        SELECT id, from_status, to_status, reason FROM changed WHERE legal AND from_status <> to_status
    ), dead_lettered AS (
        INSERT INTO dead_letters (job_id, tenant_id, channel, run, attempts, error, stream_sequence)
        SELECT id, tenant_id, channel, run, attempt_count, COALESCE(last_error, ''), dead_sequence
        FROM changed WHERE legal AND dead AND to_status = 'FAILED'
    ), platform_mail AS (
        UPDATE platform_emails
        SET status = CASE WHEN ch.to_status = 'DELIVERED' THEN 'delivered' ELSE 'failed' END,
            provider_message_id = ch.message_id, finished_at = now(),
            error = CASE WHEN ch.to_status = 'FAILED' THEN ch.error END
        FROM changed ch
        WHERE platform_emails.id = ch.id AND ch.legal AND ch.channel = 'platform_email'
          AND ch.to_status IN ('DELIVERED', 'FAILED')
    )
"""
# The webhook senders' whole advance: outcomes, attempt rows, then the starts (`$23`, `$24`).
# The starts of an advance take their two arrays after the outcomes' and the attempts'.
_ADVANCE_STARTS = _STARTS_QUERY.replace("$1::", "$23::").replace("$2::", "$24::")
_ADVANCE_ATTEMPTS = _OUTCOMES + _INSERT_ATTEMPTS + _ADVANCE_STARTS
_COUNT_CHANGED = "SELECT count(*) FROM changed"
_APPLY_OUTCOMES = _OUTCOMES + _COUNT_CHANGED
# The same, for a batch that reports a dead letter: the dead-lettered jobs' operational
# events (herald.delivery.exhausted) are written by the same statement. Only such a batch
# pays for that part; a batch of deliveries and retries runs the statements above.
_TELLING = _OUTCOMES + operational.EXHAUSTED_CTE
_ADVANCE_ATTEMPTS_TELLING = _TELLING + _INSERT_ATTEMPTS + _ADVANCE_STARTS
_APPLY_OUTCOMES_TELLING = _TELLING + _COUNT_CHANGED


def dead_letters_in(outcomes: Sequence[JobOutcome]) -> bool:
    """Whether a batch reports a dead letter (its statement then writes operational events)."""
    return any(o.dead_lettered for o in outcomes)


def _outcome_sources(target: JobStatus) -> str:
    """The statuses an outcome to `target` may move a job from, comma-separated."""
    sources = _SOURCES_TEXT.get(target)
    if sources is None:
        allowed = allowed_sources(target) & _OUTCOME_SOURCES.get(target, frozenset({JobStatus.DELIVERING}))
        sources = _SOURCES_TEXT[target] = ",".join(status_array(allowed))
    return sources


_SOURCES_TEXT: dict[JobStatus, str] = {}


def _outcome_arguments(outcomes: Sequence[JobOutcome], bumps: dict[uuid.UUID, int]) -> list[list[Any]]:
    """The twelve arrays of `_OUTCOMES` ($1 to $12), one outcome per job (see `_deciding`)."""
    return [
        [o.job_id for o in outcomes],
        [bumps.get(o.job_id, 0) for o in outcomes],
        [o.next_status.value for o in outcomes],
        [_outcome_sources(o.next_status) for o in outcomes],
        [o.job_error if o.next_status is not JobStatus.DELIVERED else None for o in outcomes],
        [_REASONS.get(o.next_status, "attempt recorded") for o in outcomes],
        [o.provider_id or None for o in outcomes],
        [o.provider_message_id for o in outcomes],
        [o.dead_lettered for o in outcomes],
        [o.dead_letter_sequence for o in outcomes],
        [o.retry_delay_s if o.next_status is JobStatus.QUEUED else None for o in outcomes],
        [o.parked for o in outcomes],
    ]


async def apply_outcomes(
    conn: AsyncConnection, outcomes: Sequence[JobOutcome], bumps: dict[uuid.UUID, int] | None = None
) -> None:
    """Moves each job to its next status (adding `bumps[job]` to its attempt count), with what
    follows a move (see `_OUTCOMES`): one statement, in the caller's transaction."""
    deciding = _deciding(outcomes)
    if deciding:
        statement = _APPLY_OUTCOMES_TELLING if dead_letters_in(deciding) else _APPLY_OUTCOMES
        statement = within_days(statement, [o.job_id for o in deciding])
        await (await in_transaction(conn)).fetchval(statement, *_outcome_arguments(deciding, bumps or {}))
