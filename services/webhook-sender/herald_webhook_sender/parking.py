"""Deliveries behind an open circuit wait in the ledger, not on the bus.

A message NAKed with a delay stays unacknowledged on its consumer, one fairness lane shared by
many tenants, and JetStream delivers nothing new from a consumer whose `max_ack_pending`
messages are all unacknowledged. A dead target's backlog, handed back every cool-down, would
reach that limit and stop every tenant on the lane. So while a target's circuit is open, one
delivery per cool-down (per sender process) waits on the bus, to be the probe when the circuit
turns half-open; every other one is parked (`herald.sender.states.Park`: the ledger holds the
job, acknowledged, `herald_ledger.store.parking`), until its retry window ends: a delivery still
held then fails without a call (`herald.webhooks.retry_policy.HELD_PAST_WINDOW`). A probe
that gets an answer closes the
circuit, and this process releases the target's parked jobs (`ReleaseParked`: due from now
on, at a pace); a park whose commit came after that release (it was under way when the circuit
closed) releases the lane again. An answer to a replica whose circuit never opened, or to this
one restarted, releases them too: its attempt record names the lane it was answered on, and the
ledger releases a lane it knows jobs are parked on (`herald_ledger.parked_lanes`). The failed
probe's own retry, new deliveries, and one parked delivery a lane the ledger brings back every
`webhook_park_recheck_s` (its recheck) bring the next probes; the rest of the backlog stays
parked (a dead target's backlog of a day, cycling through the bus and the ledger every
recheck, would be a load on every tenant).

A target that answers, but slowly, builds a backlog behind its bound of calls in flight, which
the sender refuses (`herald.sender.slots`) and would hand back to the bus again and again. Once
the lane's backlog (admitted, and refused within `HELD_MAX_S`) takes longer to be called than
`webhook_park_backlog_s` (30 s), a refused delivery is parked instead, until its turn: the
lane's calls end `call_gap_s` apart, and each parked delivery gets the next turn after the ones
this process parked before it. One that comes back too early is refused and parked again, at
the end of the line. A rate-limited target's backlog likewise: a delivery whose turn is further
away than that is parked until it, one `60 / rate_limit_per_min` apart.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.sender.slots import CallLane
from herald.sender.states import Park
from herald.v1 import ledger_jobs_pb2

log = logging.getLogger("herald.webhook_sender")

# Lanes remembered at most; past it, the ones whose cool-down (or turn) has passed are forgotten.
REMEMBERED = 4096
# Why a delivery behind an open circuit is parked (the metric's label).
CIRCUIT_HOLD = "circuit_open"


class Parking:
    def __init__(self, ledger: Ledger, clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger = ledger
        self.clock = clock
        # (tenant, lane) -> until when a delivery already waits on the bus to be the lane's probe.
        self._probe_until: dict[tuple[str, str], float] = {}
        # (tenant, lane) -> the turn of the next delivery parked behind the lane's bound.
        self._turns: dict[tuple[str, str], float] = {}

    def hold(self, lane: CallLane, wait_s: float, window_left_s: float) -> float | Park:
        """For a delivery whose target's circuit is open for about `wait_s` more, and whose
        retry window ends in `window_left_s`: that wait on the bus for the lane's first in this
        cool-down (the probe); for the others a `Park` until just past the window's end."""
        now = self.clock()
        key = (lane.tenant, lane.target)
        if self._probe_until.get(key, 0.0) <= now:
            if len(self._probe_until) >= REMEMBERED:
                self._probe_until = {k: until for k, until in self._probe_until.items() if until > now}
            self._probe_until[key] = now + wait_s
            return wait_s
        return Park(lane.target, max(window_left_s, 0.0) + 1.0, wait_s, CIRCUIT_HOLD)

    def until_turn(
        self, lane: CallLane, kind: str, wait_s: float, gap_s: float, fallback_s: float, reason: str
    ) -> Park:
        """For a delivery whose turn is `wait_s` away in a line that moves one every `gap_s` (its
        target's bound: `BOUND`; its rate limit: `PACED`): parked until its turn, after every one
        this process parked in that line before it. Its parked lane is the line's, which a closing
        circuit does not release."""
        now = self.clock()
        key = (lane.tenant, f"{kind}{lane.target}")
        if len(self._turns) >= REMEMBERED:
            self._turns = {k: until for k, until in self._turns.items() if until > now}
        turn = max(now + wait_s, self._turns.get(key, 0.0))
        self._turns[key] = turn + gap_s
        return Park(key[1], turn - now, fallback_s, reason)

    async def release(self, lane: CallLane) -> None:
        """The lane answers again: its parked jobs come back (best effort: else at their time)."""
        self._probe_until.pop((lane.tenant, lane.target), None)
        try:
            answer = await self.ledger.jobs.ReleaseParked(
                ledger_jobs_pb2.ReleaseParkedRequest(tenant_id=lane.tenant, lane=lane.target), timeout=CALL_DEADLINE_S
            )
        except Exception as error:
            log.warning("parked deliveries not released", extra={"error": repr(error)})
            return
        if answer.released:
            log.info("parked deliveries released", extra={"tenant_id": lane.tenant, "released": answer.released})
