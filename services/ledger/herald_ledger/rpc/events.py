"""Tenant events: the subscriptions the router matches events against (held in its
memory, reloaded on `<prefix>.control.subscriptions`), RecordEvent, which writes an event
(with its payload) and its jobs (the router's drafts) once per event id, admitted like
CreateJobs's, or adds a replay's jobs to a recorded event; and the event log's reads."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Row

from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found, abort_unavailable
from herald.ids import parse_id
from herald.secrets import KeyRing
from herald.v1 import common_pb2, ledger_pb2, ledger_subscriptions_pb2
from herald.webhooks.sealed_headers import seal_request
from herald_ledger.convert import from_timestamp, target_to_proto, timestamp, webhook_request_to_row
from herald_ledger.inflight import Committing
from herald_ledger.job_status import JobStatus
from herald_ledger.outbox import Outbox, work_job
from herald_ledger.rpc.common import REJECTIONS, Context, Rpcs, require_id, require_page_size, tenant_list_rpc
from herald_ledger.rpc.subscriptions import MAX_TEXT
from herald_ledger.store import event_log, job_creation, operational, payloads
from herald_ledger.store import subscriptions as store
from herald_ledger.store.codes import PRIORITY_FROM_PROTO, STATUS_TO_PROTO
from herald_ledger.store.platform_email import PlatformMail
from herald_ledger.store.quota import admit, note_refused_fan_out


def _active_to_proto(row: Row[Any]) -> ledger_subscriptions_pb2.ActiveSubscription:
    return ledger_subscriptions_pb2.ActiveSubscription(
        subscription_id=str(row.subscription_id),
        target=target_to_proto(row),
        event_types=list(row.event_types),
        active=row.subscription_active,
    )


def event_to_proto(row: Row[Any], deliveries: list[Row[Any]] | None = None) -> common_pb2.Event:
    mapping = row._mapping
    event = common_pb2.Event(
        id=row.event_id,
        event_type=row.event_type,
        content_type=row.content_type or "",
        created_at=timestamp(row.created_at),
        ordering_key=row.ordering_key or "",
        payload_expunged_at=timestamp(mapping.get("payload_expunged_at")),
    )
    if mapping.get("payload") is not None:
        event.payload = bytes(mapping["payload"])
    for d in deliveries or []:
        event.deliveries.append(
            common_pb2.EventDelivery(
                job_id=str(d.id),
                target_id=str(d.target_id) if d.target_id else "",
                status=STATUS_TO_PROTO[JobStatus(d.status)],  # type: ignore[arg-type]
                reason=d.last_error or "",
            )
        )
    return event


def scoped_ordering_key(ordering_key: str, target_id: str) -> str | None:
    """An event's ordering key orders its deliveries per target: one slow target does not hold
    another's back. The job carries the key scoped to its target."""
    return f"{ordering_key}@{target_id}" if ordering_key else None


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
        if request.skip_reasons and len(request.skip_reasons) != len(request.drafts):
            await abort_invalid(context, [("skip_reasons", "none, or one per draft")])
        if not request.replay and request.operational != request.event_type.startswith(operational.PREFIX):
            await abort_invalid(context, [("event_type", "herald.* types are Herald's own events, and only they")])
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
                    skipped=request.skip_reasons[i] if request.skip_reasons else "",
                    event_id=request.event_id,
                    ordering_key=scoped_ordering_key(request.ordering_key, request.target_ids[i]),
                )
            )
        sent = [j for j in new_jobs if not j.skipped]
        rejection: tuple[int, str] | None = None
        with self.committing.writing() as committing:
            async with self.outbox.publishing(len(sent)) as publication, self.engine.connect() as conn:
                async with conn.begin() as transaction:
                    if request.replay:
                        recorded = await event_log.get_event(conn, tenant_id, request.event_id)
                        if recorded is None:
                            await transaction.rollback()
                            await abort_not_found(context, "event")
                        if recorded.payload_expunged_at is not None:
                            await transaction.rollback()
                            await abort_failed_precondition(context, "its payload was expunged: it cannot be replayed")
                        for job in new_jobs:
                            job.body = bytes(recorded.payload or b"")
                        claimed = None
                    else:
                        event = store.NewEvent(
                            request.event_id,
                            request.event_type,
                            request.payload,
                            request.content_type,
                            request.ordering_key or None,
                        )
                        claimed, earlier = await store.claim_event(conn, tenant_id, event)
                        if claimed is None:
                            await transaction.rollback()
                            if earlier is None:
                                await abort_unavailable(context, "the event is being replaced; retry")
                            return ledger_subscriptions_pb2.RecordEventResponse(
                                replayed=True,
                                deliveries=[common_pb2.EventDelivery(**d) for d in earlier.deliveries],
                            )
                    # Skipped deliveries are written, never admitted: they do not count. Nor do
                    # Herald's own events' (a quota.exhausted event must still go out).
                    verdicts, usage = await admit(conn, sent, self.platform) if not request.operational else ([], None)
                    refused = [v for v in verdicts if v.job is None]
                    if refused:
                        await transaction.rollback()
                        kind = REJECTIONS.get(refused[0].rejection_kind, ledger_pb2.REJECTION_QUOTA_EXCEEDED)
                        rejection = (kind, refused[0].rejection or "monthly quota reached")
                    else:
                        publishing = self.outbox.ready
                        await job_creation.insert_jobs(conn, new_jobs, published=publishing, usage=usage)
                        deliveries = [{"job_id": str(job.id), "target_id": str(job.target_id)} for job in sent]
                        if claimed is not None:
                            await store.set_event_deliveries(conn, claimed, deliveries)
                        # Sent before the commit, acknowledged after it, as CreateJobs does
                        # (herald_ledger.outbox).
                        if publishing:
                            committing(sent)
                            await publication.send([work_job(job) for job in sent])
        if rejection is not None:
            if rejection[0] == ledger_pb2.REJECTION_QUOTA_EXCEEDED:
                async with self.engine.begin() as conn:
                    await note_refused_fan_out(conn, tenant_id, "webhook", len(sent), self.platform)
            return ledger_subscriptions_pb2.RecordEventResponse(rejection=rejection[0], detail=rejection[1])  # type: ignore[arg-type]
        return ledger_subscriptions_pb2.RecordEventResponse(
            deliveries=[common_pb2.EventDelivery(**d) for d in deliveries]
        )

    async def ListEvents(
        self, request: ledger_subscriptions_pb2.ListEventsRequest, context: Context
    ) -> ledger_subscriptions_pb2.ListEventsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        page_size = await require_page_size(context, request.page_size)
        before = parse_id(request.cursor) if request.cursor else None
        if request.cursor and before is None:
            await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
        async with self.engine.connect() as conn:
            rows, next_cursor = await event_log.list_events(
                conn,
                tenant_id,
                page_size,
                before,
                request.event_type,
                from_timestamp(request.since, request.HasField("since")),
                from_timestamp(request.until, request.HasField("until")),
            )
        return ledger_subscriptions_pb2.ListEventsResponse(
            events=[event_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def GetEvent(
        self, request: ledger_subscriptions_pb2.GetEventRequest, context: Context
    ) -> ledger_subscriptions_pb2.GetEventResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.connect() as conn:
            row = await event_log.get_event(conn, tenant_id, request.event_id)
            deliveries = await event_log.event_deliveries(conn, tenant_id, request.event_id) if row else []
        if row is None:
            await abort_not_found(context, "event")
        return ledger_subscriptions_pb2.GetEventResponse(event=event_to_proto(row, deliveries))

    async def ExpungeEventPayload(
        self, request: ledger_subscriptions_pb2.ExpungeEventPayloadRequest, context: Context
    ) -> ledger_subscriptions_pb2.ExpungeEventPayloadResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        try:
            async with self.engine.begin() as conn:
                found = await payloads.expunge_event(conn, tenant_id, request.event_id)
        except payloads.UnderWay as under_way:
            await abort_failed_precondition(context, str(under_way))
        if not found:
            await abort_not_found(context, "event")
        return ledger_subscriptions_pb2.ExpungeEventPayloadResponse()
