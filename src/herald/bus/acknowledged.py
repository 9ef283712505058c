"""Acknowledged work leaves the work stream in bulk: the work stream keeps JetStream's limits
retention, and a ledger loop purges, subject by subject, what every consumer of that subject
has acknowledged.

Why not work-queue retention, where each acknowledgement removes its message: at
`sync_interval: always` JetStream syncs each removal to disk before it answers, one after the
other per stream, so every job paid a second sync after its message's own (docs/performance.md,
"What `sync_interval: always` costs"). Here one purge removes everything up to a consumer's
acknowledgement floor, one sync for many messages.

What a purge may remove: on a subject, the messages below the lowest acknowledgement floor of
the consumers whose filter overlaps it (a consumer with no filter overlaps every subject); the
senders' lane consumers filter disjoint subjects (`herald.bus.subjects.lane_filter`), so each is
its own subject's only reader. A message above a floor, acknowledged or not, waits for the floor
to pass it; one nobody consumes (no sender of its class ever started) stays until the stream's
max age, as it would in a work queue. Several ledger replicas purging at once repeat each other.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nats.aio.client import Client

from herald.bus.erasure import API_TIMEOUT_S, purge
from herald.bus.streams import all_consumers

log = logging.getLogger("herald.bus.acknowledged")


@dataclass(frozen=True)
class Floor:
    """A consumer's filter subject ("" for none) and the stream sequence up to which it has
    acknowledged everything."""

    subject: str
    acknowledged: int


def _meet(a: list[str], b: list[str]) -> bool:
    for x, y in zip(a, b, strict=False):
        if ">" in (x, y):
            return True
        if x != y and "*" not in (x, y):
            return False
    return len(a) == len(b)


def overlaps(a: str, b: str) -> bool:
    """Whether two subject filters can match one subject ("" matches everything)."""
    return not a or not b or _meet(a.split("."), b.split("."))


def purgeable(floors: list[Floor]) -> dict[str, int]:
    """Subject -> the first sequence to keep: per consumer's filter, the lowest floor of every
    consumer overlapping it. No filter (a consumer of the whole stream) holds every subject
    back and has none of its own to purge. Each filter is split once: the senders' lanes make
    about 150 consumers, whose pairs this compares every round."""
    lowest: dict[str, int] = {}
    for floor in floors:
        lowest[floor.subject] = min(lowest.get(floor.subject, floor.acknowledged), floor.acknowledged)
    whole = lowest.pop("", None)
    tokens = {subject: subject.split(".") for subject in lowest}
    bounds: dict[str, int] = {}
    for subject, own in tokens.items():
        held = min(lowest[other] for other, theirs in tokens.items() if _meet(own, theirs))
        if whole is not None:
            held = min(held, whole)
        if held > 0:
            bounds[subject] = held + 1
    return bounds


async def consumer_floors(nc: Client, stream: str) -> list[Floor]:
    """Every consumer of `stream`, with its filter and acknowledgement floor. Several filters
    (`filter_subjects`) are taken as the whole stream: no purge beside it."""
    consumers = await all_consumers(nc.jetstream(timeout=API_TIMEOUT_S), stream)
    return [Floor(c.config.filter_subject or "", int(c.ack_floor.stream_seq if c.ack_floor else 0)) for c in consumers]


class AcknowledgedPurge:
    """Purges `stream`'s acknowledged messages once `nc` is set (the ledger sets it when the
    stream it joined has limits retention), remembering how far each subject was purged so that
    a round where no floor moved sends nothing but the consumer listing. A floor lower than the
    one remembered (the stream deleted and created again numbers from 1) is purged to as well."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.nc: Client | None = None
        self._kept_from: dict[str, int] = {}

    async def purge(self) -> int:
        """One round: how many messages went."""
        if self.nc is None or not self.nc.is_connected:
            return 0
        removed = 0
        for subject, keep_from in purgeable(await consumer_floors(self.nc, self.stream)).items():
            if self._kept_from.get(subject) != keep_from:
                removed += await purge(self.nc, self.stream, subject, below=keep_from)
                self._kept_from[subject] = keep_from
        if removed:
            log.debug("acknowledged work purged", extra={"stream": self.stream, "messages": removed})
        return removed
