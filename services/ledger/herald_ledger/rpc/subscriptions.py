"""Webhook subscriptions (targets, filters, subscriptions) and tenant events.

Every change to a tenant's targets, filters or subscriptions is announced after the commit
on `<prefix>.control.subscriptions` ({"tenant_id"}), so routers reload that tenant's fan-out
cache; events never read subscriptions from the database per event (the router matches them
in memory and hands RecordEvent the drafts)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found, abort_unavailable
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_pb2
from herald_ledger.convert import job_to_proto, timestamp, webhook_request_to_row
from herald_ledger.db.models import event_filters, subscriptions, webhook_targets
from herald_ledger.notifications import SUBSCRIPTIONS, Notifier
from herald_ledger.rpc.common import Context, require_id
from herald_ledger.store import jobs as job_store
from herald_ledger.store import subscriptions as store
from herald_ledger.store.admission import admit
from herald_ledger.store.codes import PRIORITY_FROM_PROTO
from herald_ledger.store.platform_email import PlatformMail

MAX_PAGE_SIZE = 200
MAX_EVENT_TYPES = 100
MAX_TEXT = 255


def target_to_proto(row: Row[Any]) -> common_pb2.WebhookTarget:
    target = common_pb2.WebhookTarget(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        url=row.url,
        description=row.description,
        headers=row.headers or {},
        enabled=row.enabled,
        disabled_reason=row.disabled_reason or "",
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )
    if row.rate_limit_per_min is not None:
        target.rate_limit_per_min = row.rate_limit_per_min
    failing_since = timestamp(getattr(row, "failing_since", None))
    if failing_since is not None:
        target.failing_since.CopyFrom(failing_since)
    return target


def filter_to_proto(row: Row[Any]) -> common_pb2.EventFilter:
    return common_pb2.EventFilter(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        description=row.description,
        event_types=list(row.event_types),
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def subscription_to_proto(row: Row[Any]) -> common_pb2.Subscription:
    return common_pb2.Subscription(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        target_id=str(row.target_id),
        filter_id=str(row.filter_id),
        active=row.active,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def _event_type_problems(types: list[str]) -> list[tuple[str, str]]:
    if not types or len(types) > MAX_EVENT_TYPES:
        return [("event_types", f"1-{MAX_EVENT_TYPES} event types")]
    return [(f"event_types[{i}]", "1-255 characters") for i, t in enumerate(types) if not 0 < len(t) <= MAX_TEXT]


class SubscriptionRpcs:
    engine: AsyncEngine
    notifier: Notifier
    platform: PlatformMail | None

    async def _changed(self, tenant_id: uuid.UUID) -> None:
        await self.notifier.publish(SUBSCRIPTIONS, tenant_id=str(tenant_id))

    async def _page(self, context: Context, page_size: int, cursor: str) -> tuple[int, uuid.UUID | None]:
        size = page_size or 50
        if not 1 <= size <= MAX_PAGE_SIZE:
            await abort_invalid(context, [("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")])
        after = parse_id(cursor) if cursor else None
        if cursor and after is None:
            await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
        return size, after

    async def _owned(self, context: Context, tenant_id: uuid.UUID, value: str, table: Any, what: str) -> uuid.UUID:
        """The id of one of the tenant's rows, or NOT_FOUND (another tenant's id reads as missing)."""
        row_id = parse_id(value)
        if row_id is not None:
            async with self.engine.connect() as conn:
                if await store.get(conn, table, tenant_id, row_id) is not None:
                    return row_id
        await abort_not_found(context, what)

    # Targets

    async def CreateWebhookTarget(
        self, request: ledger_pb2.CreateWebhookTargetRequest, context: Context
    ) -> ledger_pb2.CreateWebhookTargetResponse:
        target = request.target
        tenant_id = await require_id(context, target.tenant_id, "target.tenant_id")
        if not target.url.startswith(("http://", "https://")):
            await abort_invalid(context, [("target.url", "must be an http or https URL")])
        limit = target.rate_limit_per_min if target.HasField("rate_limit_per_min") else None
        async with self.engine.begin() as conn:
            row = await store.create(
                conn,
                webhook_targets,
                {
                    "tenant_id": tenant_id,
                    "url": target.url,
                    "description": target.description,
                    "headers": dict(target.headers),
                    "rate_limit_per_min": limit or None,
                    "enabled": target.enabled,
                    "disabled_reason": None if target.enabled else (target.disabled_reason or None),
                },
            )
        await self._changed(tenant_id)
        return ledger_pb2.CreateWebhookTargetResponse(target=target_to_proto(row))

    async def GetWebhookTarget(
        self, request: ledger_pb2.GetWebhookTargetRequest, context: Context
    ) -> ledger_pb2.GetWebhookTargetResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self._get(tenant_id, request.target_id, webhook_targets)
        if row is None:
            await abort_not_found(context, "target")
        return ledger_pb2.GetWebhookTargetResponse(target=target_to_proto(row))

    async def ListWebhookTargets(
        self, request: ledger_pb2.ListWebhookTargetsRequest, context: Context
    ) -> ledger_pb2.ListWebhookTargetsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await self._page(context, request.page_size, request.cursor)
        async with self.engine.connect() as conn:
            rows, next_cursor = await store.list_page(conn, webhook_targets, tenant_id, size, after)
        return ledger_pb2.ListWebhookTargetsResponse(
            targets=[target_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateWebhookTarget(
        self, request: ledger_pb2.UpdateWebhookTargetRequest, context: Context
    ) -> ledger_pb2.UpdateWebhookTargetResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, Any] = {}
        if request.HasField("url"):
            if not request.url.startswith(("http://", "https://")):
                await abort_invalid(context, [("url", "must be an http or https URL")])
            values["url"] = request.url
        if request.HasField("description"):
            values["description"] = request.description
        if request.replace_headers:
            values["headers"] = dict(request.headers)
        if request.HasField("rate_limit_per_min"):
            values["rate_limit_per_min"] = request.rate_limit_per_min or None
        if request.HasField("enabled"):
            values["enabled"] = request.enabled
            if request.enabled:
                # A target enabled again starts with a clean record: its old failing streak
                # must not disable it again at its first failure.
                values["disabled_reason"] = None
                values["failing_since"] = None
        if request.HasField("disabled_reason") and not (request.HasField("enabled") and request.enabled):
            values["disabled_reason"] = request.disabled_reason or None
        row = await self._update(tenant_id, request.target_id, webhook_targets, values)
        if row is None:
            await abort_not_found(context, "target")
        await self._changed(tenant_id)
        return ledger_pb2.UpdateWebhookTargetResponse(target=target_to_proto(row))

    async def DeleteWebhookTarget(
        self, request: ledger_pb2.DeleteWebhookTargetRequest, context: Context
    ) -> ledger_pb2.DeleteWebhookTargetResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not await self._delete(tenant_id, request.target_id, webhook_targets):
            await abort_not_found(context, "target")
        await self._changed(tenant_id)
        return ledger_pb2.DeleteWebhookTargetResponse()

    # Filters

    async def CreateEventFilter(
        self, request: ledger_pb2.CreateEventFilterRequest, context: Context
    ) -> ledger_pb2.CreateEventFilterResponse:
        event_filter = request.filter
        tenant_id = await require_id(context, event_filter.tenant_id, "filter.tenant_id")
        problems = _event_type_problems(list(event_filter.event_types))
        if problems:
            await abort_invalid(context, problems)
        async with self.engine.begin() as conn:
            row = await store.create(
                conn,
                event_filters,
                {
                    "tenant_id": tenant_id,
                    "description": event_filter.description,
                    "event_types": list(event_filter.event_types),
                },
            )
        await self._changed(tenant_id)
        return ledger_pb2.CreateEventFilterResponse(filter=filter_to_proto(row))

    async def GetEventFilter(
        self, request: ledger_pb2.GetEventFilterRequest, context: Context
    ) -> ledger_pb2.GetEventFilterResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self._get(tenant_id, request.filter_id, event_filters)
        if row is None:
            await abort_not_found(context, "filter")
        return ledger_pb2.GetEventFilterResponse(filter=filter_to_proto(row))

    async def ListEventFilters(
        self, request: ledger_pb2.ListEventFiltersRequest, context: Context
    ) -> ledger_pb2.ListEventFiltersResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await self._page(context, request.page_size, request.cursor)
        async with self.engine.connect() as conn:
            rows, next_cursor = await store.list_page(conn, event_filters, tenant_id, size, after)
        return ledger_pb2.ListEventFiltersResponse(filters=[filter_to_proto(r) for r in rows], next_cursor=next_cursor)

    async def UpdateEventFilter(
        self, request: ledger_pb2.UpdateEventFilterRequest, context: Context
    ) -> ledger_pb2.UpdateEventFilterResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, Any] = {}
        if request.HasField("description"):
            values["description"] = request.description
        if request.replace_event_types:
            problems = _event_type_problems(list(request.event_types))
            if problems:
                await abort_invalid(context, problems)
            values["event_types"] = list(request.event_types)
        row = await self._update(tenant_id, request.filter_id, event_filters, values)
        if row is None:
            await abort_not_found(context, "filter")
        await self._changed(tenant_id)
        return ledger_pb2.UpdateEventFilterResponse(filter=filter_to_proto(row))

    async def DeleteEventFilter(
        self, request: ledger_pb2.DeleteEventFilterRequest, context: Context
    ) -> ledger_pb2.DeleteEventFilterResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not await self._delete(tenant_id, request.filter_id, event_filters):
            await abort_not_found(context, "filter")
        await self._changed(tenant_id)
        return ledger_pb2.DeleteEventFilterResponse()

    # Subscriptions

    async def CreateSubscription(
        self, request: ledger_pb2.CreateSubscriptionRequest, context: Context
    ) -> ledger_pb2.CreateSubscriptionResponse:
        subscription = request.subscription
        tenant_id = await require_id(context, subscription.tenant_id, "subscription.tenant_id")
        target_id = await self._owned(context, tenant_id, subscription.target_id, webhook_targets, "target")
        filter_id = await self._owned(context, tenant_id, subscription.filter_id, event_filters, "filter")
        try:
            async with self.engine.begin() as conn:
                row = await store.create(
                    conn,
                    subscriptions,
                    {
                        "tenant_id": tenant_id,
                        "target_id": target_id,
                        "filter_id": filter_id,
                        "active": subscription.active,
                    },
                )
        except IntegrityError:
            # The target or filter was deleted meanwhile.
            await abort_not_found(context, "target or filter")
        await self._changed(tenant_id)
        return ledger_pb2.CreateSubscriptionResponse(subscription=subscription_to_proto(row))

    async def GetSubscription(
        self, request: ledger_pb2.GetSubscriptionRequest, context: Context
    ) -> ledger_pb2.GetSubscriptionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self._get(tenant_id, request.subscription_id, subscriptions)
        if row is None:
            await abort_not_found(context, "subscription")
        return ledger_pb2.GetSubscriptionResponse(subscription=subscription_to_proto(row))

    async def ListSubscriptions(
        self, request: ledger_pb2.ListSubscriptionsRequest, context: Context
    ) -> ledger_pb2.ListSubscriptionsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await self._page(context, request.page_size, request.cursor)
        async with self.engine.connect() as conn:
            rows, next_cursor = await store.list_page(conn, subscriptions, tenant_id, size, after)
        return ledger_pb2.ListSubscriptionsResponse(
            subscriptions=[subscription_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateSubscription(
        self, request: ledger_pb2.UpdateSubscriptionRequest, context: Context
    ) -> ledger_pb2.UpdateSubscriptionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, Any] = {}
        if request.HasField("target_id"):
            values["target_id"] = await self._owned(context, tenant_id, request.target_id, webhook_targets, "target")
        if request.HasField("filter_id"):
            values["filter_id"] = await self._owned(context, tenant_id, request.filter_id, event_filters, "filter")
        if request.HasField("active"):
            values["active"] = request.active
        try:
            row = await self._update(tenant_id, request.subscription_id, subscriptions, values)
        except IntegrityError:
            await abort_not_found(context, "target or filter")
        if row is None:
            await abort_not_found(context, "subscription")
        await self._changed(tenant_id)
        return ledger_pb2.UpdateSubscriptionResponse(subscription=subscription_to_proto(row))

    async def DeleteSubscription(
        self, request: ledger_pb2.DeleteSubscriptionRequest, context: Context
    ) -> ledger_pb2.DeleteSubscriptionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not await self._delete(tenant_id, request.subscription_id, subscriptions):
            await abort_not_found(context, "subscription")
        await self._changed(tenant_id)
        return ledger_pb2.DeleteSubscriptionResponse()

    async def ListActiveSubscriptions(
        self, request: ledger_pb2.ListActiveSubscriptionsRequest, context: Context
    ) -> ledger_pb2.ListActiveSubscriptionsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.connect() as conn:
            rows = await store.active_subscriptions(conn, tenant_id)
        return ledger_pb2.ListActiveSubscriptionsResponse(
            subscriptions=[
                ledger_pb2.ActiveSubscription(
                    subscription_id=str(row.subscription_id),
                    target=target_to_proto(row),
                    event_types=list(row.event_types),
                )
                for row in rows
            ]
        )

    # Events

    async def RecordEvent(
        self, request: ledger_pb2.RecordEventRequest, context: Context
    ) -> ledger_pb2.RecordEventResponse:
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
            fields, _ = webhook_request_to_row(draft.webhook)
            new_jobs.append(
                job_store.NewJob(
                    tenant_id=tenant_id,
                    channel="webhook",
                    priority=priority,
                    request=fields,
                    body=request.payload,
                    target_id=parse_id(request.target_ids[i]),
                )
            )
        rejection: tuple[int, str] | None = None
        async with self.engine.connect() as conn:
            async with conn.begin() as transaction:
                claimed, earlier = await store.claim_event(conn, tenant_id, request.event_id, request.event_type)
                if claimed is None:
                    await transaction.rollback()
                    if earlier is None:
                        await abort_unavailable(context, "the event is being replaced; retry")
                    return ledger_pb2.RecordEventResponse(
                        replayed=True,
                        deliveries=[common_pb2.EventDelivery(**d) for d in earlier.deliveries],
                    )
                verdicts = await admit(conn, new_jobs, self.platform) if new_jobs else []
                refused = [v for v in verdicts if v.job is None]
                if refused:
                    await transaction.rollback()
                    kind = ledger_pb2.REJECTION_QUOTA_EXCEEDED
                    if refused[0].rejection_kind == "sender_domain":
                        kind = ledger_pb2.REJECTION_SENDER_DOMAIN_UNVERIFIED
                    rejection = (kind, refused[0].rejection or "monthly quota reached")
                else:
                    rows = await job_store.create_jobs(conn, new_jobs)
                    deliveries = [
                        {"job_id": str(job.id), "target_id": target_id}
                        for job, target_id in zip(new_jobs, request.target_ids, strict=True)
                    ]
                    await store.set_event_deliveries(conn, claimed, deliveries)
        if rejection is not None:
            return ledger_pb2.RecordEventResponse(rejection=rejection[0], detail=rejection[1])  # type: ignore[arg-type]
        by_id = {row.id: row for row in rows}
        jobs = [job_to_proto(by_id[job.id]) for job in new_jobs]
        for job in jobs:
            job.webhook.body = b""  # one copy of a large payload is enough: the router has it
        return ledger_pb2.RecordEventResponse(deliveries=[common_pb2.EventDelivery(**d) for d in deliveries], jobs=jobs)

    # Helpers

    async def _get(self, tenant_id: uuid.UUID, value: str, table: Any) -> Row[Any] | None:
        row_id = parse_id(value)
        if row_id is None:
            return None
        async with self.engine.connect() as conn:
            return await store.get(conn, table, tenant_id, row_id)

    async def _update(self, tenant_id: uuid.UUID, value: str, table: Any, values: dict[str, Any]) -> Row[Any] | None:
        row_id = parse_id(value)
        if row_id is None:
            return None
        async with self.engine.begin() as conn:
            return await store.update_row(conn, table, tenant_id, row_id, values)

    async def _delete(self, tenant_id: uuid.UUID, value: str, table: Any) -> bool:
        row_id = parse_id(value)
        if row_id is None:
            return False
        async with self.engine.begin() as conn:
            return await store.delete_row(conn, table, tenant_id, row_id)
