"""Failing streaks of subscription targets, and disabling the ones that fail for too long.

After each attempt at a delivery fanned out to a target, the worker reports whether it
succeeded; reports are coalesced into one `NoteTargetOutcomes` call. The ledger keeps the
streak (the first failure since the last success) and disables a target whose streak is
older than HERALD_WEBHOOK_TARGET_DISABLE_AFTER_S, with a reason. For each target disabled,
the sender logs a warning, counts it and raises an operational event through the operator
alert destinations (`Alerter.announce`, type `herald.target_disabled`): the same channel as
dead-letter alerts, because both ask an operator to look at a receiver. The tenant is told
by the ledger itself (`herald.target.failing`, `herald.target.disabled`, through its own
subscriptions), in the transaction that records the streak: see `herald_ledger.store.operational`.

A report that cannot be delivered is logged and dropped: the next attempt reports again, so
a lost report at most delays the disabling by one delivery.
"""

from __future__ import annotations

import logging
from datetime import datetime

from prometheus_client import Counter

from herald import dead_letters
from herald.batching import Batcher
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.v1 import common_pb2, ledger_subscriptions_pb2

log = logging.getLogger("herald.webhook_sender.target_health")

TARGETS_DISABLED = Counter(
    "herald_webhook_targets_disabled_total", "Webhook targets disabled automatically after failing continuously."
)


class TargetHealth:
    def __init__(self, ledger: Ledger, alerter: dead_letters.Alerter, disable_after_s: float) -> None:
        self.ledger = ledger
        self.alerter = alerter
        self.disable_after_s = disable_after_s
        self.reports: Batcher[ledger_subscriptions_pb2.TargetOutcome, None] = Batcher(self._note, max_items=200)

    async def report(self, tenant_id: str, target_id: str, succeeded: bool, at: datetime) -> None:
        outcome = ledger_subscriptions_pb2.TargetOutcome(tenant_id=tenant_id, target_id=target_id, succeeded=succeeded)
        outcome.at.FromDatetime(at)
        try:
            await self.reports.submit(outcome)
        except Exception as error:
            log.warning("target outcome not recorded", extra={"target_id": target_id, "error": repr(error)})

    async def _note(self, outcomes: list[ledger_subscriptions_pb2.TargetOutcome]) -> list[None]:
        noted = await self.ledger.subscriptions.NoteTargetOutcomes(
            ledger_subscriptions_pb2.NoteTargetOutcomesRequest(outcomes=outcomes, disable_after_s=self.disable_after_s),
            timeout=CALL_DEADLINE_S,
        )
        for target in noted.disabled:
            self._announce(target)
        return [None] * len(outcomes)

    def _announce(self, target: common_pb2.WebhookTarget) -> None:
        TARGETS_DISABLED.inc()
        log.warning(
            "webhook target disabled after failing continuously",
            extra={"tenant_id": target.tenant_id, "target_id": target.id, "reason": target.disabled_reason},
        )
        self.alerter.announce(
            "target_disabled",
            f"Webhook target {target.id} (tenant {target.tenant_id}) was disabled: {target.disabled_reason}",
            {
                "tenant_id": target.tenant_id,
                "target_id": target.id,
                "reason": target.disabled_reason,
                "failing_since": target.failing_since.ToJsonString() if target.HasField("failing_since") else None,
                "hint": "Fix the receiver, PATCH the target enabled=true, then POST .../recover {since}.",
            },
        )
