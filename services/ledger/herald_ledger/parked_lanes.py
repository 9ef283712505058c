"""The call lanes with deliveries parked on them, as this ledger replica knows them, so that an
answer on a lane brings its parked deliveries back whichever sender parked them.

A webhook-sender parks what its open circuit holds (`store.parking`) and releases the lane when
its own probe closes that circuit. But another replica, or the same one restarted, may be the
one the target answers next, with no circuit of its own to close: the parked deliveries would
wait for their recheck (minutes) while new ones go straight through. So a sender's attempt
record names the lane it was answered on (`AttemptResult.answered`), and the ledger releases
that lane if jobs are parked on it. Knowing which lanes those are costs no read on the records'
path: the lanes this replica parked are added as it parks them, and each reconciler pass reads
them all again (`parking.parked_lanes`, one index probe a lane), which brings in the lanes
other replicas parked, at most one pass late.

A lane taken for a release leaves the set; it comes back with its next park or the next read.

The set also paces the lanes' rechecks: a sender parks what an open circuit holds until its
retry window ends (hours), and a probe asks whether the target is back. New deliveries and the
failed probe's own retries bring probes; so that a quiet target, or one whose senders all
restarted with no circuit open, is asked too, the reconciler makes one parked job of each
circuit's lane due every `webhook_park_recheck_s` (and up to half again, so that lanes spread
out): `rechecks`. Lines waiting for their turn (`TURN_LANES`) are not rechecked: each job there
has its turn. Each ledger replica rechecks the lanes it knows.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from herald.sender.states import TURN_LANES

# Lanes remembered at most: past it, an answer releases nothing, and the recheck does.
MAX_LANES = 10_000

Lane = tuple[str, str]  # (tenant id, the sender's call lane)


def is_circuit(lane: Lane) -> bool:
    """A circuit's lane, not a line waiting for its turn behind a bound or a rate limit."""
    return not lane[1].startswith(TURN_LANES)


class ParkedLanes:
    def __init__(self, recheck_s: float = 300.0, jitter: Callable[[], float] = random.random) -> None:
        self._lanes: set[Lane] = set()
        # Lanes parked while a read is under way, which its snapshot may have missed.
        self._during_read: set[Lane] | None = None
        self.recheck_s = recheck_s
        self._jitter = jitter
        # Circuit lanes -> when (monotonic) one of their parked jobs is next made due.
        self._next_recheck: dict[Lane, float] = {}

    def __bool__(self) -> bool:
        return bool(self._lanes)

    def parked(self, lanes: Iterable[Lane]) -> None:
        added = set(lanes)
        if len(self._lanes) + len(added) <= MAX_LANES:
            self._lanes |= added
        if self._during_read is not None:
            self._during_read |= added

    def reading(self) -> None:
        """A read of every parked lane begins (`read` ends it)."""
        self._during_read = set()

    def read(self, lanes: Iterable[Lane]) -> None:
        fresh = set(lanes) | (self._during_read or set())
        self._lanes = fresh if len(fresh) <= MAX_LANES else set(list(fresh)[:MAX_LANES])
        self._during_read = None

    def circuits(self) -> int:
        """How many of the lanes are circuits' (not lines waiting for their turn)."""
        return sum(1 for lane in self._lanes if is_circuit(lane))

    def rechecks(self, now: float) -> list[Lane]:
        """The circuit lanes whose recheck has come: one parked job of each is to be made due.
        A lane is first rechecked a recheck after this replica saw it; one gone is forgotten."""
        self._next_recheck = {lane: at for lane, at in self._next_recheck.items() if lane in self._lanes}
        due = []
        for lane in filter(is_circuit, self._lanes):
            at = self._next_recheck.get(lane)
            if at is None or at <= now:
                if at is not None:
                    due.append(lane)
                self._next_recheck[lane] = now + self.recheck_s * (1 + self._jitter() / 2)
        return due

    def answered(self, lanes: Iterable[Lane]) -> list[Lane]:
        """Of the lanes answered on, those with jobs parked: to release (they leave the set)."""
        taken = [lane for lane in set(lanes) if lane in self._lanes]
        self._lanes.difference_update(taken)
        return taken
