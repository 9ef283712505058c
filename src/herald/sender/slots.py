"""A sender's call slots, which no receiver can capture: fair order holds up to the call.

Calls are grouped in lanes, one per (tenant, target): a target is where the calls go (a
webhook target, or a receiver's origin for a direct webhook; the email senders have one lane
per tenant). A lane has at most `CallLane.bound` calls in flight, and a tenant at most
`tenant_bound` over all its lanes. A free caller takes the next waiting call round-robin
across the lanes that are under both bounds, so a call whose target or tenant is at its
bound waits in its lane without holding a slot and without holding up the calls behind it
in other lanes. Were calls to wait FIFO for any slot, one receiver that never answers would
hold every slot for its timeout and stall every tenant.

What waits is bounded too, before the job starts (`admit`), once the sender is crowded (half
its window admitted and not done calling; the webhook-sender, `crowded_at`): a lane whose
`QUEUED_PER_BOUND x bound` admitted jobs are still waiting while it is at its bound (twice that
under it), or a tenant likewise over its bound, refuses more. The loop hands such a message
back to the bus with a delay (`held_delay_s`, growing with the refusals in a row, so a large
backlog comes back spread out rather than all at once), so a backlog for one slow receiver
never fills the sender's window of started jobs. A lane whose backlog (admitted, and refused
lately) takes long to be called (`drain_s`, from its calls' average length) is a slow
receiver's: the webhook-sender parks what it refuses in the ledger instead, each until its
turn, `call_gap_s` apart (herald_webhook_sender.parking).

The callers are tasks for the whole run; a caller that finishes a call takes the next one
itself (a finished call frees exactly one unit of a bound, so at most one waiting call became
eligible), and a queued call wakes one idle caller, not all of them.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

Called = TypeVar("Called")

# A lane (or tenant) admits this many jobs per unit of its bound beyond those in flight: enough
# to keep its calls back to back through the ledger's start, few enough that a stalled lane
# holds little of the window.
QUEUED_PER_BOUND = 2
# A refused job comes back after HELD_BASE_S..2 x HELD_BASE_S, times one more for each `bound`
# refusals in a row in its lane (a backlog), at most HELD_MAX_S.
HELD_BASE_S = 0.25
HELD_MAX_S = 30.0
# How much each finished call moves its lane's average length of a call.
CALL_S_WEIGHT = 0.2
# Started jobs per slot, and at least WINDOW_MIN: a job holds its place from its start to its
# committed record, so the window bounds a sender's rate, and the duplicates a crash can cause.
# 80 (16 per slot at 5 slots) is what the burst benchmark was measured with (docs/performance.md);
# with the many slots of async calls (128 webhook slots) 4 per slot keeps the window, and so the
# duplicates after a kill, at 512 rather than 2,048.
WINDOW_PER_SLOT = 4
WINDOW_MIN = 80


def window_size(concurrency: int) -> int:
    """Started jobs a sender with `concurrency` slots holds at once."""
    return max(concurrency * WINDOW_PER_SLOT, WINDOW_MIN)


@dataclass(frozen=True)
class CallLane:
    tenant: str
    target: str
    bound: int  # this target's calls in flight at most


class Refusal(Enum):
    """Why a job was not admitted: its target's or its tenant's queue is full."""

    TARGET = "target"
    TENANT = "tenant"


class Stage(Enum):
    WAITING = 0  # admitted, its call not begun
    CALLING = 1
    DONE = 2


@dataclass(eq=False)
class Place:
    """A job's place from its admission to its end (`CallSlots.release`)."""

    lane: CallLane
    stage: Stage = Stage.WAITING


@dataclass(eq=False)
class _Waiting(Generic[Called]):
    place: Place
    run: Callable[[], Coroutine[Any, Any, Called]]
    made: asyncio.Future[Called]


@dataclass
class _LaneState:
    bound: int
    waiting: int = 0  # admitted, not calling yet (in the ledger's start, preparing or queued)
    in_flight: int = 0
    queue: deque[_Waiting[Any]] = field(default_factory=deque)
    refused_in_row: int = 0
    # Seconds a call of this lane takes, a moving average (0 until one ended).
    call_s: float = 0.0
    # When it refused jobs within the last HELD_MAX_S: each comes back within that, so about
    # the backlog it holds on the bus.
    refusals: deque[float] = field(default_factory=deque)


class CallSlots:
    def __init__(self, concurrency: int, tenant_bound: int | None = None, crowded_at: int | None = None) -> None:
        self.concurrency = concurrency
        self.tenant_bound = min(tenant_bound or concurrency, concurrency)
        # Admission refuses only while this many jobs are admitted and not done calling (None:
        # never): while the window has room, a lane's backlog costs nobody anything.
        self.crowded_at = crowded_at
        self._admitted = 0
        self._lanes: dict[tuple[str, str], _LaneState] = {}
        self._tenant_waiting: dict[str, int] = {}
        self._tenant_in_flight: dict[str, int] = {}
        # Lanes with queued calls, in round-robin order.
        self._ready: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._idle: deque[asyncio.Future[None]] = deque()
        self._callers: list[asyncio.Task[None]] = []

    # -- admission ---------------------------------------------------------------------------

    def admit(self, lane: CallLane) -> Place | Refusal:
        key = (lane.tenant, lane.target)
        state = self._lanes.get(key)
        if state is None:
            state = self._lanes[key] = _LaneState(lane.bound)
        self.rebound(lane)
        crowded = self.crowded_at is not None and self._admitted >= self.crowded_at
        if crowded and state.waiting >= self._queue_cap(state.bound, state.in_flight):
            state.refused_in_row += 1
            state.refusals.append(time.monotonic())
            return Refusal.TARGET
        tenant_in_flight = self._tenant_in_flight.get(lane.tenant, 0)
        if crowded and self._tenant_waiting.get(lane.tenant, 0) >= self._queue_cap(self.tenant_bound, tenant_in_flight):
            state.refused_in_row += 1
            self._forget_if_idle(key, state)
            return Refusal.TENANT
        state.waiting += 1
        self._admitted += 1
        state.refused_in_row = 0
        self._tenant_waiting[lane.tenant] = self._tenant_waiting.get(lane.tenant, 0) + 1
        return Place(lane)

    def rebound(self, lane: CallLane) -> None:
        """The lane's bound is now `lane.bound`; raised, the calls it lets go are made at once."""
        state = self._lanes.get((lane.tenant, lane.target))
        if state is None:
            return
        raised = max(1, lane.bound) - state.bound
        state.bound = max(1, lane.bound)
        for _ in range(min(raised, len(state.queue))):
            self._wake_one()

    def targets_of(self, tenant: str) -> list[str]:
        """The targets of a tenant's lanes now."""
        return [target for (owner, target) in list(self._lanes) if owner == tenant]

    @staticmethod
    def _queue_cap(bound: int, in_flight: int) -> int:
        """Jobs a lane (or tenant) may have admitted and not calling: QUEUED_PER_BOUND x its bound
        while at its bound, twice that while under it (a fast target's jobs pass through the
        ledger's start in numbers at a high rate, and its calls end before its bound is reached)."""
        return QUEUED_PER_BOUND * bound * (1 if in_flight >= bound else 2)

    def held_delay_s(self, lane: CallLane) -> float:
        """How long a refused job stays on the bus: longer the larger the lane's backlog."""
        state = self._lanes.get((lane.tenant, lane.target))
        in_row = state.refused_in_row if state is not None else 1
        rounds = 1 + in_row // max(1, lane.bound)
        return min(HELD_MAX_S, HELD_BASE_S * (1 + random.random()) * rounds)

    def drain_s(self, lane: CallLane) -> float:
        """About how long the lane's backlog (admitted, and refused within the last HELD_MAX_S)
        takes to be called, at its bound and the average length of its calls (0: none ended yet)."""
        state = self._lanes.get((lane.tenant, lane.target))
        if state is None:
            return 0.0
        since = time.monotonic() - HELD_MAX_S
        while state.refusals and state.refusals[0] < since:
            state.refusals.popleft()
        return (state.waiting + len(state.refusals)) * state.call_s / max(1, min(state.bound, self.tenant_bound))

    def call_gap_s(self, lane: CallLane) -> float:
        """About how long apart the lane's calls end when it is at its bound."""
        state = self._lanes.get((lane.tenant, lane.target))
        return state.call_s / max(1, min(state.bound, self.tenant_bound)) if state is not None else 0.0

    def release(self, place: Place) -> None:
        """The job has ended (its call made, or none will be): its place is free."""
        if place.stage is Stage.WAITING:
            key = (place.lane.tenant, place.lane.target)
            state = self._lanes.get(key)
            if state is not None:
                state.waiting -= 1
                self._admitted -= 1
                self._dec(self._tenant_waiting, place.lane.tenant)
                self._forget_if_idle(key, state)
        place.stage = Stage.DONE

    # -- calls -------------------------------------------------------------------------------

    async def call(self, place: Place, run: Callable[[], Coroutine[Any, Any, Called]]) -> Called:
        """`run()` made by a caller when the place's lane and tenant are under their bounds."""
        key = (place.lane.tenant, place.lane.target)
        state = self._lanes[key]
        made: asyncio.Future[Called] = asyncio.get_running_loop().create_future()
        state.queue.append(_Waiting(place, run, made))
        self._ready[key] = None
        self._wake_one()
        return await made

    def _wake_one(self) -> None:
        while self._idle:
            idle = self._idle.popleft()
            if not idle.done():
                idle.set_result(None)
                return

    def start(self) -> None:
        self._callers = [asyncio.create_task(self._caller()) for _ in range(self.concurrency)]

    async def stop(self) -> None:
        for caller in self._callers:
            caller.cancel()
        await asyncio.gather(*self._callers, return_exceptions=True)

    def refuse_waiting(self, error: BaseException) -> None:
        """Every queued call ends with `error` (the sender is stopping)."""
        for state in self._lanes.values():
            while state.queue:
                made = state.queue.popleft().made
                if not made.done():
                    made.set_exception(error)
        self._ready.clear()

    def _pick(self) -> _Waiting[Any] | None:
        for key in list(self._ready):
            state = self._lanes[key]
            while state.queue and state.queue[0].made.done():
                state.queue.popleft()  # its job's task is gone (cancelled)
            if not state.queue:
                del self._ready[key]
                continue
            if state.in_flight >= state.bound or self._tenant_in_flight.get(key[0], 0) >= self.tenant_bound:
                continue
            waiting = state.queue.popleft()
            if state.queue:
                self._ready.move_to_end(key)
            else:
                del self._ready[key]
            state.waiting -= 1
            state.in_flight += 1
            self._dec(self._tenant_waiting, key[0])
            self._tenant_in_flight[key[0]] = self._tenant_in_flight.get(key[0], 0) + 1
            waiting.place.stage = Stage.CALLING
            return waiting
        return None

    def _ended(self, place: Place, took_s: float) -> None:
        key = (place.lane.tenant, place.lane.target)
        state = self._lanes[key]
        state.call_s = took_s if not state.call_s else state.call_s + CALL_S_WEIGHT * (took_s - state.call_s)
        state.in_flight -= 1
        self._admitted -= 1
        self._dec(self._tenant_in_flight, key[0])
        place.stage = Stage.DONE
        self._forget_if_idle(key, state)

    async def _caller(self) -> None:
        """One slot: makes the calls `_pick` gives it, for as long as the sender runs."""
        loop = asyncio.get_running_loop()
        while True:
            waiting = self._pick()
            if waiting is None:
                idle: asyncio.Future[None] = loop.create_future()
                self._idle.append(idle)
                await idle
                continue
            made = waiting.made
            began = loop.time()
            try:
                called = await waiting.run()
            except BaseException as error:
                # The call's failure is its job's (a HandBack too); the caller goes on, unless it
                # is itself being cancelled (the sender's end: every job's task has finished by then).
                if not made.done():
                    made.set_exception(error)
                caller = asyncio.current_task()
                if isinstance(error, asyncio.CancelledError) and caller is not None and caller.cancelling():
                    raise
            else:
                if not made.done():
                    made.set_result(called)
            finally:
                self._ended(waiting.place, loop.time() - began)

    # -- what is seen --------------------------------------------------------------------------

    def readings(self) -> tuple[int, int, int]:
        """(calls in flight, calls queued behind a bound, lanes at their bound) now. Read from
        the metrics endpoint's thread: a lane added meanwhile makes it look again."""
        for _ in range(5):
            try:
                in_flight = held = at_bound = 0
                for (tenant, _target), state in list(self._lanes.items()):
                    in_flight += state.in_flight
                    full = state.in_flight >= state.bound
                    at_bound += full
                    if full or self._tenant_in_flight.get(tenant, 0) >= self.tenant_bound:
                        held += self._queued(state)
                return in_flight, held, at_bound
            except RuntimeError:
                continue
        return 0, 0, 0

    def holding_back(self, lane: CallLane) -> Refusal | None:
        """Which bound would keep a call queued in this lane now waiting, if any. The calls queued
        ahead of it count as taken: they get the lane's free units first (a burst reaches its lane
        before any caller has run, with nothing in flight yet, and all but `bound` of it waits)."""
        state = self._lanes.get((lane.tenant, lane.target))
        if state is not None and state.in_flight + self._queued(state) >= state.bound:
            return Refusal.TARGET
        if self._tenant_in_flight.get(lane.tenant, 0) >= self.tenant_bound:
            return Refusal.TENANT
        return None

    @staticmethod
    def _queued(state: _LaneState) -> int:
        return sum(1 for w in list(state.queue) if not w.made.done())

    def lane_reading(self, lane: CallLane) -> tuple[int, int]:
        """(calls in flight, jobs admitted and waiting) of one lane."""
        state = self._lanes.get((lane.tenant, lane.target))
        return (state.in_flight, state.waiting) if state is not None else (0, 0)

    def _forget_if_idle(self, key: tuple[str, str], state: _LaneState) -> None:
        if not state.waiting and not state.in_flight and not state.queue:
            self._lanes.pop(key, None)
            self._ready.pop(key, None)

    @staticmethod
    def _dec(counts: dict[str, int], tenant: str) -> None:
        left = counts.get(tenant, 0) - 1
        if left > 0:
            counts[tenant] = left
        else:
            counts.pop(tenant, None)
