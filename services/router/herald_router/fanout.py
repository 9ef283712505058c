"""Event fan-out: which of a tenant's targets an event type reaches, and which it would reach
but skips (a paused subscription, a disabled target: recorded SKIPPED with the reason, so a
recovery can run them later).

Each router keeps all the tenant's subscriptions (with their targets) in memory,
loaded from the ledger (`ListActiveSubscriptions`) on first use. The ledger announces every
change to a tenant's targets, filters or subscriptions on `<prefix>.control.subscriptions`
after the commit; the router then drops that tenant's entry, so the next event reloads it
(a PATCH takes effect for the next event, milliseconds later). No database read happens
per event otherwise. If a notification is lost (the bus was down), an entry still expires
after `CACHE_TTL_S`.

Filter semantics: an entry is an exact event type (`orders.created.v1`), a prefix wildcard
(`orders.*`: any type that starts with `orders.` and has at least one more token, so
`orders.created` and `orders.created.v1` but not `orders` nor `ordersx.created`), or `*`
(every type). Matching is case-sensitive."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import orjson
from nats.aio.msg import Msg

from herald.grpcio.ledger import Ledger
from herald.v1 import common_pb2, ledger_subscriptions_pb2

log = logging.getLogger("herald.router.fanout")

CACHE_TTL_S = 30.0
# Herald's own event types (operational events): only the ledger writes them.
HERALD_PREFIX = "herald."


def matches(pattern: str, event_type: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        prefix = pattern[:-1]
        return event_type.startswith(prefix) and len(event_type) > len(prefix)
    return pattern == event_type


def about_target(event_type: str, payload: bytes) -> str:
    """The target one of Herald's own events is about (its payload's `target_id`), which never
    receives it: a dead receiver is not told it is dead, nor one target of another's failures
    through itself. "" for a tenant's event, or one about no target."""
    if not event_type.startswith(HERALD_PREFIX):
        return ""
    try:
        value = orjson.loads(payload).get("target_id")
    except (orjson.JSONDecodeError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Match:
    target: common_pb2.WebhookTarget
    # Empty: deliver. Otherwise why the delivery is recorded SKIPPED.
    skipped: str = ""


def skip_reason(subscription: ledger_subscriptions_pb2.ActiveSubscription) -> str:
    target = subscription.target
    if not target.enabled:
        return "the target is disabled" + (f": {target.disabled_reason}" if target.disabled_reason else "")
    return "" if subscription.active else f"the subscription {subscription.subscription_id} is paused"


def matching_targets(
    subscriptions: list[ledger_subscriptions_pb2.ActiveSubscription],
    event_type: str,
    only_target: str = "",
    excluded_target: str = "",
) -> list[Match]:
    """One match per target any subscription matching the event names, however many do: a
    delivery when one of them is active and the target enabled, else a skipped one (the
    first matching subscription's reason). `only_target`: that target's only;
    `excluded_target`: never that one (the target an operational event is about)."""
    found: dict[str, Match] = {}
    for subscription in subscriptions:
        target = subscription.target
        if (only_target and target.id != only_target) or target.id == excluded_target:
            continue
        earlier = found.get(target.id)
        if earlier is not None and not earlier.skipped:
            continue
        if any(matches(p, event_type) for p in subscription.event_types):
            why = skip_reason(subscription)
            if earlier is None or not why:
                found[target.id] = Match(target, why)
    return list(found.values())


@dataclass
class _Entry:
    subscriptions: list[ledger_subscriptions_pb2.ActiveSubscription]
    loaded_at: float


@dataclass
class SubscriptionCache:
    ledger: Ledger
    ttl_s: float = CACHE_TTL_S
    _entries: dict[str, _Entry] = field(default_factory=dict)
    # Bumped by every change notification: a load that started before a change is not kept.
    _generations: dict[str, int] = field(default_factory=dict)
    _loading: dict[tuple[str, int], asyncio.Task[list[ledger_subscriptions_pb2.ActiveSubscription]]] = field(
        default_factory=dict
    )

    def invalidate(self, tenant_id: str) -> None:
        self._generations[tenant_id] = self._generations.get(tenant_id, 0) + 1
        self._entries.pop(tenant_id, None)

    async def on_change(self, message: Msg) -> None:
        try:
            tenant_id = orjson.loads(message.data).get("tenant_id")
        except orjson.JSONDecodeError:
            return
        if isinstance(tenant_id, str):
            self.invalidate(tenant_id)

    async def get(self, tenant_id: str) -> list[ledger_subscriptions_pb2.ActiveSubscription]:
        entry = self._entries.get(tenant_id)
        if entry is not None and time.monotonic() - entry.loaded_at < self.ttl_s:
            return entry.subscriptions
        generation = self._generations.get(tenant_id, 0)
        key = (tenant_id, generation)
        task = self._loading.get(key)
        if task is None:
            # Concurrent events of one tenant share one load of the same generation.
            task = asyncio.ensure_future(self._load(tenant_id, generation))
            self._loading[key] = task
            task.add_done_callback(lambda _: self._loading.pop(key, None))
        return await asyncio.shield(task)

    async def _load(self, tenant_id: str, generation: int) -> list[ledger_subscriptions_pb2.ActiveSubscription]:
        loaded_at = time.monotonic()
        response = await self.ledger.subscriptions.ListActiveSubscriptions(
            ledger_subscriptions_pb2.ListActiveSubscriptionsRequest(tenant_id=tenant_id)
        )
        subscriptions = list(response.subscriptions)
        if self._generations.get(tenant_id, 0) == generation:
            self._entries[tenant_id] = _Entry(subscriptions, loaded_at)
        return subscriptions
