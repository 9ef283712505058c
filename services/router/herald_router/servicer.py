"""RouterService: admission, then the ledger writes the jobs, then the bus takes them."""

from __future__ import annotations

from typing import Any

import grpc

from herald.batching import Batcher
from herald.grpcio.errors import abort_invalid
from herald.ids import new_id
from herald.telemetry.metrics import JOBS_ACCEPTED, JOBS_REJECTED, label
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc, router_pb2, router_pb2_grpc
from herald_router.admission import effective_priority
from herald_router.fanout import SubscriptionCache, matching_targets
from herald_router.publishing import Publisher

Context = grpc.aio.ServicerContext[Any, Any]
REJECTION_LABELS = {
    ledger_pb2.REJECTION_QUOTA_EXCEEDED: "quota",
    ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED: "sender_domain",
    ledger_pb2.REJECTION_IDEMPOTENCY_MISMATCH: "idempotency",
    ledger_pb2.REJECTION_IDEMPOTENCY_IN_FLIGHT: "idempotency",
}


class RouterServicer(router_pb2_grpc.RouterServiceServicer):
    def __init__(
        self,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        publisher: Publisher,
        subscriptions: SubscriptionCache | None = None,
    ) -> None:
        self.ledger = ledger
        self.publisher = publisher
        self.subscriptions = subscriptions or SubscriptionCache(ledger)
        # Concurrent submissions reach the ledger as one CreateJobs call (and, there, one transaction).
        self.creator: Batcher[list[ledger_pb2.JobDraft], list[ledger_pb2.DraftOutcome]] = Batcher(
            self._create_many,
            max_items=64,
            max_wait=0.002,
            size_of=lambda drafts: sum(d.ByteSize() for d in drafts),
            max_concurrent=4,
        )

    async def _create_many(self, requests: list[list[ledger_pb2.JobDraft]]) -> list[list[ledger_pb2.DraftOutcome]]:
        drafts = [draft for request in requests for draft in request]
        created = await self.ledger.CreateJobs(ledger_pb2.CreateJobsRequest(drafts=drafts))
        outcomes = list(created.outcomes)
        split, start = [], 0
        for request in requests:
            split.append(outcomes[start : start + len(request)])
            start += len(request)
        return split

    async def SubmitJobs(
        self, request: router_pb2.SubmitJobsRequest, context: Context
    ) -> router_pb2.SubmitJobsResponse:
        drafts = []
        for i, submission in enumerate(request.submissions):
            kind = submission.WhichOneof("request")
            if kind is None:
                await abort_invalid(context, [(f"submissions[{i}].request", "a webhook or an email is required")])
            draft = ledger_pb2.JobDraft(
                tenant_id=submission.tenant_id,
                channel=submission.channel,
                priority=effective_priority(submission),  # type: ignore[arg-type]
                idempotency_key=submission.idempotency_key,
                ordering_key=submission.ordering_key,
                request_hash=submission.request_hash,
            )
            if kind == "webhook":
                draft.webhook.CopyFrom(submission.webhook)
            else:
                draft.email.CopyFrom(submission.email)
            drafts.append(draft)
        outcomes = await self.creator.submit(drafts)
        for draft, outcome in zip(drafts, outcomes, strict=True):
            if outcome.HasField("job") and not outcome.replayed:
                # The ledger answers without the request we sent it: the work message needs it.
                if draft.HasField("webhook"):
                    outcome.job.webhook.CopyFrom(draft.webhook)
                else:
                    outcome.job.email.CopyFrom(draft.email)
        # A replayed outcome names a job published (or being published) by its first request.
        admitted = [
            o.job
            for o in outcomes
            if o.HasField("job") and not o.replayed and o.job.status == common_pb2.JOB_STATUS_PENDING
        ]
        for submission, outcome in zip(request.submissions, outcomes, strict=True):
            channel = label(common_pb2.Channel.Name(submission.channel))
            if outcome.replayed:
                continue
            if outcome.HasField("job"):
                JOBS_ACCEPTED.labels(channel).inc()
            else:
                JOBS_REJECTED.labels(channel, REJECTION_LABELS.get(outcome.rejection, "quota")).inc()
        published = await self.publisher.publish(admitted)
        for outcome in outcomes:
            if outcome.HasField("job"):
                outcome.job.ClearField("request")
                if outcome.job.id in published:
                    outcome.job.status = common_pb2.JOB_STATUS_QUEUED
        return router_pb2.SubmitJobsResponse(outcomes=outcomes)

    async def RetryJobs(
        self, request: router_pb2.RouterServiceRetryJobsRequest, context: Context
    ) -> router_pb2.RouterServiceRetryJobsResponse:
        """The ledger moves the jobs back to PENDING (a fresh attempt budget, the next run);
        they are published at once and marked QUEUED. One the bus does not take stays
        PENDING and the outbox publishes it when it can."""
        forward = ledger_pb2.RetryJobsRequest(
            tenant_id=request.tenant_id,
            job_ids=request.job_ids,
            all_dead_letters=request.all_dead_letters,
            limit=request.limit,
        )
        if request.HasField("since"):
            forward.since.CopyFrom(request.since)
        retried = await self.ledger.RetryJobs(forward)
        published = await self.publisher.publish(list(retried.jobs))
        await self.publisher.release_dead_letters(list(retried.released_dead_letter_sequences))
        outcomes = list(retried.outcomes)
        for outcome in outcomes:
            if outcome.retried and outcome.job_id in published:
                outcome.status = common_pb2.JOB_STATUS_QUEUED
        return router_pb2.RouterServiceRetryJobsResponse(outcomes=outcomes)

    async def PublishEvent(
        self, request: router_pb2.PublishEventRequest, context: Context
    ) -> router_pb2.PublishEventResponse:
        if not request.tenant_id or not request.event_type:
            await abort_invalid(context, [("tenant_id/event_type", "are required")])
        return await self.publish_event(request)

    async def publish_event(self, request: router_pb2.PublishEventRequest) -> router_pb2.PublishEventResponse:
        """Matches the event against the tenant's cached subscriptions, has the ledger record
        it with one webhook job per matching target (or answer the first result of a repeated
        event id), and publishes the new jobs. Shared by the RPC and the NATS intake."""
        event_id = request.event_id or str(new_id())
        targets = matching_targets(await self.subscriptions.get(request.tenant_id), request.event_type)
        priority = effective_priority(router_pb2.Submission(plan=request.plan, channel=common_pb2.CHANNEL_WEBHOOK))
        drafts = []
        for target in targets:
            headers = dict(target.headers)
            headers["X-Herald-Event-Id"] = event_id
            headers["X-Herald-Event-Type"] = request.event_type
            drafts.append(
                ledger_pb2.JobDraft(
                    tenant_id=request.tenant_id,
                    channel=common_pb2.CHANNEL_WEBHOOK,
                    priority=priority,  # type: ignore[arg-type]
                    webhook=common_pb2.WebhookRequest(
                        url=target.url,
                        headers=headers,
                        content_type=request.content_type or "application/json",
                    ),
                )
            )
        recorded = await self.ledger.RecordEvent(
            ledger_pb2.RecordEventRequest(
                tenant_id=request.tenant_id,
                event_id=event_id,
                event_type=request.event_type,
                drafts=drafts,
                target_ids=[t.id for t in targets],
                payload=request.payload,
            )
        )
        channel = label(common_pb2.Channel.Name(common_pb2.CHANNEL_WEBHOOK))
        if recorded.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            JOBS_REJECTED.labels(channel, REJECTION_LABELS.get(recorded.rejection, "quota")).inc(len(drafts))
            return router_pb2.PublishEventResponse(
                event_id=event_id, rejection=recorded.rejection, detail=recorded.detail
            )
        if not recorded.replayed:
            JOBS_ACCEPTED.labels(channel).inc(len(recorded.jobs))
            jobs = list(recorded.jobs)
            for job in jobs:
                job.webhook.body = request.payload
            await self.publisher.publish(jobs)
        return router_pb2.PublishEventResponse(
            event_id=event_id, replayed=recorded.replayed, deliveries=recorded.deliveries
        )
