"""Fair fetching of work: stochastic fair queueing across tenants, weighted
priorities, no starvation.

Tenants are hashed onto lanes (see `subjects`); every (priority, lane) has its own
durable consumer. A fetcher keeps one long-poll pull outstanding per lane and a
small buffer per lane; `next()` hands out buffered messages round-robin across
lanes, and across priorities by smooth weighted round-robin. So a tenant with ten
thousand queued jobs fills only its own lane's small buffer, and another tenant's
message waits for at most a round of the other busy lanes, not the backlog.

Within a priority, the next message comes from the lane served least recently
(a count of dispatches that decays with a half-life of DECAY_HALF_LIFE_S), ties
broken round-robin. Lanes with steady work share evenly; a lane that just became
active (a tenant starting to send) is served ahead of a long-standing backlog until
its recent share catches up, as fq_codel favours sparse flows. A backlog can never
be starved: any lane served less than another is the next one served.

A lane's buffer is refilled when it has drained to half (`refill_at`), with one pull for
the missing half: taking one message no longer costs one pull request (profiled, a pull per
delivered message was a fifth of the webhook-sender's CPU, in nats-py's writes).

Priority rule: while several priorities have work, CRITICAL, NORMAL and LOW are
served in the ratio of their weights (default 16:4:1), so LOW always gets about
one dispatch in 21 and is never starved; an idle priority's share goes to the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import FetchTimeoutError

from herald.bus.healing import HealingPull
from herald.bus.streams import ensure_consumer, lane_consumer_config, work_stream_config
from herald.bus.subjects import WorkClass
from herald.config import Settings

log = logging.getLogger("herald.bus.fair")

PRIORITIES = ("critical", "normal", "low")
DECAY_HALF_LIFE_S = 2.0
DEFAULT_WEIGHTS = {"critical": 16, "normal": 4, "low": 1}


@dataclass
class Lane:
    priority: str
    index: int
    # Its consumer's pull subscription, restored when the bus loses the consumer.
    pull: HealingPull
    buffer: deque[tuple[float, Msg]] = field(default_factory=deque)
    space: asyncio.Event = field(default_factory=asyncio.Event)
    # Dispatches from this lane, decayed: how much it was served lately.
    served: float = 0.0
    served_at: float = 0.0

    def recent_service(self, now: float) -> float:
        decay: float = 0.5 ** ((now - self.served_at) / DECAY_HALF_LIFE_S)
        return self.served * decay

    def record_dispatch(self, now: float) -> None:
        self.served = self.recent_service(now) + 1.0
        self.served_at = now


def lane_durable(work_class: WorkClass, priority: str, lane: int) -> str:
    return f"{work_class.value.replace('_', '-')}-{priority}-{lane}"


class FairFetcher:
    def __init__(
        self,
        js: JetStreamContext,
        settings: Settings,
        work_class: WorkClass,
        ack_wait_s: float,
        buffer_per_lane: int = 2,
        weights: dict[str, int] | None = None,
        pull_timeout_s: float = 5.0,
    ) -> None:
        self.js = js
        self.settings = settings
        self.work_class = work_class
        self.ack_wait_s = ack_wait_s
        self.buffer_per_lane = max(1, buffer_per_lane)
        # Pull again once a buffer has drained to this many (half of it, rounded down).
        self.refill_at = self.buffer_per_lane // 2
        self.weights = weights or DEFAULT_WEIGHTS
        self.pull_timeout_s = pull_timeout_s
        self.lanes: dict[str, list[Lane]] = {p: [] for p in PRIORITIES}
        self._available = asyncio.Event()
        self._credit = dict.fromkeys(PRIORITIES, 0)
        self._cursor = dict.fromkeys(PRIORITIES, 0)
        self._tasks: list[asyncio.Task[None]] = []
        self._keeping_alive: asyncio.Task[None] | None = None
        # Handed out by next() and not yet settled (see `settled`), by stream sequence: when each
        # was last renewed (pulled or told in progress), as in the buffers.
        self._in_hand: dict[int, tuple[float, Msg]] = {}
        # Copies the server sent again while their first was in hand (see `next`), by stream
        # sequence: settled with the first, never handed out.
        self._copies: dict[int, list[Msg]] = {}
        self._running = False

    async def start(self) -> None:
        stream = self.settings.stream_name("work")
        subjects = self.settings.subjects()
        for priority in PRIORITIES:
            for index in range(self.settings.fairness_lanes):
                durable = lane_durable(self.work_class, priority, index)
                config = lane_consumer_config(
                    self.settings, durable, subjects.lane_filter(self.work_class, priority, index), self.ack_wait_s
                )
                await ensure_consumer(self.js, stream, config)
                pull = HealingPull(self.js, work_stream_config(self.settings), config, durable)
                await pull.bind()
                lane = Lane(priority, index, pull)
                lane.space.set()
                self.lanes[priority].append(lane)
        self._running = True
        self._tasks = [asyncio.create_task(self._pull(lane)) for lanes in self.lanes.values() for lane in lanes]
        self._keeping_alive = asyncio.create_task(self._keep_alive())

    async def stop(self) -> list[Msg]:
        """Stops pulling; returns the messages still buffered so the caller can hand them back.
        The messages in hand are kept alive until `close`, while the caller finishes them."""
        self._running = False
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        left = [msg for lanes in self.lanes.values() for lane in lanes for _, msg in lane.buffer]
        for lanes in self.lanes.values():
            for lane in lanes:
                lane.buffer.clear()
        return left

    async def close(self) -> None:
        """After `stop`, once the messages in hand are settled."""
        if self._keeping_alive is not None:
            self._keeping_alive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeping_alive
        self._in_hand.clear()
        self._copies.clear()

    def holding(self) -> tuple[int, int]:
        """Messages handed out by `next` and not yet settled, and messages in the lanes' buffers
        (read by the metrics' thread: lengths only, which are atomic)."""
        return len(self._in_hand), sum(len(lane.buffer) for lanes in self.lanes.values() for lane in lanes)

    def settled(self, message: Msg) -> list[Msg]:
        """The caller is about to ack, NAK or terminate `message`: no longer kept alive (an
        in-progress after a NAK with a delay would bring the message back early). Returns the
        copies of it the server sent meanwhile, for the caller to settle the same way: after a
        bus restart the server may know only the copy's delivery, and a verdict sent on the
        first alone can then be lost, leaving the message pending for a job already ended."""
        sequence = message.metadata.sequence.stream
        held = self._in_hand.get(sequence)
        if held is None or held[1] is not message:
            return []
        del self._in_hand[sequence]
        return self._copies.pop(sequence, [])

    async def _pull(self, lane: Lane) -> None:
        while self._running:
            await lane.space.wait()
            want = self.buffer_per_lane - len(lane.buffer)
            subscription = lane.pull.subscription
            assert subscription is not None
            try:
                messages = await subscription.fetch(batch=want, timeout=self.pull_timeout_s)
            except (FetchTimeoutError, TimeoutError):
                await lane.pull.quiet()
                continue
            except asyncio.CancelledError:
                raise
            except Exception as error:
                await lane.pull.failed(error)
                continue
            lane.pull.fetched()
            now = time.monotonic()
            lane.buffer.extend((now, m) for m in messages)
            if len(lane.buffer) > self.refill_at:
                lane.space.clear()
            self._available.set()

    async def _keep_alive(self) -> None:
        """A message runs down its AckWait from its pull to its settling, in a buffer and in the
        caller's hands alike; tell the server it is in progress before that runs out. Were it
        to run out under a live sender, the copy redelivered would run the same attempt a second
        time beside the first (seen: four timeout attempts recorded for three; a copy that comes
        all the same, after a stall longer than the margin, is held back by `next`). Renewed from
        one place because a message taken from the buffer just before its renewal was due
        would otherwise start a fresh count in the hands that took it. Checked every quarter of
        AckWait, a message is renewed at most half of AckWait after its last renewal, which
        leaves the other half for a busy event loop and the renewal's trip to the server."""
        period = max(self.ack_wait_s / 4, 0.25)
        while True:
            await asyncio.sleep(period)
            threshold = time.monotonic() - period
            for lanes in self.lanes.values():
                for lane in lanes:
                    for i, (since, msg) in enumerate(list(lane.buffer)):
                        if since < threshold:
                            with contextlib.suppress(Exception):
                                await msg.in_progress()
                            if i < len(lane.buffer) and lane.buffer[i][1] is msg:
                                lane.buffer[i] = (time.monotonic(), msg)
            for key, (since, msg) in list(self._in_hand.items()):
                # Checked by identity: while an earlier renewal was awaited this one may have been
                # settled and its sequence taken by a later copy, which must not be replaced by the
                # settled message (that kept the sequence alive on the server for good).
                held = self._in_hand.get(key)
                if since < threshold and held is not None and held[1] is msg:
                    self._in_hand[key] = (time.monotonic(), msg)
                    with contextlib.suppress(Exception):
                        await msg.in_progress()

    def _pick_priority(self) -> str | None:
        """Smooth weighted round-robin over the priorities that have buffered work."""
        ready = [p for p in PRIORITIES if any(lane.buffer for lane in self.lanes[p])]
        if not ready:
            return None
        total = sum(self.weights[p] for p in ready)
        for p in ready:
            self._credit[p] += self.weights[p]
        chosen = max(ready, key=lambda p: self._credit[p])
        self._credit[chosen] -= total
        return chosen

    async def next(self) -> Msg:
        while True:
            priority = self._pick_priority()
            if priority is None:
                self._available.clear()
                await self._available.wait()
                continue
            lanes = self.lanes[priority]
            start = self._cursor[priority]
            now = time.monotonic()
            ready = [lanes[(start + step) % len(lanes)] for step in range(len(lanes))]
            lane = min((candidate for candidate in ready if candidate.buffer), key=lambda c: c.recent_service(now))
            self._cursor[priority] = (lane.index + 1) % len(lanes)
            lane.record_dispatch(now)
            renewed, message = lane.buffer.popleft()
            if len(lane.buffer) <= self.refill_at:
                lane.space.set()
            sequence = message.metadata.sequence.stream
            held = self._in_hand.get(sequence)
            # Compared by content too: a stream deleted and created again numbers its messages
            # from 1 anew, and a new message must not pass for a copy of an old one in hand.
            if held is not None and held[1].data == message.data:
                # AckWait ran out under a stalled process, or the bus restarted, and the server
                # sent the message again while its first copy is still in hand: running both
                # would make the same attempt twice. The copy is held back and settled with the
                # first (see `settled`).
                log.warning("redelivered copy of a message in hand held back", extra={"stream_sequence": sequence})
                self._copies.setdefault(sequence, []).append(message)
                continue
            self._in_hand[sequence] = (renewed, message)
            return message
