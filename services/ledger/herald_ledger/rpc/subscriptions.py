"""Webhook subscriptions: targets, filters and subscriptions (events: rpc/events.py).

Every change to a tenant's targets, filters or subscriptions is announced after the commit
on `<prefix>.control.subscriptions` ({"tenant_id"}), so routers reload that tenant's fan-out
cache; events never read subscriptions from the database per event (the router matches them
in memory and hands RecordEvent the drafts)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.crypto import new_webhook_secret, webhook_secret_problem
from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.secrets import KeyRing
from herald.v1 import common_pb2, ledger_subscriptions_pb2
from herald.webhooks.sealed_headers import open_headers, seal_headers
from herald_ledger.convert import filter_to_proto, subscription_to_proto, target_to_proto
from herald_ledger.db.models import event_filters, subscriptions, webhook_targets
from herald_ledger.inflight import Committing
from herald_ledger.notifications import SUBSCRIPTIONS, Notifier
from herald_ledger.operational import Announcer
from herald_ledger.outbox import Outbox
from herald_ledger.rpc.common import Context, Rpcs, id_page, require_id
from herald_ledger.store import rows, target_health, target_keys
from herald_ledger.store import subscriptions as store
from herald_ledger.store.platform_email import PlatformMail
from herald_ledger.store.rows import Table

MAX_EVENT_TYPES = 100
MAX_TEXT = 255


def _event_type_problems(types: list[str]) -> list[tuple[str, str]]:
    if not types or len(types) > MAX_EVENT_TYPES:
        return [("event_types", f"1-{MAX_EVENT_TYPES} event types")]
    return [(f"event_types[{i}]", "1-255 characters") for i, t in enumerate(types) if not 0 < len(t) <= MAX_TEXT]


# A kind's checked values, from the create request's message or the update request:
# (rpcs, context, message or request, tenant_id) -> the columns to write.
Values = Callable[["SubscriptionRpcs", Context, Any, uuid.UUID], Awaitable[dict[str, Any]]]
# (rpcs, context, create request, values) -> the row written.
Insert = Callable[["SubscriptionRpcs", Context, Any, dict[str, Any]], Awaitable[Row[Any]]]
# (rpcs, tenant_id, protos) -> None: fills in read-only fields of the protos read back.
Decorate = Callable[["SubscriptionRpcs", uuid.UUID, list[Any]], Awaitable[None]]
# (conn, tenant_id, row_id, table, values) -> the row changed, or None when there is none.
Change = Callable[[AsyncConnection, uuid.UUID, uuid.UUID, Table, dict[str, Any]], Awaitable[Row[Any] | None]]


async def _target_created(
    rpcs: SubscriptionRpcs, context: Context, target: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    if not target.url.startswith(("http://", "https://")):
        await abort_invalid(context, [("target.url", "must be an http or https URL")])
    limit = target.rate_limit_per_min if target.HasField("rate_limit_per_min") else None
    bound = target.max_in_flight if target.HasField("max_in_flight") else None
    if bound is not None and bound < 0:
        await abort_invalid(context, [("target.max_in_flight", "must be positive")])
    return {
        "url": target.url,
        "description": target.description,
        **_sealed_headers(rpcs.ring, tenant_id, dict(target.headers)),
        "rate_limit_per_min": limit or None,
        "max_in_flight": bound or None,
        "enabled": target.enabled,
        "disabled_reason": None if target.enabled else (target.disabled_reason or None),
    }


def _sealed_headers(ring: KeyRing | None, tenant_id: uuid.UUID, headers: dict[str, str]) -> dict[str, Any]:
    """A target's header columns: the values masked beside their envelope (in clear only
    without master keys)."""
    if ring is None or not headers:
        return {"headers": headers, "sealed_headers": None}
    shown, envelope = seal_headers(ring, str(tenant_id), headers)
    return {"headers": shown, "sealed_headers": envelope}


async def _kept_values(
    rpcs: SubscriptionRpcs, tenant_id: uuid.UUID, target_id: str, headers: dict[str, str]
) -> dict[str, str]:
    """New headers where a value sent back exactly as it reads (masked) keeps the stored value:
    a client that reads a target and writes it back, as the console's edit form does, changes
    no credential it never saw."""
    ring, row_id = rpcs.ring, parse_id(target_id)
    if ring is None or row_id is None:
        return headers
    current = await rpcs.read(rows.get, tenant_id, row_id, webhook_targets)
    if current is None or current.sealed_headers is None:
        return headers
    shown = current.headers or {}
    kept = [name for name, value in headers.items() if shown.get(name) == value]
    if not kept:
        return headers
    stored = open_headers(ring, str(tenant_id), current.sealed_headers)
    return {name: stored[name] if name in kept and name in stored else value for name, value in headers.items()}


async def _target_inserted(rpcs: SubscriptionRpcs, context: Context, request: Any, values: dict[str, Any]) -> Row[Any]:
    """The target with its own signing key, the one the request brings or a new one (none
    without master keys: its deliveries go out unsigned, as every webhook does then)."""
    if request.signing_key:
        why = webhook_secret_problem(request.signing_key)
        if why is not None:
            await abort_invalid(context, [("signing_key", why)])
        if rpcs.ring is None:
            await abort_failed_precondition(context, "master keys are not configured (HERALD_MASTER_KEYS)")
    make_key = None
    if rpcs.ring is not None:
        make_key = target_keys.sealer(rpcs.ring, target_keys.HMAC, request.signing_key or new_webhook_secret())
    return await rpcs.write(target_keys.create_target, values, make_key)


async def _target_changed(
    rpcs: SubscriptionRpcs, context: Context, request: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if request.HasField("url"):
        if not request.url.startswith(("http://", "https://")):
            await abort_invalid(context, [("url", "must be an http or https URL")])
        values["url"] = request.url
    if request.HasField("description"):
        values["description"] = request.description
    if request.replace_headers:
        headers = await _kept_values(rpcs, tenant_id, request.target_id, dict(request.headers))
        values |= _sealed_headers(rpcs.ring, tenant_id, headers)
    if request.HasField("rate_limit_per_min"):
        values["rate_limit_per_min"] = request.rate_limit_per_min or None
    if request.HasField("max_in_flight"):
        if request.max_in_flight < 0:
            await abort_invalid(context, [("max_in_flight", "must be positive")])
        values["max_in_flight"] = request.max_in_flight or None
    if request.HasField("enabled"):
        values["enabled"] = request.enabled
        if request.enabled:
            # A target enabled again starts with a clean record: its old failing streak
            # must not disable it again at its first failure.
            values["disabled_reason"] = None
            values["failing_since"] = None
            values["failing_level"] = 0
    if request.HasField("disabled_reason") and not (request.HasField("enabled") and request.enabled):
        values["disabled_reason"] = request.disabled_reason or None
    return values


async def _target_change(
    conn: AsyncConnection, tenant_id: uuid.UUID, row_id: uuid.UUID, table: Table, values: dict[str, Any]
) -> Row[Any] | None:
    """Enabling or disabling a target tells the tenant (herald.target.enabled / .disabled)."""
    return await target_health.update_target(conn, tenant_id, row_id, values)


async def _filter_created(
    rpcs: SubscriptionRpcs, context: Context, event_filter: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    problems = _event_type_problems(list(event_filter.event_types))
    if problems:
        await abort_invalid(context, problems)
    return {"description": event_filter.description, "event_types": list(event_filter.event_types)}


async def _filter_changed(
    rpcs: SubscriptionRpcs, context: Context, request: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if request.HasField("description"):
        values["description"] = request.description
    if request.replace_event_types:
        problems = _event_type_problems(list(request.event_types))
        if problems:
            await abort_invalid(context, problems)
        values["event_types"] = list(request.event_types)
    return values


async def _subscription_created(
    rpcs: SubscriptionRpcs, context: Context, subscription: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    return {
        "target_id": await rpcs.owned(context, tenant_id, subscription.target_id, TARGET_ROWS),
        "filter_id": await rpcs.owned(context, tenant_id, subscription.filter_id, FILTER_ROWS),
        "active": subscription.active,
    }


async def _subscription_changed(
    rpcs: SubscriptionRpcs, context: Context, request: Any, tenant_id: uuid.UUID
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if request.HasField("target_id"):
        values["target_id"] = await rpcs.owned(context, tenant_id, request.target_id, TARGET_ROWS)
    if request.HasField("filter_id"):
        values["filter_id"] = await rpcs.owned(context, tenant_id, request.filter_id, FILTER_ROWS)
    if request.HasField("active"):
        values["active"] = request.active
    return values


@dataclass(frozen=True)
class Kind:
    """One kind of a tenant's subscription rows as ledger_subscriptions.proto names it
    (`CreateWebhookTargetRequest(target)`, `ListWebhookTargetsResponse(targets, next_cursor)`,
    `target_id`), so its five RPCs are written once; each kind says only how it checks the
    values of a new row (`created`) and of a change (`changed`)."""

    table: Table
    rpc: str
    what: str
    plural: str
    to_proto: Callable[[Row[Any]], Message]
    created: Values
    changed: Values
    # What a write answers NOT_FOUND for when it breaks a reference (None: it cannot).
    references: str | None = None
    # Writes a new row from the create request and its checked values (None: the plain insert).
    insert: Insert | None = None
    # Adds what the rows alone do not say to the protos read back (None: nothing).
    decorate: Decorate | None = None
    # Writes a change that may raise an operational event (None: the plain update).
    change: Change | None = None

    def response(self, verb: str) -> type[Message]:
        plural = "s" if verb == "List" else ""
        made: type[Message] = getattr(ledger_subscriptions_pb2, f"{verb}{self.rpc}{plural}Response")
        return made

    @asynccontextmanager
    async def referencing(self, context: Context) -> AsyncIterator[None]:
        """A write whose references were deleted meanwhile answers NOT_FOUND `references`."""
        try:
            yield
        except IntegrityError:
            if self.references is None:
                raise
            await abort_not_found(context, self.references)


async def _breakers(rpcs: SubscriptionRpcs, tenant_id: uuid.UUID, targets: list[common_pb2.WebhookTarget]) -> None:
    held = await rpcs.read(target_health.open_breakers, tenant_id, [uuid.UUID(t.id) for t in targets])
    for target in targets:
        target.breaker = "open" if uuid.UUID(target.id) in held else "closed"


TARGET_ROWS = Kind(
    webhook_targets,
    "WebhookTarget",
    "target",
    "targets",
    target_to_proto,
    _target_created,
    _target_changed,
    insert=_target_inserted,
    decorate=_breakers,
    change=_target_change,
)
FILTER_ROWS = Kind(event_filters, "EventFilter", "filter", "filters", filter_to_proto, _filter_created, _filter_changed)
SUBSCRIPTION_ROWS = Kind(
    subscriptions,
    "Subscription",
    "subscription",
    "subscriptions",
    subscription_to_proto,
    _subscription_created,
    _subscription_changed,
    references="target or filter",
)


def kind_rpcs(kind: Kind) -> dict[str, Callable[..., Any]]:
    """The five RPCs of `kind` by name (`CreateWebhookTarget`, ..., `ListWebhookTargets`); every
    change is announced to the routers after its commit."""

    async def create(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        item = getattr(request, kind.what)
        tenant_id = await require_id(context, item.tenant_id, f"{kind.what}.tenant_id")
        values = {"tenant_id": tenant_id, **await kind.created(self, context, item, tenant_id)}
        async with kind.referencing(context):
            if kind.insert is not None:
                row = await kind.insert(self, context, request, values)
            else:
                row = await self.write(store.create, kind.table, values)
        await self._changed(tenant_id)
        return kind.response("Create")(**{kind.what: kind.to_proto(row)})

    async def shown(
        self: SubscriptionRpcs, tenant_id: uuid.UUID, found: list[Row[Any]], decorated: bool = True
    ) -> list[Message]:
        protos = [kind.to_proto(r) for r in found]
        if kind.decorate is not None and decorated:
            await kind.decorate(self, tenant_id, protos)
        return protos

    async def list_(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        size, after = await id_page(context, request.page_size, request.cursor)
        found, next_cursor = await self.read(store.list_page, kind.table, tenant_id, size, after)
        return kind.response("List")(**{kind.plural: await shown(self, tenant_id, found), "next_cursor": next_cursor})

    async def get(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self.one(
            context, kind.what, tenant_id, getattr(request, f"{kind.what}_id"), "read", rows.get, kind.table
        )
        (item,) = await shown(self, tenant_id, [row], getattr(request, "with_breaker", False))
        return kind.response("Get")(**{kind.what: item})

    async def update(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        values = await kind.changed(self, context, request, tenant_id)
        row_id = getattr(request, f"{kind.what}_id")
        change = kind.change or rows.update_row
        async with kind.referencing(context):
            row = await self.one(context, kind.what, tenant_id, row_id, "write", change, kind.table, values)
        await self._changed(tenant_id)
        if kind.change is not None:
            self.announcer.kick()  # an operational event may wait: publish it now
        (item,) = await shown(self, tenant_id, [row])
        return kind.response("Update")(**{kind.what: item})

    async def delete(self: SubscriptionRpcs, request: Any, context: Context) -> Message:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row_id = getattr(request, f"{kind.what}_id")
        await self.one(context, kind.what, tenant_id, row_id, "write", rows.delete_row, kind.table)
        await self._changed(tenant_id)
        return kind.response("Delete")()

    methods = {"Create": create, "Get": get, "Update": update, "Delete": delete}
    named = {f"{verb}{kind.rpc}": method for verb, method in methods.items()}
    return {**named, f"List{kind.rpc}s": list_}


_TARGET_RPCS, _FILTER_RPCS = kind_rpcs(TARGET_ROWS), kind_rpcs(FILTER_ROWS)
_SUBSCRIPTION_RPCS = kind_rpcs(SUBSCRIPTION_ROWS)


class SubscriptionRpcs(Rpcs):
    """The CRUD of targets, filters and subscriptions: `kind_rpcs` of each kind, named one by one."""

    notifier: Notifier
    outbox: Outbox
    announcer: Announcer
    committing: Committing
    platform: PlatformMail | None
    ring: KeyRing | None

    CreateWebhookTarget = _TARGET_RPCS["CreateWebhookTarget"]
    GetWebhookTarget = _TARGET_RPCS["GetWebhookTarget"]
    ListWebhookTargets = _TARGET_RPCS["ListWebhookTargets"]
    UpdateWebhookTarget = _TARGET_RPCS["UpdateWebhookTarget"]
    DeleteWebhookTarget = _TARGET_RPCS["DeleteWebhookTarget"]
    CreateEventFilter = _FILTER_RPCS["CreateEventFilter"]
    GetEventFilter = _FILTER_RPCS["GetEventFilter"]
    ListEventFilters = _FILTER_RPCS["ListEventFilters"]
    UpdateEventFilter = _FILTER_RPCS["UpdateEventFilter"]
    DeleteEventFilter = _FILTER_RPCS["DeleteEventFilter"]
    CreateSubscription = _SUBSCRIPTION_RPCS["CreateSubscription"]
    GetSubscription = _SUBSCRIPTION_RPCS["GetSubscription"]
    ListSubscriptions = _SUBSCRIPTION_RPCS["ListSubscriptions"]
    UpdateSubscription = _SUBSCRIPTION_RPCS["UpdateSubscription"]
    DeleteSubscription = _SUBSCRIPTION_RPCS["DeleteSubscription"]

    async def _changed(self, tenant_id: uuid.UUID) -> None:
        await self.notifier.publish(SUBSCRIPTIONS, tenant_id=str(tenant_id))

    async def owned(self, context: Context, tenant_id: uuid.UUID, value: str, kind: Kind) -> uuid.UUID:
        """The id of one of the tenant's rows, or NOT_FOUND (another tenant's id reads as missing)."""
        row = await self.one(context, kind.what, tenant_id, value, "read", rows.get, kind.table)
        row_id: uuid.UUID = row.id
        return row_id
