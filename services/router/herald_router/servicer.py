"""RouterService: the decisions about a submission (priority, event fan-out), then the
ledger admits, writes and publishes the jobs: a job never comes back through here."""

from __future__ import annotations

from typing import Any

import grpc

from herald.grpcio.context import Context
from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.grpcio.ledger import Ledger
from herald.ids import new_id
from herald.rejections import meaning_of
from herald.telemetry.metrics import JOBS_ACCEPTED, JOBS_REJECTED, label
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_pb2, ledger_subscriptions_pb2, router_pb2, router_pb2_grpc
from herald_router.fanout import HERALD_PREFIX, Match, SubscriptionCache, about_target, matching_targets
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
        # Within the gateway's deadline: a call it gave up on is not worth finishing here.
        created = await self.ledger.jobs.CreateJobs(
            ledger_jobs_pb2.CreateJobsRequest(drafts=drafts), timeout=context.time_remaining()
        )
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
        if request.event_type.startswith(HERALD_PREFIX):
            await abort_invalid(context, [("event_type", f"{HERALD_PREFIX}* types are Herald's own events")])
        return await self.publish_event(request)

    async def publish_event(
        self, request: router_pb2.PublishEventRequest, operational: bool = False
    ) -> router_pb2.PublishEventResponse:
        """Matches the event against the tenant's cached subscriptions and has the ledger
        record it (with its payload) with one webhook job per matching target (SKIPPED for a
        paused subscription or a disabled target), and publish them (or answer the first
        result of a repeated event id). Shared by the RPC and the NATS intake. `operational`:
        one of Herald's own events (the ledger's, from the operational intake subject): never
        delivered to the target it is about, and its deliveries count against no quota."""
        event_id = request.event_id or str(new_id())
        excluded = about_target(request.event_type, request.payload) if operational else ""
        found = matching_targets(
            await self.subscriptions.get(request.tenant_id), request.event_type, excluded_target=excluded
        )
        content_type = request.content_type or "application/json"
        forward = self._record(request.tenant_id, request.plan, event_id, request.event_type, content_type, found)
        forward.payload = request.payload
        forward.ordering_key = request.ordering_key
        forward.operational = operational
        recorded = await self.ledger.subscriptions.RecordEvent(forward)
        self._count(recorded, found)
        if recorded.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            return router_pb2.PublishEventResponse(
                event_id=event_id, rejection=recorded.rejection, detail=recorded.detail
            )
        return router_pb2.PublishEventResponse(
            event_id=event_id, replayed=recorded.replayed, deliveries=recorded.deliveries
        )

    async def ReplayEvent(
        self, request: router_pb2.ReplayEventRequest, context: Context
    ) -> router_pb2.ReplayEventResponse:
        """Fans a recorded event out again, to the subscriptions matching it today (or to one
        of their targets): new jobs added to the event's deliveries, admitted like any."""
        if not request.tenant_id or not request.event_id:
            await abort_invalid(context, [("tenant_id/event_id", "are required")])
        try:
            event = (
                await self.ledger.subscriptions.GetEvent(
                    ledger_subscriptions_pb2.GetEventRequest(tenant_id=request.tenant_id, event_id=request.event_id)
                )
            ).event
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            await abort_not_found(context, "event")
        if event.HasField("payload_expunged_at"):
            await abort_failed_precondition(context, "its payload was expunged: it cannot be replayed")
        subscriptions = await self.subscriptions.get(request.tenant_id)
        excluded = about_target(event.event_type, event.payload)
        found = [
            m for m in matching_targets(subscriptions, event.event_type, request.target_id, excluded) if not m.skipped
        ]
        if request.target_id and not found:
            await abort_not_found(context, "target (an enabled target of an active subscription matching the event)")
        content_type = event.content_type or "application/json"
        forward = self._record(request.tenant_id, request.plan, event.id, event.event_type, content_type, found)
        forward.replay = True
        forward.ordering_key = event.ordering_key
        recorded = await self.ledger.subscriptions.RecordEvent(forward)
        self._count(recorded, found)
        return router_pb2.ReplayEventResponse(
            event_id=event.id, deliveries=recorded.deliveries, rejection=recorded.rejection, detail=recorded.detail
        )

    @staticmethod
    def _record(
        tenant_id: str, plan: int, event_id: str, event_type: str, content_type: str, found: list[Match]
    ) -> ledger_subscriptions_pb2.RecordEventRequest:
        """The ledger's request for an event's deliveries: a webhook draft per match."""
        priority = effective_priority(router_pb2.Submission(plan=plan, channel=common_pb2.CHANNEL_WEBHOOK))  # type: ignore[arg-type]
        drafts = []
        for match in found:
            headers = dict(match.target.headers)
            headers["X-Herald-Event-Id"] = event_id
            headers["X-Herald-Event-Type"] = event_type
            drafts.append(
                ledger_pb2.JobDraft(
                    tenant_id=tenant_id,
                    channel=common_pb2.CHANNEL_WEBHOOK,
                    priority=priority,  # type: ignore[arg-type]
                    webhook=common_pb2.WebhookRequest(
                        url=match.target.url,
                        headers=headers,
                        sealed_headers=match.target.sealed_headers,
                        content_type=content_type,
                    ),
                )
            )
        return ledger_subscriptions_pb2.RecordEventRequest(
            tenant_id=tenant_id,
            event_id=event_id,
            event_type=event_type,
            drafts=drafts,
            target_ids=[m.target.id for m in found],
            skip_reasons=[m.skipped for m in found] if any(m.skipped for m in found) else [],
            content_type=content_type,
        )

    @staticmethod
    def _count(recorded: Any, found: list[Match]) -> None:
        channel = label(common_pb2.Channel.Name(common_pb2.CHANNEL_WEBHOOK))
        sent = sum(1 for m in found if not m.skipped)
        if recorded.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            JOBS_REJECTED.labels(channel, meaning_of(recorded.rejection).label).inc(sent)
        elif not recorded.replayed:
            JOBS_ACCEPTED.labels(channel).inc(len(recorded.deliveries))
