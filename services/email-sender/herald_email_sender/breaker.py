"""Per-tenant, per-provider circuit breakers, so failover does not pay a timeout on every
message while one of a tenant's providers is down: the shared mechanism (`herald.breaker`),
keyed by (tenant id, provider config id), with what a provider's answer means.

A transient failure counts toward opening; a permanent failure counts as an answer, not an
outage: the provider is up (it refused this message or these credentials), so it resets the
streak and closes a half-open breaker. A 429 is transient and counts toward opening: skipping
a provider that rate-limits the tenant for a while is what its Retry-After asks for anyway.
A skip made no call and says nothing.

Metrics: `herald_provider_circuit_state{provider}` is the most open state among this process's
breakers for that provider kind, the reading the HeraldProviderCircuitOpen alert expects ("some
tenant's sendgrid is being skipped"); `herald_provider_circuit_transitions_total{provider,to}`.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import REGISTRY, CollectorRegistry

from herald import breaker
from herald.breaker import LABELS, BreakerPolicy, State
from herald_email_sender.outcome import Outcome

__all__ = ["DEFAULT_METRICS", "LABELS", "BreakerBoard", "BreakerPolicy", "CircuitMetrics", "State"]


class CircuitMetrics(breaker.CircuitMetrics):
    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        super().__init__(
            "herald_provider_circuit_state",
            "herald_provider_circuit_transitions_total",
            "a provider kind (per tenant)",
            "provider",
            registry,
        )


DEFAULT_METRICS = CircuitMetrics()


class BreakerBoard(breaker.BreakerBoard[Outcome]):
    def __init__(
        self,
        policy: BreakerPolicy | None = None,
        clock: Callable[[], float] | None = None,
        metrics: CircuitMetrics | None = None,
    ) -> None:
        if clock is None:
            super().__init__(metrics or DEFAULT_METRICS, policy)
        else:
            super().__init__(metrics or DEFAULT_METRICS, policy, clock)

    def judge(self, outcome: Outcome) -> bool | None:
        if outcome is Outcome.SKIPPED:
            return None
        return outcome is Outcome.TRANSIENT
