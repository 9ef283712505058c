"""RouterService: the decisions about a submission (priority, event fan-out), then the
ledger admits, writes and publishes the jobs: a job never comes back through here."""

from __future__ import annotations

from herald.grpcio.context import Context
from herald.grpcio.errors import abort_invalid
from herald.grpcio.ledger import Ledger
from herald.ids import new_id
from herald.rejections import meaning_of
from herald.telemetry.metrics import JOBS_ACCEPTED, JOBS_REJECTED, label
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_pb2, ledger_subscriptions_pb2, router_pb2, router_pb2_grpc
from herald_router.fanout import SubscriptionCache, matching_targets
from herald_router.priority import effective_priority


class RouterServicer(router_pb2_grpc.RouterServiceServicer):
    def __init__(
        self,
        ledger: Ledger,
        subscriptions: SubscriptionCache | None = None,
    ) -> None:
        self.ledger = ledger
        self.subscriptions = subscriptions or SubscriptionCache(ledger)

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
        # The gateway already coalesces concurrent requests into this call, and the ledger
        # group-commits concurrent calls: one hop, no batcher of our own in between.
        created = await self.ledger.jobs.CreateJobs(ledger_jobs_pb2.CreateJobsRequest(drafts=drafts))
        outcomes = list(created.outcomes)
        for submission, outcome in zip(request.submissions, outcomes, strict=True):
            channel = label(common_pb2.Channel.Name(submission.channel))
            if outcome.replayed:
                continue
            if outcome.HasField("job"):
                JOBS_ACCEPTED.labels(channel).inc()
            else:
                JOBS_REJECTED.labels(channel, meaning_of(outcome.rejection).label).inc()
        return router_pb2.SubmitJobsResponse(outcomes=outcomes)

    async def RetryJobs(
        self, request: router_pb2.RouterServiceRetryJobsRequest, context: Context
    ) -> router_pb2.RouterServiceRetryJobsResponse:
        """The ledger moves the jobs back to PENDING (a fresh attempt budget, the next run),
        publishes them and marks them QUEUED. One the bus does not take stays PENDING and
        the ledger's outbox publishes it when it can."""
        forward = ledger_jobs_pb2.RetryJobsRequest(
            tenant_id=request.tenant_id,
            job_ids=request.job_ids,
            all_dead_letters=request.all_dead_letters,
            limit=request.limit,
        )
        if request.HasField("since"):
            forward.since.CopyFrom(request.since)
        retried = await self.ledger.jobs.RetryJobs(forward)
        return router_pb2.RouterServiceRetryJobsResponse(outcomes=list(retried.outcomes))

    async def PublishEvent(
        self, request: router_pb2.PublishEventRequest, context: Context
    ) -> router_pb2.PublishEventResponse:
        if not request.tenant_id or not request.event_type:
            await abort_invalid(context, [("tenant_id/event_type", "are required")])
        return await self.publish_event(request)

    async def publish_event(self, request: router_pb2.PublishEventRequest) -> router_pb2.PublishEventResponse:
        """Matches the event against the tenant's cached subscriptions and has the ledger
        record it with one webhook job per matching target, and publish them (or answer the
        first result of a repeated event id). Shared by the RPC and the NATS intake."""
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
                        sealed_headers=target.sealed_headers,
                        content_type=request.content_type or "application/json",
                    ),
                )
            )
        recorded = await self.ledger.subscriptions.RecordEvent(
            ledger_subscriptions_pb2.RecordEventRequest(
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
            JOBS_REJECTED.labels(channel, meaning_of(recorded.rejection).label).inc(len(drafts))
            return router_pb2.PublishEventResponse(
                event_id=event_id, rejection=recorded.rejection, detail=recorded.detail
            )
        if not recorded.replayed:
            JOBS_ACCEPTED.labels(channel).inc(len(recorded.deliveries))
        return router_pb2.PublishEventResponse(
            event_id=event_id, replayed=recorded.replayed, deliveries=recorded.deliveries
        )
