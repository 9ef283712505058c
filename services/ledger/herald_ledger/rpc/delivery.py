"""Email walks, explicit retries and dead letters."""

from __future__ import annotations

from datetime import UTC

from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_pb2
from herald_ledger.convert import dead_letter_to_proto, from_timestamp, job_to_proto
from herald_ledger.job_status import JobStatus
from herald_ledger.rpc.common import Context, require_id, require_ids
from herald_ledger.store import jobs as job_store
from herald_ledger.store.codes import OUTCOME_FROM_PROTO, STATUS_FROM_PROTO, STATUS_TO_PROTO

MAX_PAGE_SIZE = 200
MAX_RETRY_BATCH = 1000
# A retried job is leased to the caller that publishes it; the outbox takes over after this.
RETRY_LEASE_S = 10.0


class DeliveryRpcs:
    engine: AsyncEngine

    async def RecordWalks(
        self, request: ledger_pb2.RecordWalksRequest, context: Context
    ) -> ledger_pb2.RecordWalksResponse:
        walks = []
        for i, item in enumerate(request.walks):
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
                    job_store.ProviderCall(
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
                job_store.NewWalk(
                    job_id=job_id,
                    calls=calls,
                    next_status=next_status,
                    job_error=item.error or None,
                    provider_id=item.provider_id or None,
                    provider_message_id=item.provider_message_id or None,
                    dead_lettered=item.dead_lettered,
                    dead_letter_sequence=item.dead_letter_sequence or None,
                )
            )
        async with self.engine.begin() as conn:
            recorded = await job_store.record_walks(conn, walks)
        return ledger_pb2.RecordWalksResponse(recorded=recorded)

    async def RetryJobs(self, request: ledger_pb2.RetryJobsRequest, context: Context) -> ledger_pb2.RetryJobsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id") if request.tenant_id else None
        if request.all_dead_letters and request.job_ids:
            await abort_invalid(context, [("job_ids", "give job ids or all_dead_letters, not both")])
        if len(request.job_ids) > MAX_RETRY_BATCH:
            await abort_invalid(context, [("job_ids", f"at most {MAX_RETRY_BATCH} at once")])
        limit = min(request.limit or 500, MAX_RETRY_BATCH)
        async with self.engine.begin() as conn:
            if request.all_dead_letters:
                since = from_timestamp(request.since, request.HasField("since"))
                ids = await job_store.waiting_dead_letters(conn, tenant_id, since, limit)
            else:
                ids = await require_ids(context, list(request.job_ids), "job_ids")
            outcomes, rows, released = await job_store.retry_jobs(conn, tenant_id, ids, RETRY_LEASE_S)
        return ledger_pb2.RetryJobsResponse(
            outcomes=[
                ledger_pb2.RetryOutcome(
                    job_id=o.job_id,
                    retried=o.retried,
                    status=STATUS_TO_PROTO[o.status] if o.status else common_pb2.JOB_STATUS_UNSPECIFIED,  # type: ignore[arg-type]
                    detail=o.detail,
                )
                for o in outcomes
            ],
            jobs=[job_to_proto(r) for r in rows],
            released_dead_letter_sequences=released,
        )

    async def ListDeadLetters(
        self, request: ledger_pb2.ListDeadLettersRequest, context: Context
    ) -> ledger_pb2.ListDeadLettersResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id") if request.tenant_id else None
        page_size = request.page_size or 50
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            await abort_invalid(context, [("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")])
        before = None
        if request.cursor:
            if not request.cursor.isdigit():
                await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
            before = int(request.cursor)
        async with self.engine.connect() as conn:
            rows, next_cursor = await job_store.list_dead_letters(
                conn,
                tenant_id,
                from_timestamp(request.since, request.HasField("since")),
                request.include_retried,
                page_size,
                before,
            )
        return ledger_pb2.ListDeadLettersResponse(
            entries=[dead_letter_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def GetDeadLetter(
        self, request: ledger_pb2.GetDeadLetterRequest, context: Context
    ) -> ledger_pb2.GetDeadLetterResponse:
        job_id = parse_id(request.job_id)
        row = job = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                row = await job_store.latest_dead_letter(conn, job_id)
                if row is not None:
                    job = await job_store.get_job(conn, row.tenant_id, job_id, include_request=False)
        if row is None or job is None:
            await abort_not_found(context, "dead letter")
        return ledger_pb2.GetDeadLetterResponse(entry=dead_letter_to_proto(row), job=job_to_proto(job))
