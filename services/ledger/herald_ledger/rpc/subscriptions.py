"""Webhook subscriptions: targets, filters and subscriptions (events: rpc/events.py).

Every change to a tenant's targets, filters or subscriptions is announced after the commit
on `<prefix>.control.subscriptions` ({"tenant_id"}), so routers reload that tenant's fan-out
cache; events never read subscriptions from the database per event (the router matches them
in memory and hands RecordEvent the drafts)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from sqlalchemy import Table
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.v1 import common_pb2, ledger_subscriptions_pb2
from herald_ledger.convert import timestamp
from herald_ledger.db.models import event_filters, subscriptions, webhook_targets
from herald_ledger.inflight import Committing
from herald_ledger.notifications import SUBSCRIPTIONS, Notifier
from herald_ledger.outbox import Outbox
from herald_ledger.rpc.common import Context, Rpcs, id_page, require_id, row_rpc
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


@dataclass(frozen=True)
class Kind:
    """One kind of a tenant's subscription rows as ledger_subscriptions.proto names it
    (`GetWebhookTarget`, `ListWebhookTargetsResponse(targets, next_cursor)`, `target_id`), so its
    get, list and delete RPCs are written once; create and update check their fields themselves."""

    table: Table
    rpc: str
    what: str
    plural: str
    to_proto: Callable[[Row[Any]], Message]

    def response(self, verb: str) -> type[Message]:
        plural = "s" if verb == "List" else ""
        made: type[Message] = getattr(ledger_subscriptions_pb2, f"{verb}{self.rpc}{plural}Response")
        return made


TARGET_ROWS = Kind(webhook_targets, "WebhookTarget", "target", "targets", target_to_proto)
FILTER_ROWS = Kind(event_filters, "EventFilter", "filter", "filters", filter_to_proto)
SUBSCRIPTION_ROWS = Kind(subscriptions, "Subscription", "subscription", "subscriptions", subscription_to_proto)


def get_rpc(kind: Kind) -> Any:
    """`Get<kind>`: one of the tenant's rows, or NOT_FOUND (another tenant's id reads as missing)."""
    return row_rpc(kind.what, "read", rows.get, kind.response("Get"), kind.what, kind.to_proto, (kind.table,))


def list_rpc(kind: Kind) -> Any:
    """`List<kind>s`: a page of the tenant's rows in id order and the next cursor."""

    async def method(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await id_page(context, request.page_size, request.cursor)
        found, next_cursor = await self.read(store.list_page, kind.table, tenant_id, size, after)
        return kind.response("List")(**{kind.plural: [kind.to_proto(r) for r in found], "next_cursor": next_cursor})

    return method


def delete_rpc(kind: Kind) -> Any:
    """`Delete<kind>`: removes one of the tenant's rows (NOT_FOUND otherwise), announced to the routers."""

    async def method(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row_id = getattr(request, f"{kind.what}_id")
        await self.one(context, kind.what, tenant_id, row_id, "write", rows.delete_row, kind.table)
        await self._changed(tenant_id)
        return kind.response("Delete")()

    return method


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

    async def _update(
        self, context: Context, kind: Kind, tenant_id: uuid.UUID, value: str, values: dict[str, Any]
    ) -> Row[Any]:
        """The tenant's row of `kind` whose id is `value` after `values` are set (NOT_FOUND
        otherwise), announced to the routers."""
        row: Row[Any] = await self.one(
            context, kind.what, tenant_id, value, "write", rows.update_row, kind.table, values
        )
        await self._changed(tenant_id)
        return row

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

    GetWebhookTarget = get_rpc(TARGET_ROWS)
    ListWebhookTargets = list_rpc(TARGET_ROWS)

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
        row = await self._update(context, TARGET_ROWS, tenant_id, request.target_id, values)
        return ledger_subscriptions_pb2.UpdateWebhookTargetResponse(target=target_to_proto(row))

    DeleteWebhookTarget = delete_rpc(TARGET_ROWS)

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

    GetEventFilter = get_rpc(FILTER_ROWS)
    ListEventFilters = list_rpc(FILTER_ROWS)

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
        row = await self._update(context, FILTER_ROWS, tenant_id, request.filter_id, values)
        return ledger_subscriptions_pb2.UpdateEventFilterResponse(filter=filter_to_proto(row))

    DeleteEventFilter = delete_rpc(FILTER_ROWS)

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

    GetSubscription = get_rpc(SUBSCRIPTION_ROWS)
    ListSubscriptions = list_rpc(SUBSCRIPTION_ROWS)

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
            row = await self._update(context, SUBSCRIPTION_ROWS, tenant_id, request.subscription_id, values)
        except IntegrityError:
            await abort_not_found(context, "target or filter")
        return ledger_subscriptions_pb2.UpdateSubscriptionResponse(subscription=subscription_to_proto(row))

    DeleteSubscription = delete_rpc(SUBSCRIPTION_ROWS)
