"""Tenant events: the subscriptions the router matches events against (held in its
memory, reloaded on `<prefix>.control.subscriptions`), and RecordEvent, which writes an
event's jobs (the router's drafts) once per event id, admitted like CreateJobs's."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Row

from herald.grpcio.errors import abort_invalid, abort_unavailable
from herald.ids import parse_id
from herald.secrets import KeyRing
from herald.v1 import common_pb2, ledger_pb2, ledger_subscriptions_pb2
from herald.webhooks.sealed_headers import seal_request
from herald_ledger.convert import webhook_request_to_row
from herald_ledger.inflight import Committing
from herald_ledger.outbox import Outbox, work_job
from herald_ledger.rpc.common import REJECTIONS, Context, Rpcs, require_id, tenant_list_rpc
from herald_ledger.rpc.subscriptions import MAX_TEXT, target_to_proto
from herald_ledger.store import job_creation
from herald_ledger.store import subscriptions as store
from herald_ledger.store.codes import PRIORITY_FROM_PROTO
from herald_ledger.store.platform_email import PlatformMail
from herald_ledger.store.quota import admit


def _active_to_proto(row: Row[Any]) -> ledger_subscriptions_pb2.ActiveSubscription:
    return ledger_subscriptions_pb2.ActiveSubscription(
        subscription_id=str(row.subscription_id), target=target_to_proto(row), event_types=list(row.event_types)
    )


class EventRpcs(Rpcs):
    outbox: Outbox
    committing: Committing
    platform: PlatformMail | None
    ring: KeyRing | None

    ListActiveSubscriptions = tenant_list_rpc(
        store.active_subscriptions,
        ledger_subscriptions_pb2.ListActiveSubscriptionsResponse,
        "subscriptions",
        _active_to_proto,
    )

    async def RecordEvent(
        self, request: ledger_subscriptions_pb2.RecordEventRequest, context: Context
    ) -> ledger_subscriptions_pb2.RecordEventResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not 0 < len(request.event_id) <= MAX_TEXT or not 0 < len(request.event_type) <= MAX_TEXT:
            await abort_invalid(context, [("event_id/event_type", "1-255 characters each")])
        if len(request.target_ids) != len(request.drafts):
            await abort_invalid(context, [("target_ids", "one per draft")])
        new_jobs = []
        for i, draft in enumerate(request.drafts):
            priority = PRIORITY_FROM_PROTO.get(draft.priority)
            if draft.WhichOneof("request") != "webhook" or priority is None or draft.tenant_id != request.tenant_id:
                await abort_invalid(context, [(f"drafts[{i}]", "a webhook draft of this tenant with a priority")])
            seal_request(self.ring, request.tenant_id, draft.webhook)  # a target's are sealed already
            fields, _ = webhook_request_to_row(draft.webhook)
            new_jobs.append(
                job_creation.NewJob(
                    tenant_id=tenant_id,
                    channel="webhook",
                    priority=priority,
                    request=fields,
                    body=request.payload,
                    target_id=parse_id(request.target_ids[i]),
                    draft=draft,
                )
            )
        rejection: tuple[int, str] | None = None
        with self.committing.writing() as committing:
            async with self.engine.connect() as conn:
                async with conn.begin() as transaction:
                    claimed, earlier = await store.claim_event(conn, tenant_id, request.event_id, request.event_type)
                    if claimed is None:
                        await transaction.rollback()
                        if earlier is None:
                            await abort_unavailable(context, "the event is being replaced; retry")
                        return ledger_subscriptions_pb2.RecordEventResponse(
                            replayed=True,
                            deliveries=[common_pb2.EventDelivery(**d) for d in earlier.deliveries],
                        )
                    verdicts, usage = await admit(conn, new_jobs, self.platform)
                    refused = [v for v in verdicts if v.job is None]
                    if refused:
                        await transaction.rollback()
                        kind = REJECTIONS.get(refused[0].rejection_kind, ledger_pb2.REJECTION_QUOTA_EXCEEDED)
                        rejection = (kind, refused[0].rejection or "monthly quota reached")
                    else:
                        publishing = self.outbox.ready
                        await job_creation.insert_jobs(conn, new_jobs, published=publishing, usage=usage)
                        deliveries = [
                            {"job_id": str(job.id), "target_id": target_id}
                            for job, target_id in zip(new_jobs, request.target_ids, strict=True)
                        ]
                        await store.set_event_deliveries(conn, claimed, deliveries)
                        # Published before the commit, as CreateJobs does (herald_ledger.outbox).
                        if publishing:
                            committing(job.id for job in new_jobs)
                            await self.outbox.publish_in(conn, [work_job(job) for job in new_jobs])
        if rejection is not None:
            return ledger_subscriptions_pb2.RecordEventResponse(rejection=rejection[0], detail=rejection[1])  # type: ignore[arg-type]
        return ledger_subscriptions_pb2.RecordEventResponse(
            deliveries=[common_pb2.EventDelivery(**d) for d in deliveries]
        )
