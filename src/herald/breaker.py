"""Circuit breakers, keyed by (tenant id, key), written once for every sender: the email
providers of a tenant (`herald_email_sender.breaker`) and the webhook targets
(`herald_webhook_sender.breakers`). A slow or dead destination costs its tenant a timeout on
every call otherwise, and its slots meanwhile.

A breaker opens after `failures` consecutive failures (what counts is the sender's `judge`)
that all fall within `window_s`; while open its destination is not called. After
`cool_down_s` the breaker is half-open: the next call is let through as a probe (one at a
time) and its result decides: an answer closes the breaker, another failure opens it again.

An answer that is not a failure (the destination is up and said something: refused this
message, these credentials) resets the streak and closes a half-open breaker.

Breakers live in process memory (one board per sender process): each replica learns about an
outage on its own, which costs each replica `failures` calls, and a restart forgets. A breaker
not consulted for `idle_expiry_s` is dropped, so memory follows the tenants that are sending.

Metrics. Tenant ids and keys are never a label (their number is unbounded), so breakers are
aggregated per kind (an email provider kind, "webhook"): the state gauge is the most open state
among this process's breakers of that kind (0 closed, 1 half-open, 2 open), the transitions
counter counts state changes (the rate of openings shows how many breakers trip). The gauge is
computed when scraped, which is also when an open breaker whose cool-down has passed turns
half-open: an idle tenant's breaker does not keep reporting "open" forever.
"""

from __future__ import annotations

import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.metrics_core import Metric

Outcome = TypeVar("Outcome")


class State(IntEnum):
    CLOSED = 0
    HALF_OPEN = 1
    OPEN = 2


LABELS = {State.CLOSED: "closed", State.HALF_OPEN: "half_open", State.OPEN: "open"}


@dataclass(frozen=True)
class BreakerPolicy:
    # Consecutive failures that open the breaker...
    failures: int = 5
    # ...when the first and the last of them are at most this far apart.
    window_s: float = 60.0
    # How long an open breaker skips its destination before letting a probe through.
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
    """The two metric families of one sender's breakers, labelled by kind (`label`), on a
    registry (the process's by default; tests pass their own)."""

    def __init__(
        self, state_name: str, transitions_name: str, what: str, label: str, registry: CollectorRegistry | None
    ) -> None:
        self.state = _StateGauge(
            state_name,
            f"Most open state among this process's breakers for {what}: 0 closed, 1 half-open, 2 open.",
            [label],
            registry=registry,
        )
        self.transitions = Counter(
            transitions_name,
            f"Breakers for {what} changing state, by {label} and new state.",
            [label, "to"],
            registry=registry,
        )
        self._boards: weakref.WeakSet[BreakerBoard[Any]] = weakref.WeakSet()
        self._kinds: set[str] = set()
        self._lock = threading.Lock()
        self.state.refresh = self.refresh

    def attach(self, board: BreakerBoard[Any]) -> None:
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


class BreakerBoard(ABC, Generic[Outcome]):
    """All of a sender's breakers, keyed by (tenant id, key): what a call's outcome means is
    the sender's (`judge`).

    Thread-safe (the metrics endpoint reads it from its own thread); every method is quick
    and never waits on I/O. `clock` is a monotonic time in seconds, injectable for tests."""

    def __init__(
        self,
        metrics: CircuitMetrics,
        policy: BreakerPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy or BreakerPolicy()
        self.clock = clock
        self.metrics = metrics
        self._breakers: dict[tuple[str, str], _Breaker] = {}
        self._lock = threading.Lock()
        self._swept_at = clock()
        self.metrics.attach(self)

    @abstractmethod
    def judge(self, outcome: Outcome) -> bool | None:
        """True: a failure that counts toward opening; False: an answer (the destination is
        up); None: no call was made, nothing learnt."""

    def allow(self, tenant_id: str, key: str, kind: str) -> bool:
        """May the sender call this destination now? False while open; when half-open, True for
        one probe at a time. A True from a half-open breaker obliges the caller to report
        the call's outcome with `record`, or `release` if it ended without one."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            breaker = self._breakers.get((tenant_id, key))
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

    def record(self, tenant_id: str, key: str, kind: str, outcome: Outcome) -> bool:
        """The outcome of a call `allow` let through; True when it closed an open or half-open
        breaker (what waited for the destination may go)."""
        failed = self.judge(outcome)
        if failed is None:
            return False
        now = self.clock()
        with self._lock:
            keyed = (tenant_id, key)
            breaker = self._breakers.get(keyed)
            if not failed:
                # The destination answered: an outage, if there was one, is over.
                closed = False
                if breaker is not None:
                    if breaker.state is not State.CLOSED:
                        self._move(breaker, State.CLOSED)
                        closed = True
                    del self._breakers[keyed]
                return closed
            if breaker is None:
                breaker = self._breakers[keyed] = _Breaker(kind)
                self.metrics.seen(kind)
            breaker.last_used = now
            self._advance(breaker, now)
            if breaker.state is State.HALF_OPEN:
                if breaker.probe_started_at is not None:
                    self._open(breaker, now)
                return False
            if breaker.state is State.OPEN:
                return False  # a call that started before the breaker opened; the cool-down stands
            streak = breaker.streak
            streak.append(now)
            while streak and now - streak[0] > self.policy.window_s:
                streak.popleft()
            if len(streak) >= self.policy.failures:
                self._open(breaker, now)
            return False

    def release(self, tenant_id: str, key: str) -> None:
        """A call `allow` let through ended without an outcome (cancelled): free the probe slot."""
        with self._lock:
            breaker = self._breakers.get((tenant_id, key))
            if breaker is not None:
                breaker.probe_started_at = None

    def cool_down_left_s(self, tenant_id: str, key: str) -> float:
        """Seconds until an open breaker lets a probe through; 0 when it is not open."""
        now = self.clock()
        with self._lock:
            breaker = self._breakers.get((tenant_id, key))
            if breaker is None or breaker.state is not State.OPEN:
                return 0.0
            return max(0.0, breaker.opened_at + self.policy.cool_down_s - now)

    def wait_left_s(self, tenant_id: str, key: str, probing_s: float) -> float:
        """Seconds a call to this destination must wait: the cool-down left while open,
        `probing_s` while half-open with its probe under way, 0 when a call may go now."""
        now = self.clock()
        with self._lock:
            breaker = self._breakers.get((tenant_id, key))
            if breaker is None:
                return 0.0
            self._advance(breaker, now)
            if breaker.state is State.OPEN:
                return max(0.0, breaker.opened_at + self.policy.cool_down_s - now)
            started = breaker.probe_started_at
            if breaker.state is State.HALF_OPEN and started is not None and now - started < self.policy.probe_timeout_s:
                return probing_s
            return 0.0

    def state(self, tenant_id: str, key: str) -> State:
        """The breaker's state now (an open breaker past its cool-down reads half-open)."""
        now = self.clock()
        with self._lock:
            breaker = self._breakers.get((tenant_id, key))
            if breaker is None:
                return State.CLOSED
            self._advance(breaker, now)
            return breaker.state

    def worst_states(self) -> dict[str, State]:
        """Per kind, the most open state among this board's breakers (for the gauge)."""
        now = self.clock()
        worst: dict[str, State] = {}
        with self._lock:
            self._expire(now)
            for breaker in self._breakers.values():
                self._advance(breaker, now)
                worst[breaker.kind] = max(worst.get(breaker.kind, State.CLOSED), breaker.state)
        return worst

    def not_closed(self) -> list[tuple[str, str, str, State]]:
        """(tenant id, key, kind, state) of every breaker open or half-open now."""
        now = self.clock()
        with self._lock:
            for breaker in self._breakers.values():
                self._advance(breaker, now)
            return [
                (tenant_id, key, breaker.kind, breaker.state)
                for (tenant_id, key), breaker in self._breakers.items()
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
