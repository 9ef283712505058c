"""Deliveries behind an open circuit wait in the ledger, not on the bus.

A message NAKed with a delay stays unacknowledged on its consumer, one fairness lane shared by
many tenants, and JetStream delivers nothing new from a consumer whose `max_ack_pending`
messages are all unacknowledged. A dead target's backlog, handed back every cool-down, would
reach that limit and stop every tenant on the lane. So while a target's circuit is open, one
delivery per cool-down (per sender process) waits on the bus, to be the probe when the circuit
turns half-open; every other one is parked (`herald.sender.states.Park`: the ledger holds the
job, acknowledged, `herald_ledger.store.parking`). A probe that gets an answer closes the
circuit, and this process releases the target's parked jobs (`ReleaseParked`: due from now
on, at a pace). A replica whose circuit never opened, or a restart, releases nothing: the
parked jobs then come back after `webhook_park_recheck_s` (and up to half again), and those
that find the circuit still open are parked again. The failed probe's own retry, and new
deliveries, bring the next probes.
"""

from __future__ import annotations

import logging
import random
import time

from herald.config import Settings
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.sender.slots import CallLane
from herald.sender.states import Park
from herald.v1 import ledger_jobs_pb2

log = logging.getLogger("herald.webhook_sender")

# Lanes remembered at most; past it, the ones whose cool-down has passed are forgotten.
REMEMBERED = 4096


class Parking:
    def __init__(self, ledger: Ledger, settings: Settings) -> None:
        self.ledger = ledger
        self.recheck_s = settings.webhook_park_recheck_s
        # (tenant, lane) -> until when a delivery already waits on the bus to be the lane's probe.
        self._probe_until: dict[tuple[str, str], float] = {}

    def hold(self, lane: CallLane, wait_s: float) -> float | Park:
        """For a delivery whose target's circuit is open for about `wait_s` more: that wait on
        the bus for the lane's first in this cool-down (the probe), a `Park` for the others."""
        now = time.monotonic()
        key = (lane.tenant, lane.target)
        if self._probe_until.get(key, 0.0) <= now:
            if len(self._probe_until) >= REMEMBERED:
                self._probe_until = {k: until for k, until in self._probe_until.items() if until > now}
            self._probe_until[key] = now + wait_s
            return wait_s
        return Park(lane.target, self.recheck_s * (1 + random.random() / 2), wait_s, "circuit_open")

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
