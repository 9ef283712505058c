"""Deliveries step aside while clients wait on the accept path in numbers (one machine).

A sender's niceness (`herald.cpu_priority`) yields only its own CPU, and most of a delivery's
work is done by others at full priority: the ledger's records, PostgreSQL, nats-server, the
receiver. Measured (docs/performance.md, "Deliveries during a burst"), deliveries taken during a burst cost its
accept rate a third; held until the burst ended, they went out in full windows and large ledger
batches, the last one arrived no later, and a job cost a third less CPU.

So the gateway counts the submissions its clients are waiting on (`IntakeGauge`) and, while they
reach `Settings.intake_busy_submissions`, says so on core NATS (`<prefix>.control.intake`, not
stored), at most every ANNOUNCE_EVERY_S. A sender that hears it (`IntakeHold`) takes no new job
until the announcements have stopped for QUIET_S; the jobs it started finish meanwhile, and the
messages wait in the stream. It holds for at most `Settings.intake_hold_max_s` at a time and
then takes work for as long again whatever is announced, so a sustained load still delivers at
least half the time. What it costs: during a burst, a job accepted early waits for the burst's
end (bounded by the hold) before its delivery starts.

A signal of the accept path rather than of the machine: a sender holding on CPU pressure holds
on the pressure of its own deliveries after the burst has ended (measured, same section). On
Kubernetes, where services run on different machines and one bus spans them, the manifests turn
the hold off (`intake_hold_max_s` 0) and the pods' CPU requests decide.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from nats.aio.client import Client
from nats.aio.msg import Msg

from herald.bus.subjects import Subjects

log = logging.getLogger("herald.intake")

TOPIC = "intake"  # `Subjects.control(TOPIC)`
# The gateway says it is busy at most this often; a sender holds until QUIET_S after the last.
ANNOUNCE_EVERY_S = 0.05
QUIET_S = 0.15


class IntakeGauge:
    """The gateway's count of submissions its clients are waiting on, and its announcements."""

    def __init__(self, busy_at: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.busy_at = busy_at
        self.waiting = 0
        self._clock = clock
        self._announce: Callable[[], Awaitable[None]] | None = None
        self._last = float("-inf")
        self._sending: set[asyncio.Task[None]] = set()

    def connect(self, announce: Callable[[], Awaitable[None]] | None) -> None:
        """Where announcements go (the bus connection's publish), or None while there is none."""
        self._announce = announce

    def enter(self, count: int = 1) -> None:
        """`count` submissions are now waiting; announces when that makes the gateway busy."""
        self.waiting += count
        if self.waiting < self.busy_at or self._announce is None:
            return
        now = self._clock()
        if now - self._last < ANNOUNCE_EVERY_S:
            return
        self._last = now
        task = asyncio.get_running_loop().create_task(self._send(self._announce))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def leave(self, count: int = 1) -> None:
        self.waiting -= count

    @staticmethod
    async def _send(announce: Callable[[], Awaitable[None]]) -> None:
        try:
            await announce()
        except Exception as error:
            # A lost announcement only lets deliveries run beside the burst, as without the hold.
            log.debug("intake announcement not sent", extra={"error": repr(error)})


class IntakeHold:
    """A sender's view: how long to wait before taking the next job."""

    def __init__(self, max_hold_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_hold_s = max_hold_s
        self._clock = clock
        self._busy_until = float("-inf")
        self._since: float | None = None  # when the current hold began
        self._free_until = float("-inf")  # after a hold of max_hold_s: no hold before this

    def heard(self) -> None:
        """The gateway said it is busy."""
        self._busy_until = self._clock() + QUIET_S

    async def on_message(self, message: Msg) -> None:
        self.heard()

    def wait_s(self) -> float:
        """0 to take a job now; otherwise how long to wait before asking again."""
        if self.max_hold_s <= 0:
            return 0.0
        now = self._clock()
        if now < self._free_until or now >= self._busy_until:
            self._since = None
            return 0.0
        if self._since is None:
            self._since = now
        ends = self._since + self.max_hold_s
        if now >= ends:
            # Held as long as it may: deliver for as long, whatever is announced meanwhile.
            self._since = None
            self._free_until = now + self.max_hold_s
            return 0.0
        return min(self._busy_until, ends) - now


async def follow_intake(nc: Client, subjects: Subjects, max_hold_s: float) -> IntakeHold | None:
    """A sender's hold, listening to the gateways' announcements; None when the hold is off."""
    if max_hold_s <= 0:
        return None
    hold = IntakeHold(max_hold_s)
    await nc.subscribe(subjects.control(TOPIC), cb=hold.on_message)
    return hold
