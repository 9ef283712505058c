"""What the sender needs to know about a tenant beyond the work message: its retry schedule
(the operator's default with the tenant's override) and its targets' rate limits and bounds of
calls in flight.

Both are read from the ledger on first use and kept for `ttl_s`; the ledger's change
notifications (`control.subscriptions` for targets, `control.webhook_settings` for the
schedule) evict a tenant at once, so the TTL only bounds staleness when a notification is
lost. When the ledger cannot be asked, the operator's policy, "no limit" and the operator's
bound apply for now (a delivery is never held up by a read that failed); the next lookup asks
again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc

from herald.expiring import ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.v1 import ledger_subscriptions_pb2
from herald.webhooks.retry_policy import RetryPolicy

log = logging.getLogger("herald.webhook_sender.tenant_config")


@dataclass(frozen=True)
class TargetLimits:
    rate_limit_per_min: int = 0  # 0: none
    max_in_flight: int = 0  # 0: the operator's default


@dataclass
class TenantConfig:
    ledger: Ledger
    default_policy: RetryPolicy
    ttl_s: float

    def __post_init__(self) -> None:
        self._policies: ExpiringCache[str, RetryPolicy] = ExpiringCache(self.ttl_s)
        self._targets: ExpiringCache[tuple[str, str], TargetLimits] = ExpiringCache(self.ttl_s)

    def forget(self, tenant_id: str) -> None:
        self._policies.forget(tenant_id)
        self._targets.forget_where(lambda key, _limits: key[0] == tenant_id)

    async def policy(self, tenant_id: str) -> RetryPolicy:
        try:
            return await self._policies.load(tenant_id, lambda: self._fetch_policy(tenant_id))
        except Exception as error:
            log.warning("tenant webhook settings unavailable; operator's policy used", extra={"error": repr(error)})
            return self.default_policy

    async def _fetch_policy(self, tenant_id: str) -> RetryPolicy:
        found = await self.ledger.subscriptions.GetWebhookSettings(
            ledger_subscriptions_pb2.GetWebhookSettingsRequest(tenant_id=tenant_id), timeout=CALL_DEADLINE_S
        )
        settings = found.settings
        return self.default_policy.overridden(
            schedule_s=list(settings.retry_schedule_s) or None,
            retry_statuses=list(settings.retry_statuses) or None,
        )

    async def target(self, tenant_id: str, target_id: str) -> TargetLimits:
        """The target's limits; none for a target since deleted (its queued deliveries still run)."""
        try:
            return await self._targets.load((tenant_id, target_id), lambda: self._fetch_target(tenant_id, target_id))
        except grpc.aio.AioRpcError as error:
            log.warning("target settings unavailable; the defaults apply for now", extra={"error": repr(error)})
            return TargetLimits()

    async def _fetch_target(self, tenant_id: str, target_id: str) -> TargetLimits:
        try:
            found = (
                await self.ledger.subscriptions.GetWebhookTarget(
                    ledger_subscriptions_pb2.GetWebhookTargetRequest(tenant_id=tenant_id, target_id=target_id),
                    timeout=CALL_DEADLINE_S,
                )
            ).target
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise
            return TargetLimits()
        return TargetLimits(
            found.rate_limit_per_min if found.HasField("rate_limit_per_min") else 0,
            found.max_in_flight if found.HasField("max_in_flight") else 0,
        )
