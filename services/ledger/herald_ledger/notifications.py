"""Change notifications the ledger publishes after a commit (core NATS, not stored):
gateways drop revoked keys from their caches, senders drop stale signing secrets and
stale provider configs.
Best effort by design: each cache also expires on its own, so a lost notification
costs at most one TTL of staleness, never correctness of what is stored."""

from __future__ import annotations

import logging

import orjson
from nats.aio.client import Client

from herald.bus.connection import close
from herald.bus.subjects import Subjects

log = logging.getLogger("herald.ledger.notifications")

API_KEYS = "apikeys"
TENANTS = "tenants"
WEBHOOK_SECRETS = "webhook_secrets"
PROVIDERS = "providers"
# A tenant's webhook targets, filters or subscriptions changed: routers reload its fan-out cache.
SUBSCRIPTIONS = "subscriptions"
# A tenant's webhook delivery settings (retry schedule) changed: webhook-senders drop their copy.
WEBHOOK_SETTINGS = "webhook_settings"
# A tenant's inbound webhook verification material changed: verifiers drop their cached keys.
INBOUND = "inbound"
# Deliveries senders started and ended (binary, herald_ledger.inflight): ledger replicas' views.
DELIVERIES = "deliveries"


class Notifier:
    def __init__(self, nc: Client | None, subjects: Subjects) -> None:
        self.nc = nc
        self.subjects = subjects

    async def publish(self, topic: str, **fields: str) -> None:
        if self.nc is None:
            return
        try:
            await self.nc.publish(self.subjects.control(topic), orjson.dumps(fields))
        except Exception as error:
            log.warning(
                "change notification not sent; caches will expire on their own",
                extra={"topic": topic, "error": repr(error)},
            )

    async def publish_raw(self, topic: str, data: bytes) -> None:
        if self.nc is None or not self.nc.is_connected:
            return
        try:
            await self.nc.publish(self.subjects.control(topic), data)
        except Exception as error:
            log.info("announcement not sent", extra={"topic": topic, "error": repr(error)})

    async def close(self) -> None:
        if self.nc is not None:
            await close(self.nc)
