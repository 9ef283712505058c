"""Webhook subscriptions: targets, filters and subscriptions (events: rpc/events.py).

Every change to a tenant's targets, filters or subscriptions is announced after the commit
on `<prefix>.control.subscriptions` ({"tenant_id"}), so routers reload that tenant's fan-out
cache; events never read subscriptions from the database per event (the router matches them
in memory and hands RecordEvent the drafts)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.v1 import common_pb2, ledger_subscriptions_pb2
from herald_ledger.convert import timestamp
from herald_ledger.db.models import event_filters, subscriptions, webhook_targets
from herald_ledger.inflight import Committing
from herald_ledger.notifications import SUBSCRIPTIONS, Notifier
from herald_ledger.outbox import Outbox
from herald_ledger.rpc.common import Context, Rpcs, id_page, require_id
from herald_ledger.store import rows
from herald_ledger.store import subscriptions as store
from herald_ledger.store.platform_email import PlatformMail

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


class SubscriptionRpcs(Rpcs):
    notifier: Notifier
    outbox: Outbox
    committing: Committing
    platform: PlatformMail | None

    async def _changed(self, tenant_id: uuid.UUID) -> None:
        await self.notifier.publish(SUBSCRIPTIONS, tenant_id=str(tenant_id))

    async def _owned(self, context: Context, tenant_id: uuid.UUID, value: str, table: Any, what: str) -> uuid.UUID:
        """The id of one of the tenant's rows, or NOT_FOUND (another tenant's id reads as missing)."""
        row = await self.one(context, what, tenant_id, value, "read", rows.get, table)
        row_id: uuid.UUID = row.id
        return row_id

    # Targets

    async def CreateWebhookTarget(
        self, request: ledger_subscriptions_pb2.CreateWebhookTargetRequest, context: Context
    ) -> ledger_subscriptions_pb2.CreateWebhookTargetResponse:
        target = request.target
        tenant_id = await require_id(context, target.tenant_id, "target.tenant_id")
        if not target.url.startswith(("http://", "https://")):
            await abort_invalid(context, [("target.url", "must be an http or https URL")])
        limit = target.rate_limit_per_min if target.HasField("rate_limit_per_min") else None
        row = await self.write(
            store.create,
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
        return ledger_subscriptions_pb2.CreateWebhookTargetResponse(target=target_to_proto(row))

    async def GetWebhookTarget(
        self, request: ledger_subscriptions_pb2.GetWebhookTargetRequest, context: Context
    ) -> ledger_subscriptions_pb2.GetWebhookTargetResponse:
        row = await self._get_one(context, request.tenant_id, request.target_id, webhook_targets, "target")
        return ledger_subscriptions_pb2.GetWebhookTargetResponse(target=target_to_proto(row))

    async def ListWebhookTargets(
        self, request: ledger_subscriptions_pb2.ListWebhookTargetsRequest, context: Context
    ) -> ledger_subscriptions_pb2.ListWebhookTargetsResponse:
        rows, next_cursor = await self._list(context, request, webhook_targets)
        return ledger_subscriptions_pb2.ListWebhookTargetsResponse(
            targets=[target_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateWebhookTarget(
        self, request: ledger_subscriptions_pb2.UpdateWebhookTargetRequest, context: Context
    ) -> ledger_subscriptions_pb2.UpdateWebhookTargetResponse:
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
        row = await self.one(
            context, "target", tenant_id, request.target_id, "write", rows.update_row, webhook_targets, values
        )
        await self._changed(tenant_id)
        return ledger_subscriptions_pb2.UpdateWebhookTargetResponse(target=target_to_proto(row))

    async def DeleteWebhookTarget(
        self, request: ledger_subscriptions_pb2.DeleteWebhookTargetRequest, context: Context
    ) -> ledger_subscriptions_pb2.DeleteWebhookTargetResponse:
        await self._delete_one(context, request.tenant_id, request.target_id, webhook_targets, "target")
        return ledger_subscriptions_pb2.DeleteWebhookTargetResponse()

    # Filters

    async def CreateEventFilter(
        self, request: ledger_subscriptions_pb2.CreateEventFilterRequest, context: Context
    ) -> ledger_subscriptions_pb2.CreateEventFilterResponse:
        event_filter = request.filter
        tenant_id = await require_id(context, event_filter.tenant_id, "filter.tenant_id")
        problems = _event_type_problems(list(event_filter.event_types))
        if problems:
            await abort_invalid(context, problems)
        row = await self.write(
            store.create,
            event_filters,
            {
                "tenant_id": tenant_id,
                "description": event_filter.description,
                "event_types": list(event_filter.event_types),
            },
        )
        await self._changed(tenant_id)
        return ledger_subscriptions_pb2.CreateEventFilterResponse(filter=filter_to_proto(row))

    async def GetEventFilter(
        self, request: ledger_subscriptions_pb2.GetEventFilterRequest, context: Context
    ) -> ledger_subscriptions_pb2.GetEventFilterResponse:
        row = await self._get_one(context, request.tenant_id, request.filter_id, event_filters, "filter")
        return ledger_subscriptions_pb2.GetEventFilterResponse(filter=filter_to_proto(row))

    async def ListEventFilters(
        self, request: ledger_subscriptions_pb2.ListEventFiltersRequest, context: Context
    ) -> ledger_subscriptions_pb2.ListEventFiltersResponse:
        rows, next_cursor = await self._list(context, request, event_filters)
        return ledger_subscriptions_pb2.ListEventFiltersResponse(
            filters=[filter_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateEventFilter(
        self, request: ledger_subscriptions_pb2.UpdateEventFilterRequest, context: Context
    ) -> ledger_subscriptions_pb2.UpdateEventFilterResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, Any] = {}
        if request.HasField("description"):
            values["description"] = request.description
        if request.replace_event_types:
            problems = _event_type_problems(list(request.event_types))
            if problems:
                await abort_invalid(context, problems)
            values["event_types"] = list(request.event_types)
        row = await self.one(
            context, "filter", tenant_id, request.filter_id, "write", rows.update_row, event_filters, values
        )
        await self._changed(tenant_id)
        return ledger_subscriptions_pb2.UpdateEventFilterResponse(filter=filter_to_proto(row))

    async def DeleteEventFilter(
        self, request: ledger_subscriptions_pb2.DeleteEventFilterRequest, context: Context
    ) -> ledger_subscriptions_pb2.DeleteEventFilterResponse:
        await self._delete_one(context, request.tenant_id, request.filter_id, event_filters, "filter")
        return ledger_subscriptions_pb2.DeleteEventFilterResponse()

    # Subscriptions

    async def CreateSubscription(
        self, request: ledger_subscriptions_pb2.CreateSubscriptionRequest, context: Context
    ) -> ledger_subscriptions_pb2.CreateSubscriptionResponse:
        subscription = request.subscription
        tenant_id = await require_id(context, subscription.tenant_id, "subscription.tenant_id")
        target_id = await self._owned(context, tenant_id, subscription.target_id, webhook_targets, "target")
        filter_id = await self._owned(context, tenant_id, subscription.filter_id, event_filters, "filter")
        try:
            values = {
                "tenant_id": tenant_id,
                "target_id": target_id,
                "filter_id": filter_id,
                "active": subscription.active,
            }
            row = await self.write(store.create, subscriptions, values)
        except IntegrityError:
            # The target or filter was deleted meanwhile.
            await abort_not_found(context, "target or filter")
        await self._changed(tenant_id)
        return ledger_subscriptions_pb2.CreateSubscriptionResponse(subscription=subscription_to_proto(row))

    async def GetSubscription(
        self, request: ledger_subscriptions_pb2.GetSubscriptionRequest, context: Context
    ) -> ledger_subscriptions_pb2.GetSubscriptionResponse:
        row = await self._get_one(context, request.tenant_id, request.subscription_id, subscriptions, "subscription")
        return ledger_subscriptions_pb2.GetSubscriptionResponse(subscription=subscription_to_proto(row))

    async def ListSubscriptions(
        self, request: ledger_subscriptions_pb2.ListSubscriptionsRequest, context: Context
    ) -> ledger_subscriptions_pb2.ListSubscriptionsResponse:
        rows, next_cursor = await self._list(context, request, subscriptions)
        return ledger_subscriptions_pb2.ListSubscriptionsResponse(
            subscriptions=[subscription_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateSubscription(
        self, request: ledger_subscriptions_pb2.UpdateSubscriptionRequest, context: Context
    ) -> ledger_subscriptions_pb2.UpdateSubscriptionResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values: dict[str, Any] = {}
        if request.HasField("target_id"):
            values["target_id"] = await self._owned(context, tenant_id, request.target_id, webhook_targets, "target")
        if request.HasField("filter_id"):
            values["filter_id"] = await self._owned(context, tenant_id, request.filter_id, event_filters, "filter")
        if request.HasField("active"):
            values["active"] = request.active
        try:
            row = await self.one(
                context,
                "subscription",
                tenant_id,
                request.subscription_id,
                "write",
                rows.update_row,
                subscriptions,
                values,
            )
        except IntegrityError:
            await abort_not_found(context, "target or filter")
        await self._changed(tenant_id)
        return ledger_subscriptions_pb2.UpdateSubscriptionResponse(subscription=subscription_to_proto(row))

    async def DeleteSubscription(
        self, request: ledger_subscriptions_pb2.DeleteSubscriptionRequest, context: Context
    ) -> ledger_subscriptions_pb2.DeleteSubscriptionResponse:
        await self._delete_one(context, request.tenant_id, request.subscription_id, subscriptions, "subscription")
        return ledger_subscriptions_pb2.DeleteSubscriptionResponse()

    # Helpers

    async def _get_one(self, context: Context, tenant: str, value: str, table: Any, what: str) -> Row[Any]:
        """One of the tenant's rows, or NOT_FOUND (another tenant's id reads as missing)."""
        tenant_id = await require_id(context, tenant, "tenant_id")
        return await self.one(context, what, tenant_id, value, "read", rows.get, table)

    async def _list(self, context: Context, request: Any, table: Any) -> tuple[list[Row[Any]], str]:
        """A page of the tenant's rows (`request` has tenant_id, page_size and cursor) and the next cursor."""
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await id_page(context, request.page_size, request.cursor)
        return await self.read(store.list_page, table, tenant_id, size, after)

    async def _delete_one(self, context: Context, tenant: str, value: str, table: Any, what: str) -> None:
        tenant_id = await require_id(context, tenant, "tenant_id")
        await self.one(context, what, tenant_id, value, "write", rows.delete_row, table)
        await self._changed(tenant_id)
