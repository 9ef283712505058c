"""Per-tenant, per-provider circuit breakers, so failover does not pay a timeout on every
message while one of a tenant's providers is down.

A breaker opens after `failures` consecutive transient failures that all fall within
`window_s`; while open the walk skips the provider without calling it. After `cool_down_s`
the breaker is half-open: the next call is let through as a probe (one at a time) and its
result decides: accepted closes the breaker, another transient failure opens it again.

A permanent failure counts as an answer, not an outage: the provider is up (it refused
this message or these credentials), so it resets the streak and closes a half-open breaker.
A 429 is transient and counts toward opening: skipping a provider that rate-limits the
tenant for a while is what its Retry-After asks for anyway.

Breakers live in process memory (one board per email-sender process): each replica learns
about an outage on its own, which costs each replica `failures` calls, and a restart
forgets. A breaker not consulted for `idle_expiry_s` is dropped, so memory follows the
tenants that are sending, not every tenant ever seen.

Metrics. Tenant ids are never a label, so breakers are aggregated per provider kind:
`herald_provider_circuit_state{provider}` is the most open state among this process's
breakers for that kind (0 closed, 1 half-open, 2 open), the reading the
HeraldProviderCircuitOpen alert expects ("some tenant's sendgrid is being skipped").
`herald_provider_circuit_transitions_total{provider,to}` counts state changes, so the
rate of openings shows how many breakers trip. The gauge is computed when scraped, which
is also when an open breaker whose cool-down has passed turns half-open: an idle tenant's
breaker does not keep reporting "open" forever.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge
from prometheus_client.metrics_core import Metric

from herald_email_sender.outcome import Outcome


class State(IntEnum):
    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2


LABELS = {State.CLOSED: "closed", State.HALF_OPEN: "half_open", State.OPEN: "open"}


@dataclass(frozen=True)
class BreakerPolicy:
    # Consecutive transient failures that open the breaker...
    failures: int = 5
    # ...when the first and the last of them are at most this far apart.
    window_s: float = 60.0
    # How long an open breaker skips its provider before letting a probe through.
    cool_down_s: float = 30.0
    # A probe that never reports (its worker died) frees the half-open slot after this.
    probe_timeout_s: float = 60.0
    # A breaker nobody consulted for this long is forgotten.
    idle_expiry_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.failures < 1:
            raise ValueError("failures must be at least 1")
        if min(self.window_s, self.cool_down_s, self.probe_timeout_s, self.idle_expiry_s) <= 0:
            raise ValueError("durations must be positive")


@dataclass
class _Breaker:
    kind: str
    state: State = State.CLOSED
    streak: deque[float] = field(default_factory=deque)
    opened_at: float = 0.0
    probe_started_at: float | None = None
    last_used: float = 0.0


class _StateGauge(Gauge):
    """A gauge that asks its boards for fresh values whenever it is collected."""

    refresh: Callable[[], None] | None = None

    def collect(self) -> Iterable[Metric]:
        if self.refresh is not None:
            self.refresh()
        return super().collect()


class CircuitMetrics:
    """The two metric families, on a registry (the process's by default; tests pass their own)."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        self.state = _StateGauge(
            "herald_provider_circuit_state",
            "Most open state among this process's per-tenant breakers for the provider: 0 closed, 1 half-open, 2 open.",
            ["provider"],
            registry=registry,
        )
        self.transitions = Counter(
            "herald_provider_circuit_transitions_total",
            "Per-tenant provider breakers changing state, by provider and new state.",
            ["provider", "to"],
            registry=registry,
        )
        self._boards: weakref.WeakSet[BreakerBoard] = weakref.WeakSet()
        self._kinds: set[str] = set()
        self._lock = threading.Lock()
        self.state.refresh = self.refresh

    def attach(self, board: BreakerBoard) -> None:
        with self._lock:
            self._boards.add(board)

    def seen(self, kind: str) -> None:
        with self._lock:
            self._kinds.add(kind)

    def refresh(self) -> None:
        with self._lock:
            boards = list(self._boards)
            kinds = set(self._kinds)
        worst = dict.fromkeys(kinds, State.CLOSED)
        for board in boards:
            for kind, state in board.worst_states().items():
                worst[kind] = max(worst.get(kind, State.CLOSED), state)
        for kind, state in worst.items():
            self.state.labels(kind).set(int(state))


DEFAULT_METRICS = CircuitMetrics()


class BreakerBoard:
    """All of a process's breakers, keyed by (tenant id, provider config id).

    Thread-safe (the metrics endpoint reads it from its own thread); every method is quick
    and never waits on I/O. `clock` is a monotonic time in seconds, injectable for tests."""

    def __init__(
        self,
        policy: BreakerPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        metrics: CircuitMetrics | None = None,
    ) -> None:
        self.policy = policy or BreakerPolicy()
        self.clock = clock
        self.metrics = metrics or DEFAULT_METRICS
        self._breakers: dict[tuple[str, str], _Breaker] = {}
        self._lock = threading.Lock()
        self._swept_at = clock()
        self.metrics.attach(self)

    def allow(self, tenant_id: str, provider_id: str, kind: str) -> bool:
        """May the walk call this provider now? False while open; when half-open, True for
        one probe at a time. A True from a half-open breaker obliges the caller to report
        the call's outcome with `record`, or `release` if it ended without one."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            breaker = self._breakers.get((tenant_id, provider_id))
            if breaker is None:
                return True
            breaker.last_used = now
            self._advance(breaker, now)
            if breaker.state is State.CLOSED:
                return True
            if breaker.state is State.OPEN:
                return False
            started = breaker.probe_started_at
            if started is not None and now - started < self.policy.probe_timeout_s:
                return False
            breaker.probe_started_at = now
            return True

    def record(self, tenant_id: str, provider_id: str, kind: str, outcome: Outcome) -> None:
        """The outcome of a call `allow` let through."""
        if outcome is Outcome.SKIPPED:
            return
        now = self.clock()
        with self._lock:
            key = (tenant_id, provider_id)
            breaker = self._breakers.get(key)
            if outcome is not Outcome.TRANSIENT:
                # The provider answered: an outage, if there was one, is over.
                if breaker is not None:
                    if breaker.state is not State.CLOSED:
                        self._move(breaker, State.CLOSED)
                    del self._breakers[key]
                return
            if breaker is None:
                breaker = self._breakers[key] = _Breaker(kind)
                self.metrics.seen(kind)
            breaker.last_used = now
            self._advance(breaker, now)
            if breaker.state is State.HALF_OPEN:
                if breaker.probe_started_at is not None:
                    self._open(breaker, now)
                return
            if breaker.state is State.OPEN:
                return  # a call that started before the breaker opened; the cool-down stands
            streak = breaker.streak
            streak.append(now)
            while streak and now - streak[0] > self.policy.window_s:
                streak.popleft()
            if len(streak) >= self.policy.failures:
                self._open(breaker, now)

    def release(self, tenant_id: str, provider_id: str) -> None:
        """A call `allow` let through ended without an outcome (cancelled): free the probe slot."""
        with self._lock:
            breaker = self._breakers.get((tenant_id, provider_id))
            if breaker is not None:
                breaker.probe_started_at = None

    def state(self, tenant_id: str, provider_id: str) -> State:
        """The breaker's state now (an open breaker past its cool-down reads half-open)."""
        now = self.clock()
        with self._lock:
            breaker = self._breakers.get((tenant_id, provider_id))
            if breaker is None:
                return State.CLOSED
            self._advance(breaker, now)
            return breaker.state

    def worst_states(self) -> dict[str, State]:
        """Per provider kind, the most open state among this board's breakers (for the gauge)."""
        now = self.clock()
        worst: dict[str, State] = {}
        with self._lock:
            self._expire(now)
            for breaker in self._breakers.values():
                self._advance(breaker, now)
                worst[breaker.kind] = max(worst.get(breaker.kind, State.CLOSED), breaker.state)
        return worst

    def not_closed(self) -> list[tuple[str, str, str, State]]:
        """(tenant id, provider id, kind, state) of every breaker open or half-open now."""
        now = self.clock()
        with self._lock:
            for breaker in self._breakers.values():
                self._advance(breaker, now)
            return [
                (tenant_id, provider_id, breaker.kind, breaker.state)
                for (tenant_id, provider_id), breaker in self._breakers.items()
                if breaker.state is not State.CLOSED
            ]

    def _advance(self, breaker: _Breaker, now: float) -> None:
        if breaker.state is State.OPEN and now - breaker.opened_at >= self.policy.cool_down_s:
            breaker.probe_started_at = None
            self._move(breaker, State.HALF_OPEN)

    def _open(self, breaker: _Breaker, now: float) -> None:
        breaker.opened_at = now
        breaker.probe_started_at = None
        breaker.streak.clear()
        self._move(breaker, State.OPEN)

    def _move(self, breaker: _Breaker, to: State) -> None:
        breaker.state = to
        self.metrics.transitions.labels(breaker.kind, LABELS[to]).inc()

    def _expire(self, now: float) -> None:
        # A sweep visits every breaker, so it runs a few times per expiry period, not per call.
        if now - self._swept_at < self.policy.idle_expiry_s / 8:
            return
        self._swept_at = now
        idle = [key for key, b in self._breakers.items() if now - b.last_used > self.policy.idle_expiry_s]
        for key in idle:
            breaker = self._breakers.pop(key)
            if breaker.state is not State.CLOSED:
                self._move(breaker, State.CLOSED)
