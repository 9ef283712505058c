"""What the sender needs to know about a tenant beyond the work message: its retry schedule
(the operator's default with the tenant's override) and its targets' rate limits.

Both are read from the ledger on first use and kept for `ttl_s`; the ledger's change
notifications (`control.subscriptions` for targets, `control.webhook_settings` for the
schedule) evict a tenant at once, so the TTL only bounds staleness when a notification is
lost. When the ledger cannot be asked, the operator's policy and "no limit" apply for now
(a delivery is never held up by a read that failed); the next lookup asks again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import grpc

from herald.grpcio.ledger import Ledger
from herald.v1 import ledger_subscriptions_pb2
from herald.webhooks.retry_policy import RetryPolicy

log = logging.getLogger("herald.webhook_sender.tenant_config")


class TenantConfig:
    def __init__(
        self,
        ledger: Ledger,
        default_policy: RetryPolicy,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger = ledger
        self.default_policy = default_policy
        self.ttl_s = ttl_s
        self.clock = clock
        self._policies: dict[str, tuple[float, RetryPolicy]] = {}
        self._limits: dict[tuple[str, str], tuple[float, int]] = {}

    def forget(self, tenant_id: str) -> None:
        self._policies.pop(tenant_id, None)
        for key in [k for k in self._limits if k[0] == tenant_id]:
            del self._limits[key]

    async def policy(self, tenant_id: str) -> RetryPolicy:
        now = self.clock()
        cached = self._policies.get(tenant_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            found = await self.ledger.subscriptions.GetWebhookSettings(
                ledger_subscriptions_pb2.GetWebhookSettingsRequest(tenant_id=tenant_id)
            )
            settings = found.settings
            policy = self.default_policy.overridden(
                schedule_s=list(settings.retry_schedule_s) or None,
                retry_statuses=list(settings.retry_statuses) or None,
            )
        except Exception as error:
            log.warning("tenant webhook settings unavailable; operator's policy used", extra={"error": repr(error)})
            return self.default_policy
        self._policies[tenant_id] = (now + self.ttl_s, policy)
        return policy

    async def rate_limit(self, tenant_id: str, target_id: str) -> int:
        """The target's deliveries per minute; 0 for none (or a target since deleted)."""
        now = self.clock()
        key = (tenant_id, target_id)
        cached = self._limits.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            found = await self.ledger.subscriptions.GetWebhookTarget(
                ledger_subscriptions_pb2.GetWebhookTargetRequest(tenant_id=tenant_id, target_id=target_id)
            )
            limit = found.target.rate_limit_per_min if found.target.HasField("rate_limit_per_min") else 0
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                log.warning("target rate limit unavailable; not limited for now", extra={"error": repr(error)})
                return 0
            limit = 0  # the target was deleted: its queued deliveries still run, unpaced
        self._limits[key] = (now + self.ttl_s, limit)
        return limit
