"""Deliveries: the senders' calls (AdvanceDeliveries for webhook attempts, AdvanceWalks for
email walks: what finished is recorded, and what begins is started, in one transaction; for
webhook attempts in one statement, a single round trip; the senders send starts and records in
calls of their own, herald.sender.loop), explicit retries and
dead letters. A start waits a moment for a job this ledger is still committing (and the first
start of a job it just committed reads nothing: inflight.Committing), and what begins and ends is
announced to every replica's readers (herald_ledger.inflight): a start writes nothing to the row."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC
from typing import Any

from google.protobuf.message import Message
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_jobs_pb2
from herald_ledger.convert import dead_letter_to_proto, from_timestamp, job_to_proto
from herald_ledger.inflight import Committing, InFlight
from herald_ledger.job_status import JobStatus
from herald_ledger.notifications import DELIVERIES, Notifier
from herald_ledger.operational import Announcer
from herald_ledger.outbox import Outbox
from herald_ledger.parked_lanes import Lane, ParkedLanes
from herald_ledger.rpc.common import Context, require_id, require_ids, require_page_size
from herald_ledger.store import dead_letters as dead_letter_store
from herald_ledger.store import deliveries as delivery_store
from herald_ledger.store import jobs as job_store
from herald_ledger.store import parking
from herald_ledger.store import walks as walk_store
from herald_ledger.store.codes import OUTCOME_FROM_PROTO, STATUS_FROM_PROTO, STATUS_TO_PROTO

# How long a start waits for the commit of a job this ledger is writing (see
# inflight.Committing): long enough for a usual transaction's commit after its publishes,
# short enough not to hold a sender's other steps behind a large batch (then: `wait`).
COMMIT_WAIT_S = 0.25
MAX_RETRY_BATCH = 1000
# A retried job is leased to the call that publishes it; the outbox takes over after this.
RETRY_LEASE_S = 10.0
# A waiting reason is a short sentence from a sender; anything longer is cut.
MAX_REASON = 200
log = logging.getLogger("herald.ledger.deliveries")

# A released lane's parked jobs come due at this pace (store.parking): about what a target at
# the default bound takes from a fast receiver, and far below a lane's limit of messages held.
RELEASE_PER_S = 200.0


def start_to_proto(start: delivery_store.DeliveryStart) -> ledger_jobs_pb2.DeliveryStart:
    return ledger_jobs_pb2.DeliveryStart(
        job_id=str(start.job_id),
        proceed=start.proceed,
        status=STATUS_TO_PROTO[start.status] if start.status else common_pb2.JOB_STATUS_UNSPECIFIED,  # type: ignore[arg-type]
        attempt_count=start.attempt_count,
        wait=start.wait,
        wait_s=start.wait_s,
    )


async def new_attempts(
    context: Context, items: Sequence[ledger_jobs_pb2.AttemptResult]
) -> list[delivery_store.NewAttempt]:
    results = []
    for i, item in enumerate(items):
        job_id = await require_id(context, item.attempt.job_id, f"results[{i}].attempt.job_id")
        next_status = STATUS_FROM_PROTO.get(item.next_status)
        outcome = OUTCOME_FROM_PROTO.get(item.attempt.outcome)
        if next_status not in (JobStatus.DELIVERED, JobStatus.FAILED, JobStatus.QUEUED) or outcome is None:
            await abort_invalid(
                context,
                [(f"results[{i}]", "next_status must be DELIVERED, FAILED or QUEUED; outcome set")],
            )
        results.append(
            delivery_store.NewAttempt(
                job_id=job_id,
                target=item.attempt.target,
                outcome=outcome,
                status_code=item.attempt.status_code or None,
                duration_ms=int(item.attempt.duration_ms),
                error=item.attempt.error or None,
                started_at=item.attempt.started_at.ToDatetime(tzinfo=UTC),
                next_status=next_status,
                job_error=item.error or None,
                dead_lettered=item.dead_lettered,
                dead_letter_sequence=item.dead_letter_sequence or None,
                error_class=item.attempt.error_class or None,
                response_headers=dict(item.attempt.response_headers) or None,
                response_excerpt=item.attempt.response_excerpt or None,
                retry_delay_s=item.retry_delay_s or None,
                parked=item.parked and item.retry_delay_s > 0,
            )
        )
    return results


async def new_walks(context: Context, items: Sequence[ledger_jobs_pb2.WalkRecord]) -> list[walk_store.NewWalk]:
    """The walks of an AdvanceWalks request, checked (INVALID_ARGUMENT otherwise)."""
    walks = []
    for i, item in enumerate(items):
        job_id = await require_id(context, item.job_id, f"walks[{i}].job_id")
        next_status = STATUS_FROM_PROTO.get(item.next_status)
        if next_status not in (JobStatus.DELIVERED, JobStatus.FAILED, JobStatus.QUEUED):
            await abort_invalid(context, [(f"walks[{i}].next_status", "must be DELIVERED, FAILED or QUEUED")])
        calls = []
        for n, call in enumerate(item.calls):
            outcome = OUTCOME_FROM_PROTO.get(call.outcome)
            if outcome is None:
                await abort_invalid(context, [(f"walks[{i}].calls[{n}].outcome", "must be set")])
            calls.append(
                walk_store.ProviderCall(
                    provider_id=call.provider_id,
                    target=call.target,
                    outcome=outcome,
                    status_code=call.status_code or None,
                    duration_ms=int(call.duration_ms),
                    error=call.error or None,
                    started_at=call.started_at.ToDatetime(tzinfo=UTC),
                    provider_message_id=call.provider_message_id or None,
                )
            )
        walks.append(
            walk_store.NewWalk(
                job_id=job_id,
                calls=calls,
                next_status=next_status,
                job_error=item.error or None,
                provider_id=item.provider_id or None,
                provider_message_id=item.provider_message_id or None,
                dead_lettered=item.dead_lettered,
                dead_letter_sequence=item.dead_letter_sequence or None,
                retry_delay_s=item.retry_delay_s or None,
                parked=item.parked and item.retry_delay_s > 0,
            )
        )
    return walks


def merged_starts(
    ids: Sequence[Any], first: set[Any], read: Sequence[delivery_store.DeliveryStart]
) -> list[delivery_store.DeliveryStart]:
    """The starts of `ids` in their order: a first start of a job this ledger just committed
    proceeds with no attempt made yet (inflight.Committing), the others as their rows said."""
    rest = iter(read)
    return [delivery_store.DeliveryStart(i, True, JobStatus.DELIVERING, 0) if i in first else next(rest) for i in ids]


Advance = Callable[[AsyncEngine, Sequence[Any], Sequence[Any]], Awaitable[tuple[int, Sequence[Any]]]]


def answered_lanes(request: ledger_jobs_pb2.AdvanceDeliveriesRequest) -> list[Lane]:
    """The lanes the recorded attempts were answered on (herald_ledger.parked_lanes)."""
    return [(r.answered.tenant_id, r.answered.lane) for r in request.results if r.answered.lane]


async def advance_attempts(
    engine: AsyncEngine, attempts: Sequence[delivery_store.NewAttempt], job_ids: Sequence[Any]
) -> tuple[int, list[delivery_store.DeliveryStart]]:
    async with engine.connect() as conn:  # one statement, its own transaction
        return await delivery_store.advance_attempts(conn, attempts, job_ids)


async def advance_walks(
    engine: AsyncEngine, walks: Sequence[walk_store.NewWalk], job_ids: Sequence[Any]
) -> tuple[int, list[delivery_store.DeliveryStart]]:
    async with engine.begin() as conn:
        return await walk_store.record_walks(conn, walks), await delivery_store.start_deliveries(conn, job_ids)


def advance_rpc(
    field: str,
    check: Callable[[Context, Any], Awaitable[Sequence[Any]]],
    advance: Advance,
    answer: Callable[..., Message],
    answered: Callable[[Any], list[Lane]] | None = None,
) -> Any:
    """An Advance RPC (webhook attempts, email walks): the outcomes in `request.<field>`, checked
    by `check`, are recorded and the jobs `start_job_ids` names started (once their creating
    commits landed) atomically by `advance`, then both are announced; the lanes the attempts
    were `answered` on, if jobs are parked on them, released."""

    async def method(self: DeliveryRpcs, request: Any, context: Context) -> Message:
        outcomes = await check(context, getattr(request, field))
        ids = await require_ids(context, list(request.start_job_ids), "start_job_ids")
        await self.committing.wait_for(ids, COMMIT_WAIT_S)
        first = self.committing.first_starts(ids)
        rest = [i for i in ids if i not in first]
        recorded, read = await advance(self.engine, outcomes, rest) if outcomes or rest else (0, [])
        starts = merged_starts(ids, first, read)
        if delivery_store.dead_letters_in(outcomes):
            self.announcer.kick()  # herald.delivery.exhausted, written with the dead letter
        await self._announce(starts, outcomes)
        if answered is not None and self.parked_lanes:
            await self._release(self.parked_lanes.answered(answered(request)))
        return answer(recorded=recorded, starts=[start_to_proto(s) for s in starts])

    return method


class DeliveryRpcs:
    engine: AsyncEngine
    outbox: Outbox
    announcer: Announcer
    notifier: Notifier
    inflight: InFlight
    committing: Committing
    parked_lanes: ParkedLanes

    AdvanceDeliveries = advance_rpc(
        "results", new_attempts, advance_attempts, ledger_jobs_pb2.AdvanceDeliveriesResponse, answered_lanes
    )
    AdvanceWalks = advance_rpc("walks", new_walks, advance_walks, ledger_jobs_pb2.AdvanceWalksResponse)

    async def NoteWaiting(
        self, request: ledger_jobs_pb2.NoteWaitingRequest, context: Context
    ) -> ledger_jobs_pb2.NoteWaitingResponse:
        ids = await require_ids(context, [note.job_id for note in request.notes], "notes.job_id")
        notes = [(job_id, note.reason[:MAX_REASON]) for job_id, note in zip(ids, request.notes, strict=True)]
        async with self.engine.begin() as conn:
            noted = await job_store.note_waiting(conn, notes) if notes else 0
        return ledger_jobs_pb2.NoteWaitingResponse(noted=noted)

    async def _announce(
        self,
        starts: Sequence[delivery_store.DeliveryStart],
        ended: Sequence[delivery_store.NewAttempt | walk_store.NewWalk],
    ) -> None:
        """Deliveries that begin and end, for readers of any replica (herald_ledger.inflight)."""
        begun = [(s.job_id, s.attempt_count) for s in starts if s.proceed]
        done = [r.job_id for r in ended]
        if not begun and not done:
            return
        self.inflight.ended(done)
        self.inflight.started(begun)
        await self.notifier.publish_raw(DELIVERIES, InFlight.encode(begun, done))

    async def ParkDeliveries(
        self, request: ledger_jobs_pb2.ParkDeliveriesRequest, context: Context
    ) -> ledger_jobs_pb2.ParkDeliveriesResponse:
        ids = await require_ids(context, [park.job_id for park in request.parks], "parks.job_id")
        parks = [(job_id, park.lane, park.delay_s) for job_id, park in zip(ids, request.parks, strict=True)]
        async with self.engine.begin() as conn:
            rows = await parking.park(conn, parks) if parks else []
        self.parked_lanes.parked((str(row.tenant_id), row.parked_on) for row in rows)
        parked = {row.id for row in rows}
        return ledger_jobs_pb2.ParkDeliveriesResponse(parked_job_ids=[str(i) for i in ids if i in parked])

    async def _release(self, lanes: list[Lane]) -> None:
        """Answered lanes' parked jobs come back (best effort: else at their recheck)."""
        for tenant_id, lane in lanes:
            try:
                async with self.engine.begin() as conn:
                    released = await parking.release(conn, uuid.UUID(tenant_id), lane, RELEASE_PER_S)
            except Exception as error:
                log.warning("parked deliveries not released", extra={"error": repr(error)})
                self.parked_lanes.parked([(tenant_id, lane)])
                continue
            if released:
                log.info("parked deliveries released", extra={"tenant_id": tenant_id, "released": released})

    async def ReleaseParked(
        self, request: ledger_jobs_pb2.ReleaseParkedRequest, context: Context
    ) -> ledger_jobs_pb2.ReleaseParkedResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not request.lane:
            await abort_invalid(context, [("lane", "is required")])
        async with self.engine.begin() as conn:
            released = await parking.release(conn, tenant_id, request.lane, RELEASE_PER_S)
        return ledger_jobs_pb2.ReleaseParkedResponse(released=released)

    async def RetryJobs(
        self, request: ledger_jobs_pb2.RetryJobsRequest, context: Context
    ) -> ledger_jobs_pb2.RetryJobsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id") if request.tenant_id else None
        if request.all_dead_letters and request.job_ids:
            await abort_invalid(context, [("job_ids", "give job ids or all_dead_letters, not both")])
        if len(request.job_ids) > MAX_RETRY_BATCH:
            await abort_invalid(context, [("job_ids", f"at most {MAX_RETRY_BATCH} at once")])
        limit = min(request.limit or 500, MAX_RETRY_BATCH)
        async with self.engine.begin() as conn:
            if request.all_dead_letters:
                since = from_timestamp(request.since, request.HasField("since"))
                ids = await dead_letter_store.waiting_dead_letters(conn, tenant_id, since, limit)
            else:
                ids = await require_ids(context, list(request.job_ids), "job_ids")
            outcomes, rows, released = await dead_letter_store.retry_jobs(conn, tenant_id, ids, RETRY_LEASE_S)
        # Committed PENDING (leased to this call): published now, QUEUED once the bus took
        # them; one the bus does not take stays PENDING and the outbox publishes it later.
        published = await self.outbox.publish_committed([job_to_proto(r) for r in rows])
        await self.outbox.publisher.release_dead_letters(released)
        return ledger_jobs_pb2.RetryJobsResponse(
            outcomes=[
                ledger_jobs_pb2.RetryOutcome(
                    job_id=o.job_id,
                    retried=o.retried,
                    status=common_pb2.JOB_STATUS_QUEUED  # type: ignore[arg-type]
                    if o.retried and o.job_id in published
                    else STATUS_TO_PROTO[o.status]
                    if o.status
                    else common_pb2.JOB_STATUS_UNSPECIFIED,
                    detail=o.detail,
                )
                for o in outcomes
            ],
            released_dead_letter_sequences=released,
        )

    async def ListDeadLetters(
        self, request: ledger_jobs_pb2.ListDeadLettersRequest, context: Context
    ) -> ledger_jobs_pb2.ListDeadLettersResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id") if request.tenant_id else None
        page_size = await require_page_size(context, request.page_size)
        before = None
        if request.cursor:
            # ASCII digits only: str.isdigit() takes "¹" too, which int() refuses; a bigint at most.
            if not (request.cursor.isascii() and request.cursor.isdigit() and len(request.cursor) <= 18):
                await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
            before = int(request.cursor)
        async with self.engine.connect() as conn:
            rows, next_cursor = await dead_letter_store.list_dead_letters(
                conn,
                tenant_id,
                from_timestamp(request.since, request.HasField("since")),
                request.include_retried,
                page_size,
                before,
            )
        return ledger_jobs_pb2.ListDeadLettersResponse(
            entries=[dead_letter_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def GetDeadLetter(
        self, request: ledger_jobs_pb2.GetDeadLetterRequest, context: Context
    ) -> ledger_jobs_pb2.GetDeadLetterResponse:
        job_id = parse_id(request.job_id)
        row = job = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                row = await dead_letter_store.latest_dead_letter(conn, job_id)
                if row is not None:
                    job = await job_store.get_job(conn, row.tenant_id, job_id, include_request=False)
        if row is None or job is None:
            await abort_not_found(context, "dead letter")
        return ledger_jobs_pb2.GetDeadLetterResponse(entry=dead_letter_to_proto(row), job=job_to_proto(job))
