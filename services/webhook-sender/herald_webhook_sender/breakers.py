"""Per-target circuit breakers for webhooks: the shared mechanism (`herald.breaker`), keyed by
(tenant id, the call's lane target: a subscription target, or a direct webhook's origin).

What counts as an outage: a timeout, a connection that failed (DNS, connect, TLS, protocol,
network) and a 5xx answer. Any other answer (2xx, 4xx) is the receiver speaking, which closes
the breaker. A call refused by the target guard or an unusable URL says nothing about the
receiver and is not counted. While a breaker is open the target's deliveries are handed back
to the bus until its cool-down ends, without a call and without spending an attempt; then one
probe goes through, and its answer decides.

Metrics, one kind ("webhook") so the cardinality stays one series: the most open state among
this process's target breakers (`herald_webhook_circuit_state`), its transitions, and how many
targets' breakers are open or half-open now (`herald_webhook_targets_circuit_open`).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Gauge

from herald import breaker
from herald.breaker import BreakerPolicy, CircuitMetrics
from herald.config import Settings
from herald.webhooks.retry_policy import attempt_error_class
from herald_webhook_sender.client import CallResult

KIND = "webhook"
OUTAGES = frozenset({"timeout", "dns", "connect", "tls", "protocol", "network"})

METRICS = CircuitMetrics(
    "herald_webhook_circuit_state",
    "herald_webhook_circuit_transitions_total",
    "webhook targets (per tenant)",
    "channel",
    REGISTRY,
)
OPEN_TARGETS = Gauge(
    "herald_webhook_targets_circuit_open", "Webhook targets whose circuit breaker is open or half-open now."
)


class TargetBreakers(breaker.BreakerBoard[CallResult]):
    def __init__(self, settings: Settings) -> None:
        super().__init__(
            METRICS,
            BreakerPolicy(
                failures=settings.webhook_breaker_failures,
                window_s=settings.webhook_breaker_window_s,
                cool_down_s=settings.webhook_breaker_cool_down_s,
            ),
        )
        METRICS.seen(KIND)
        OPEN_TARGETS.set_function(lambda: len(self.not_closed()))

    def judge(self, outcome: CallResult) -> bool | None:
        if outcome.status_code is not None:
            return outcome.status_code >= 500
        return True if attempt_error_class(None, outcome.error) in OUTAGES else None
