"""Jobs: creation (group-committed: the idempotency keys claimed, the quotas of store/quota.py
decided, the rows of store/job_creation.py written and their work messages sent before the
commit, acknowledged after it), and the reads of jobs and their attempts."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from herald.batching import Batcher
from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.secrets import KeyRing
from herald.telemetry.propagation import inject_headers
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_pb2
from herald.webhooks.sealed_headers import seal_request
from herald_ledger.convert import (
    attempt_to_proto,
    email_request_to_row,
    from_timestamp,
    job_to_proto,
    timestamp,
    webhook_request_to_row,
)
from herald_ledger.db.refusals import unstorable_value
from herald_ledger.inflight import Committing, InFlight
from herald_ledger.job_status import JobStatus
from herald_ledger.outbox import Outbox, new_job_proto, work_job
from herald_ledger.rpc.common import REJECTIONS, Context, Rpcs, require_id, require_page_size
from herald_ledger.store import idempotency as idempotency_store
from herald_ledger.store import job_creation, payloads
from herald_ledger.store import jobs as job_store
from herald_ledger.store.codes import CHANNEL_FROM_PROTO, PRIORITY_FROM_PROTO, STATUS_FROM_PROTO, STATUS_TO_PROTO
from herald_ledger.store.dead_letters import EXPUNGED
from herald_ledger.store.idempotency import KeyedDraft
from herald_ledger.store.intake import claim_keys_and_lock_usage
from herald_ledger.store.platform_email import PlatformMail
from herald_ledger.store.quota import current_period, decide

# What a resend may start from: the job ended one way or the other.
RESENDABLE = frozenset({JobStatus.DELIVERED, JobStatus.FAILED})
log = logging.getLogger("herald.ledger.jobs")


def answered(job: job_creation.NewJob, queued: bool) -> common_pb2.Job:
    """A job just written, as CreateJobs answers it: from what was written, not read back."""
    if job.suppressed:
        return new_job_proto(job, common_pb2.JOB_STATUS_SUPPRESSED)
    return new_job_proto(job, common_pb2.JOB_STATUS_QUEUED if queued else common_pb2.JOB_STATUS_PENDING)


class JobRpcs(Rpcs):
    outbox: Outbox
    inflight: InFlight
    committing: Committing
    platform: PlatformMail | None
    ring: KeyRing | None

    def __init__(self) -> None:
        # A call is a batch already (the gateway's, through the router): it goes out at the next
        # turn of the loop, and what arrives while two are committing waits and goes out together
        # (group commit).
        self.job_creator: Batcher[list[job_creation.NewJob], list[ledger_jobs_pb2.DraftOutcome]] = Batcher(
            self._create_many,
            max_items=64,
            size_of=lambda jobs: sum(len(j.body) for j in jobs),
            max_bytes=32 * 1024 * 1024,
            max_concurrent=2,
        )

    async def CreateJobs(
        self, request: ledger_jobs_pb2.CreateJobsRequest, context: Context
    ) -> ledger_jobs_pb2.CreateJobsResponse:
        new_jobs = []
        trace = inject_headers({}) or None
        for i, draft in enumerate(request.drafts):
            tenant_id = await require_id(context, draft.tenant_id, f"drafts[{i}].tenant_id")
            channel = CHANNEL_FROM_PROTO.get(draft.channel)
            priority = PRIORITY_FROM_PROTO.get(draft.priority)
            if channel is None or priority is None:
                await abort_invalid(context, [(f"drafts[{i}]", "channel and priority must be set")])
            kind = draft.WhichOneof("request")
            expected = "webhook" if channel == "webhook" else "email"
            if kind != expected:
                await abort_invalid(context, [(f"drafts[{i}].request", f"a {channel} job needs a {expected} request")])
            if kind == "webhook":
                seal_request(self.ring, str(tenant_id), draft.webhook)
                fields, body = webhook_request_to_row(draft.webhook)
            else:
                fields, body = email_request_to_row(draft.email), b""
            new_jobs.append(
                job_creation.NewJob(
                    tenant_id=tenant_id,
                    channel=channel,
                    priority=priority,
                    request=fields,
                    body=body,
                    idempotency_key=draft.idempotency_key or None,
                    ordering_key=draft.ordering_key or None,
                    request_hash=draft.request_hash,
                    draft=draft,
                    trace=trace,
                )
            )
        # Group commit: concurrent calls share one transaction (one fsync, one usage lock
        # per tenant); each call still gets exactly its own outcomes back.
        outcomes = await self.job_creator.submit(new_jobs)
        return ledger_jobs_pb2.CreateJobsResponse(outcomes=outcomes)

    async def _create_many(self, requests: list[list[job_creation.NewJob]]) -> list[list[ledger_jobs_pb2.DraftOutcome]]:
        """The calls' drafts in one transaction; when PostgreSQL refuses a value of one of them,
        each draft in one of its own, so only that draft is refused (its call's others, and the
        other calls coalesced with it, often other tenants', are written)."""
        try:
            return await self._create_together(requests)
        except Exception as error:
            why = unstorable_value(error)
            if why is None:
                raise
            if sum(len(request) for request in requests) == 1:
                return [[ledger_jobs_pb2.DraftOutcome(rejection=ledger_pb2.REJECTION_UNSTORABLE, detail=why)]]
            log.warning("a draft cannot be stored; writing the batch draft by draft", extra={"why": why})
            return [[(await self._create_many([[job]]))[0][0] for job in request] for request in requests]

    async def _create_together(
        self, requests: list[list[job_creation.NewJob]]
    ) -> list[list[ledger_jobs_pb2.DraftOutcome]]:
        new_jobs = [job for request in requests for job in request]
        keyed = {
            i: KeyedDraft(j.tenant_id, j.idempotency_key, j.request_hash, j.id)
            for i, j in enumerate(new_jobs)
            if j.idempotency_key and j.request_hash
        }
        tenant_ids = [j.tenant_id for j in new_jobs]
        publishing = self.outbox.ready
        with self.committing.writing() as committing:
            async with self.outbox.publishing(len(new_jobs)) as publication, self.engine.begin() as conn:
                # The keys first: a repeat waits for (then answers with) the job its key names;
                # in the same statement, the tenants' counters locked for admission.
                earlier, locked = await claim_keys_and_lock_usage(conn, keyed, tenant_ids, current_period())
                fresh = [j for i, j in enumerate(new_jobs) if i not in earlier]
                verdicts, usage = await decide(conn, fresh, locked, self.platform)
                for verdict in verdicts:
                    if verdict.job is not None:
                        verdict.job.suppressed = verdict.suppressed
                admitted = [v.job for v in verdicts if v.job is not None]
                refused = {id(job) for job, v in zip(fresh, verdicts, strict=True) if v.job is None}
                released = [
                    (d.tenant_id, d.key) for i, d in keyed.items() if i not in earlier and id(new_jobs[i]) in refused
                ]
                named = [e.job_id for e in earlier.values() if e.job_id]
                replayed: dict[uuid.UUID, Any] = {}

                async def write() -> None:
                    # The caller has each request: the rows come back without it (see
                    # CreateJobsResponse). The counters ride in the same statement.
                    await job_creation.insert_jobs(conn, admitted, published=publishing, usage=usage)
                    await idempotency_store.release(conn, released)
                    replayed.update(await job_store.job_summaries(conn, named))

                # Sent while the rows are written, acknowledged after the commit (see
                # herald_ledger.outbox): the ones the bus refuses go back to PENDING then.
                sent = [j for j in admitted if not j.suppressed] if publishing else []
                committing(sent)
                traces = {str(j.id): j.trace for j in sent if j.trace}
                await asyncio.gather(write(), publication.send([work_job(j) for j in sent], traces))
        written_at = timestamp(datetime.now(UTC))
        assert written_at is not None
        outcomes: list[ledger_jobs_pb2.DraftOutcome | None] = []
        fresh_verdicts = iter(verdicts)
        for i in range(len(new_jobs)):
            use = earlier.get(i)
            if use is None:
                verdict = next(fresh_verdicts)
                if verdict.job is None:
                    rejection = REJECTIONS.get(verdict.rejection_kind, ledger_pb2.REJECTION_QUOTA_EXCEEDED)
                    outcomes.append(ledger_jobs_pb2.DraftOutcome(rejection=rejection, detail=verdict.rejection))  # type: ignore[arg-type]
                else:
                    job = answered(verdict.job, publishing)
                    job.created_at.CopyFrom(written_at)
                    job.updated_at.CopyFrom(written_at)
                    outcomes.append(ledger_jobs_pb2.DraftOutcome(job=job))
            elif use.in_flight:
                outcomes.append(
                    ledger_jobs_pb2.DraftOutcome(
                        rejection=ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT,
                        detail="the first request with this key has not finished; retry shortly",
                    )
                )
            elif use.mismatch:
                outcomes.append(
                    ledger_jobs_pb2.DraftOutcome(
                        rejection=ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH, detail=use.mismatch
                    )
                )
            elif use.job_id is not None and use.job_id in replayed:
                outcomes.append(ledger_jobs_pb2.DraftOutcome(job=job_to_proto(replayed[use.job_id]), replayed=True))
            elif use.job_id is not None:
                detail = "the job this key named no longer exists"
                outcomes.append(
                    ledger_jobs_pb2.DraftOutcome(rejection=ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH, detail=detail)
                )
            else:
                outcomes.append(None)  # the same as an earlier draft of this batch: filled below
        for i, use in earlier.items():
            if use.same_as is not None:
                first = outcomes[use.same_as]
                assert first is not None
                repeat = ledger_jobs_pb2.DraftOutcome()
                repeat.CopyFrom(first)
                repeat.replayed = first.HasField("job")
                outcomes[i] = repeat
        complete = [o for o in outcomes if o is not None]
        split, start = [], 0
        for request in requests:
            split.append(complete[start : start + len(request)])
            start += len(request)
        return split

    async def ResendJob(
        self, request: ledger_jobs_pb2.ResendJobRequest, context: Context
    ) -> ledger_jobs_pb2.ResendJobResponse:
        """A new job with the original's request and payload (the sender signs it afresh when
        it delivers it), linked to it; created like any job (admission, group commit)."""
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        row = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                row = await job_store.get_job(conn, tenant_id, job_id, True)
        if row is None:
            await abort_not_found(context, "job")
        if row.payload_expunged_at is not None:
            await abort_failed_precondition(context, EXPUNGED)
        status = self.inflight.status(row.id, JobStatus(row.status), row.attempt_count)
        if row.channel != "webhook" or status not in RESENDABLE:
            await abort_failed_precondition(
                context, f"only a delivered or failed webhook job can be sent again; this one is {status.value.lower()}"
            )
        original = job_to_proto(row).webhook
        fields, _ = webhook_request_to_row(original)
        draft = ledger_pb2.JobDraft(tenant_id=str(tenant_id), channel=common_pb2.CHANNEL_WEBHOOK, webhook=original)
        resend = job_creation.NewJob(
            tenant_id=tenant_id,
            channel="webhook",
            priority=row.priority,
            request=fields,
            body=bytes(row.body),
            ordering_key=row.ordering_key,
            target_id=row.target_id,
            event_id=row.event_id,
            origin_job_id=row.id,
            draft=draft,
            trace=inject_headers({}) or None,
        )
        (outcome,) = await self.job_creator.submit([resend])
        if not outcome.HasField("job"):
            return ledger_jobs_pb2.ResendJobResponse(rejection=outcome.rejection, detail=outcome.detail)
        return ledger_jobs_pb2.ResendJobResponse(job=outcome.job)

    async def GetJob(self, request: ledger_jobs_pb2.GetJobRequest, context: Context) -> ledger_jobs_pb2.GetJobResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        row = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                row = await job_store.get_job(conn, tenant_id, job_id, request.include_request)
        if row is None:
            await abort_not_found(context, "job")
        return ledger_jobs_pb2.GetJobResponse(job=self._as_seen(row))

    async def ExpungeJobPayload(
        self, request: ledger_jobs_pb2.ExpungeJobPayloadRequest, context: Context
    ) -> ledger_jobs_pb2.ExpungeJobPayloadResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        found = False
        if job_id is not None:
            try:
                async with self.engine.begin() as conn:
                    found = await payloads.expunge_job(conn, tenant_id, job_id)
            except payloads.UnderWay as under_way:
                await abort_failed_precondition(context, str(under_way))
        if not found:
            await abort_not_found(context, "job")
        return ledger_jobs_pb2.ExpungeJobPayloadResponse()

    def _as_seen(self, row: Any) -> common_pb2.Job:
        """The job as a reader sees it: the row, DELIVERING while a start is known in flight."""
        job = job_to_proto(row)
        seen = self.inflight.status(row.id, JobStatus(row.status), row.attempt_count)
        if seen is not JobStatus(row.status):
            job.status = STATUS_TO_PROTO[seen]  # type: ignore[assignment]
            job.ClearField("next_attempt_at")  # the attempt it waited for is under way
        return job

    async def ListJobs(
        self, request: ledger_jobs_pb2.ListJobsRequest, context: Context
    ) -> ledger_jobs_pb2.ListJobsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        page_size = await require_page_size(context, request.page_size)
        after = None
        if request.cursor:
            after = job_store.decode_cursor(request.cursor)
            if after is None:
                await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
        target_id = await require_id(context, request.target_id, "target_id") if request.target_id else None
        async with self.engine.connect() as conn:
            rows, next_cursor = await job_store.list_jobs(
                conn,
                tenant_id,
                page_size,
                after,
                STATUS_FROM_PROTO.get(request.status),  # type: ignore[call-overload]
                self.inflight.delivering(),
                CHANNEL_FROM_PROTO.get(request.channel),  # type: ignore[call-overload]
                from_timestamp(request.created_after, request.HasField("created_after")),
                from_timestamp(request.created_before, request.HasField("created_before")),
                request.url,
                request.event_id,
                target_id,
            )
        return ledger_jobs_pb2.ListJobsResponse(jobs=[self._as_seen(r) for r in rows], next_cursor=next_cursor)

    async def ListAttempts(
        self, request: ledger_jobs_pb2.ListAttemptsRequest, context: Context
    ) -> ledger_jobs_pb2.ListAttemptsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        rows = await self.one(context, "job", tenant_id, request.job_id, "read", job_store.list_attempts)
        return ledger_jobs_pb2.ListAttemptsResponse(attempts=[attempt_to_proto(r) for r in rows])
