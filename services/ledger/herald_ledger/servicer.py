"""LedgerService over gRPC: validates, runs the store's queries in one transaction
per call, and answers in protos."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC
from typing import Any

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.batching import Batcher
from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.secrets import KeyRing
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc
from herald_ledger.convert import (
    attempt_to_proto,
    email_request_to_row,
    from_timestamp,
    job_to_proto,
    tenant_to_proto,
    webhook_request_to_row,
)
from herald_ledger.job_status import JobStatus
from herald_ledger.notifications import Notifier
from herald_ledger.rpc.access import AccessRpcs, valid_contact
from herald_ledger.rpc.admission import AdmissionRpcs
from herald_ledger.rpc.delivery import DeliveryRpcs
from herald_ledger.rpc.domains import DomainRpcs
from herald_ledger.rpc.inbound import InboundRpcs
from herald_ledger.rpc.platform_email import PlatformEmailRpcs
from herald_ledger.rpc.secrets import SecretRpcs
from herald_ledger.rpc.subscriptions import SubscriptionRpcs
from herald_ledger.rpc.target_health import TargetHealthRpcs
from herald_ledger.store import idempotency as idempotency_store
from herald_ledger.store import jobs as job_store
from herald_ledger.store import tenants as tenant_store
from herald_ledger.store.admission import admit
from herald_ledger.store.codes import (
    CHANNEL_FROM_PROTO,
    OUTCOME_FROM_PROTO,
    PLAN_FROM_PROTO,
    PRIORITY_FROM_PROTO,
    STATUS_FROM_PROTO,
    STATUS_TO_PROTO,
)
from herald_ledger.store.idempotency import KeyedDraft
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID, PlatformMail, queue_key_created

Context = grpc.aio.ServicerContext[Any, Any]
MAX_PAGE_SIZE = 200


async def _require_id(context: Context, value: str, field: str) -> uuid.UUID:
    parsed = parse_id(value)
    if parsed is None:
        await abort_invalid(context, [(field, "must be a UUID")])
    return parsed


async def _require_ids(context: Context, values: list[str], field: str) -> list[uuid.UUID]:
    parsed = [parse_id(v) for v in values]
    bad = [f"{field}[{i}]" for i, p in enumerate(parsed) if p is None]
    if bad:
        await abort_invalid(context, [(b, "must be a UUID") for b in bad])
    return [p for p in parsed if p is not None]


def _start_to_proto(start: job_store.DeliveryStart) -> ledger_pb2.DeliveryStart:
    return ledger_pb2.DeliveryStart(
        job_id=str(start.job_id),
        proceed=start.proceed,
        status=STATUS_TO_PROTO[start.status] if start.status else common_pb2.JOB_STATUS_UNSPECIFIED,  # type: ignore[arg-type]
        attempt_count=start.attempt_count,
        wait=start.wait,
    )


async def _new_attempts(context: Context, items: Sequence[ledger_pb2.AttemptResult]) -> list[job_store.NewAttempt]:
    results = []
    for i, item in enumerate(items):
        job_id = await _require_id(context, item.attempt.job_id, f"results[{i}].attempt.job_id")
        next_status = STATUS_FROM_PROTO.get(item.next_status)
        outcome = OUTCOME_FROM_PROTO.get(item.attempt.outcome)
        if next_status not in (JobStatus.DELIVERED, JobStatus.FAILED, JobStatus.QUEUED) or outcome is None:
            await abort_invalid(
                context,
                [(f"results[{i}]", "next_status must be DELIVERED, FAILED or QUEUED; outcome set")],
            )
        results.append(
            job_store.NewAttempt(
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
            )
        )
    return results


REJECTIONS = {
    "quota": ledger_pb2.REJECTION_QUOTA_EXCEEDED,
    "sender_domain": ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED,
}


class LedgerServicer(
    AccessRpcs,
    SecretRpcs,
    AdmissionRpcs,
    DeliveryRpcs,
    DomainRpcs,
    SubscriptionRpcs,
    TargetHealthRpcs,
    InboundRpcs,
    PlatformEmailRpcs,
    ledger_pb2_grpc.LedgerServiceServicer,
):
    def __init__(
        self,
        engine: AsyncEngine,
        notifier: Notifier,
        ring: KeyRing | None,
        webhook_secret_overlap_s: float,
        platform: PlatformMail | None = None,
    ) -> None:
        self.engine = engine
        self.notifier = notifier
        self.ring = ring
        self.webhook_secret_overlap_s = webhook_secret_overlap_s
        self.job_creator: Batcher[list[job_store.NewJob], list[ledger_pb2.DraftOutcome]] = Batcher(
            self._create_many,
            max_items=64,
            max_wait=0.002,
            size_of=lambda jobs: sum(len(j.body) for j in jobs),
            max_bytes=32 * 1024 * 1024,
            max_concurrent=2,
        )
        # Herald's own mail (quota warnings, key notices, operator alerts) is written only
        # when a platform provider is set.
        self.platform = platform

    async def CreateJobs(
        self, request: ledger_pb2.CreateJobsRequest, context: Context
    ) -> ledger_pb2.CreateJobsResponse:
        new_jobs = []
        for i, draft in enumerate(request.drafts):
            tenant_id = await _require_id(context, draft.tenant_id, f"drafts[{i}].tenant_id")
            channel = CHANNEL_FROM_PROTO.get(draft.channel)
            priority = PRIORITY_FROM_PROTO.get(draft.priority)
            if channel is None or priority is None:
                await abort_invalid(context, [(f"drafts[{i}]", "channel and priority must be set")])
            kind = draft.WhichOneof("request")
            expected = "webhook" if channel == "webhook" else "email"
            if kind != expected:
                await abort_invalid(context, [(f"drafts[{i}].request", f"a {channel} job needs a {expected} request")])
            if kind == "webhook":
                fields, body = webhook_request_to_row(draft.webhook)
            else:
                fields, body = email_request_to_row(draft.email), b""
            new_jobs.append(
                job_store.NewJob(
                    tenant_id=tenant_id,
                    channel=channel,
                    priority=priority,
                    request=fields,
                    body=body,
                    idempotency_key=draft.idempotency_key or None,
                    ordering_key=draft.ordering_key or None,
                    request_hash=draft.request_hash,
                )
            )
        # Group commit: concurrent calls share one transaction (one fsync, one usage lock
        # per tenant); each call still gets exactly its own outcomes back.
        outcomes = await self.job_creator.submit(new_jobs)
        return ledger_pb2.CreateJobsResponse(outcomes=outcomes)

    async def _create_many(self, requests: list[list[job_store.NewJob]]) -> list[list[ledger_pb2.DraftOutcome]]:
        new_jobs = [job for request in requests for job in request]
        keyed = {
            i: KeyedDraft(j.tenant_id, j.idempotency_key, j.request_hash, j.id)
            for i, j in enumerate(new_jobs)
            if j.idempotency_key and j.request_hash
        }
        async with self.engine.begin() as conn:
            # The keys first: a repeat waits for (then answers with) the job its key names.
            earlier = await idempotency_store.claim_for_jobs(conn, keyed)
            fresh = [j for i, j in enumerate(new_jobs) if i not in earlier]
            verdicts = await admit(conn, fresh, self.platform)
            for verdict in verdicts:
                if verdict.job is not None:
                    verdict.job.suppressed = verdict.suppressed
            # The caller has each request: the rows come back without it (see CreateJobsResponse).
            rows = await job_store.create_jobs(conn, [v.job for v in verdicts if v.job is not None], with_request=False)
            refused = {id(job) for job, v in zip(fresh, verdicts, strict=True) if v.job is None}
            await idempotency_store.release(
                conn,
                [(d.tenant_id, d.key) for i, d in keyed.items() if i not in earlier and id(new_jobs[i]) in refused],
            )
            replayed = await job_store.job_summaries(conn, [e.job_id for e in earlier.values() if e.job_id])
        by_id = {row.id: row for row in rows}
        outcomes: list[ledger_pb2.DraftOutcome | None] = []
        fresh_verdicts = iter(verdicts)
        for i in range(len(new_jobs)):
            use = earlier.get(i)
            if use is None:
                verdict = next(fresh_verdicts)
                if verdict.job is None:
                    rejection = REJECTIONS.get(verdict.rejection_kind, ledger_pb2.REJECTION_QUOTA_EXCEEDED)
                    outcomes.append(ledger_pb2.DraftOutcome(rejection=rejection, detail=verdict.rejection))  # type: ignore[arg-type]
                else:
                    outcomes.append(ledger_pb2.DraftOutcome(job=job_to_proto(by_id[verdict.job.id])))
            elif use.in_flight:
                outcomes.append(
                    ledger_pb2.DraftOutcome(
                        rejection=ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT,
                        detail="the first request with this key has not finished; retry shortly",
                    )
                )
            elif use.mismatch:
                outcomes.append(
                    ledger_pb2.DraftOutcome(rejection=ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH, detail=use.mismatch)
                )
            elif use.job_id is not None and use.job_id in replayed:
                outcomes.append(ledger_pb2.DraftOutcome(job=job_to_proto(replayed[use.job_id]), replayed=True))
            elif use.job_id is not None:
                detail = "the job this key named no longer exists"
                outcomes.append(
                    ledger_pb2.DraftOutcome(rejection=ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH, detail=detail)
                )
            else:
                outcomes.append(None)  # the same as an earlier draft of this batch: filled below
        for i, use in earlier.items():
            if use.same_as is not None:
                first = outcomes[use.same_as]
                assert first is not None
                repeat = ledger_pb2.DraftOutcome()
                repeat.CopyFrom(first)
                repeat.replayed = first.HasField("job")
                outcomes[i] = repeat
        complete = [o for o in outcomes if o is not None]
        split, start = [], 0
        for request in requests:
            split.append(complete[start : start + len(request)])
            start += len(request)
        return split

    async def GetJob(self, request: ledger_pb2.GetJobRequest, context: Context) -> ledger_pb2.GetJobResponse:
        tenant_id = await _require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        row = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                row = await job_store.get_job(conn, tenant_id, job_id, request.include_request)
        if row is None:
            await abort_not_found(context, "job")
        return ledger_pb2.GetJobResponse(job=job_to_proto(row))

    async def ListJobs(self, request: ledger_pb2.ListJobsRequest, context: Context) -> ledger_pb2.ListJobsResponse:
        tenant_id = await _require_id(context, request.tenant_id, "tenant_id")
        page_size = request.page_size or 50
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            await abort_invalid(context, [("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")])
        after = None
        if request.cursor:
            after = job_store.decode_cursor(request.cursor)
            if after is None:
                await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
        async with self.engine.connect() as conn:
            rows, next_cursor = await job_store.list_jobs(
                conn,
                tenant_id,
                page_size,
                after,
                STATUS_FROM_PROTO.get(request.status),  # type: ignore[call-overload]
                CHANNEL_FROM_PROTO.get(request.channel),  # type: ignore[call-overload]
                from_timestamp(request.created_after, request.HasField("created_after")),
                from_timestamp(request.created_before, request.HasField("created_before")),
            )
        return ledger_pb2.ListJobsResponse(jobs=[job_to_proto(r) for r in rows], next_cursor=next_cursor)

    async def MarkQueued(
        self, request: ledger_pb2.MarkQueuedRequest, context: Context
    ) -> ledger_pb2.MarkQueuedResponse:
        ids = await _require_ids(context, list(request.job_ids), "job_ids")
        async with self.engine.begin() as conn:
            moved = await job_store.mark_published(conn, ids)
        return ledger_pb2.MarkQueuedResponse(updated=len(moved))

    async def StartDeliveries(
        self, request: ledger_pb2.StartDeliveriesRequest, context: Context
    ) -> ledger_pb2.StartDeliveriesResponse:
        ids = await _require_ids(context, list(request.job_ids), "job_ids")
        async with self.engine.begin() as conn:
            starts = await job_store.start_deliveries(conn, ids)
        return ledger_pb2.StartDeliveriesResponse(starts=[_start_to_proto(s) for s in starts])

    async def RecordAttempts(
        self, request: ledger_pb2.RecordAttemptsRequest, context: Context
    ) -> ledger_pb2.RecordAttemptsResponse:
        results = await _new_attempts(context, request.results)
        async with self.engine.begin() as conn:
            recorded = await job_store.record_attempts(conn, results)
        return ledger_pb2.RecordAttemptsResponse(recorded=recorded)

    async def AdvanceDeliveries(
        self, request: ledger_pb2.AdvanceDeliveriesRequest, context: Context
    ) -> ledger_pb2.AdvanceDeliveriesResponse:
        results = await _new_attempts(context, request.results)
        ids = await _require_ids(context, list(request.start_job_ids), "start_job_ids")
        async with self.engine.begin() as conn:
            recorded = await job_store.record_attempts(conn, results)
            starts = await job_store.start_deliveries(conn, ids) if ids else []
        return ledger_pb2.AdvanceDeliveriesResponse(recorded=recorded, starts=[_start_to_proto(s) for s in starts])

    async def ListAttempts(
        self, request: ledger_pb2.ListAttemptsRequest, context: Context
    ) -> ledger_pb2.ListAttemptsResponse:
        tenant_id = await _require_id(context, request.tenant_id, "tenant_id")
        job_id = parse_id(request.job_id)
        rows = None
        if job_id is not None:
            async with self.engine.connect() as conn:
                rows = await job_store.list_attempts(conn, tenant_id, job_id)
        if rows is None:
            await abort_not_found(context, "job")
        return ledger_pb2.ListAttemptsResponse(attempts=[attempt_to_proto(r) for r in rows])

    async def ClaimUnpublished(
        self, request: ledger_pb2.ClaimUnpublishedRequest, context: Context
    ) -> ledger_pb2.ClaimUnpublishedResponse:
        async with self.engine.begin() as conn:
            rows = await job_store.claim_unpublished(
                conn, request.older_than_ms / 1000, max(request.lease_ms, 1000) / 1000, request.limit or 500
            )
        return ledger_pb2.ClaimUnpublishedResponse(jobs=[job_to_proto(r) for r in rows])

    async def FailUnpublished(
        self, request: ledger_pb2.FailUnpublishedRequest, context: Context
    ) -> ledger_pb2.FailUnpublishedResponse:
        if request.older_than_ms <= 0:
            await abort_invalid(context, [("older_than_ms", "must be positive")])
        async with self.engine.begin() as conn:
            ids = await job_store.fail_unpublished(
                conn, request.older_than_ms / 1000, request.reason or "not published"
            )
        return ledger_pb2.FailUnpublishedResponse(job_ids=[str(i) for i in ids])

    async def CreateTenant(
        self, request: ledger_pb2.CreateTenantRequest, context: Context
    ) -> ledger_pb2.CreateTenantResponse:
        plan = PLAN_FROM_PROTO.get(request.plan)
        name = request.name.strip()
        if plan is None or not name or len(name) > 200:
            await abort_invalid(context, [("name/plan", "a name of 1-200 characters and a plan are required")])
        contact = request.contact_email.strip()
        if contact and not valid_contact(contact):
            await abort_invalid(context, [("contact_email", "must be an email address")])
        async with self.engine.begin() as conn:
            row = await tenant_store.create_tenant(conn, name, plan, contact or None)
        return ledger_pb2.CreateTenantResponse(tenant=tenant_to_proto(row))

    async def GetTenant(self, request: ledger_pb2.GetTenantRequest, context: Context) -> ledger_pb2.GetTenantResponse:
        tenant_id = await _require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.connect() as conn:
            row = await tenant_store.get_tenant(conn, tenant_id)
        if row is None:
            await abort_not_found(context, "tenant")
        return ledger_pb2.GetTenantResponse(tenant=tenant_to_proto(row))

    async def CreateApiKey(
        self, request: ledger_pb2.CreateApiKeyRequest, context: Context
    ) -> ledger_pb2.CreateApiKeyResponse:
        tenant_id = await _require_id(context, request.tenant_id, "tenant_id")
        if tenant_id == PLATFORM_TENANT_ID:
            await abort_not_found(context, "tenant")
        if len(request.key_hash) != 32:
            await abort_invalid(context, [("key_hash", "must be a SHA-256 digest")])
        async with self.engine.begin() as conn:
            row = await tenant_store.create_api_key(
                conn, tenant_id, request.name or "default", request.key_hash, request.public_id
            )
            # The tenant hears about every new key (name and prefix, never the secret).
            await queue_key_created(conn, self.platform, tenant_id, row.id, row.name, request.public_id)
        response = ledger_pb2.CreateApiKeyResponse(key_id=str(row.id))
        response.created_at.FromDatetime(row.created_at)
        return response

    async def AuthenticateApiKey(
        self, request: ledger_pb2.AuthenticateApiKeyRequest, context: Context
    ) -> ledger_pb2.AuthenticateApiKeyResponse:
        async with self.engine.connect() as conn:
            found = await tenant_store.authenticate(conn, request.key_hash)
        if found is None:
            return ledger_pb2.AuthenticateApiKeyResponse(found=False)
        row, key_id = found
        return ledger_pb2.AuthenticateApiKeyResponse(found=True, tenant=tenant_to_proto(row), key_id=str(key_id))
