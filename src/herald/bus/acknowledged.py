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

import orjson
from nats.aio.client import Client

from herald.bus.erasure import API_TIMEOUT_S

log = logging.getLogger("herald.bus.acknowledged")

# Consumers listed per request (JetStream's page).
_PAGE = 256


@dataclass(frozen=True)
class Floor:
    """A consumer's filter subject ("" for none) and the stream sequence up to which it has
    acknowledged everything."""

    subject: str
    acknowledged: int


def overlaps(a: str, b: str) -> bool:
    """Whether two subject filters can match one subject ("" matches everything)."""
    if not a or not b:
        return True
    left, right = a.split("."), b.split(".")
    for x, y in zip(left, right, strict=False):
        if ">" in (x, y):
            return True
        if x != y and "*" not in (x, y):
            return False
    return len(left) == len(right)


def purgeable(floors: list[Floor]) -> dict[str, int]:
    """Subject -> the first sequence to keep: per consumer's filter, the lowest floor of every
    consumer overlapping it. No filter (a consumer of the whole stream) means no subject purge."""
    bounds: dict[str, int] = {}
    for floor in floors:
        if not floor.subject:
            continue
        lowest = min(f.acknowledged for f in floors if overlaps(f.subject, floor.subject))
        if lowest > 0:
            bounds[floor.subject] = lowest + 1
    return bounds


async def _request(nc: Client, subject: str, body: dict[str, object]) -> dict[str, object]:
    reply = await nc.request(subject, orjson.dumps(body), timeout=API_TIMEOUT_S)
    answer: dict[str, object] = orjson.loads(reply.data)
    if answer.get("error"):
        raise RuntimeError(f"{subject} refused: {answer['error']}")
    return answer


async def consumer_floors(nc: Client, stream: str) -> list[Floor]:
    """Every consumer of `stream`, with its filter and acknowledgement floor."""
    floors: list[Floor] = []
    offset = 0
    while True:
        page = await _request(nc, f"$JS.API.CONSUMER.LIST.{stream}", {"offset": offset})
        consumers = page.get("consumers") or []
        assert isinstance(consumers, list)
        for info in consumers:
            config, floor = info.get("config", {}), info.get("ack_floor", {})
            # Several filters (`filter_subjects`) are taken as the whole stream: no purge beside it.
            subject = config.get("filter_subject") or ""
            floors.append(Floor(subject, int(floor.get("stream_seq", 0))))
        offset += len(consumers)
        total = page.get("total", 0)
        if not consumers or not isinstance(total, int) or offset >= total:
            return floors


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
        bounds = purgeable(await consumer_floors(self.nc, self.stream))
        removed = 0
        for subject, keep_from in bounds.items():
            if self._kept_from.get(subject) == keep_from:
                continue
            answer = await _request(
                self.nc, f"$JS.API.STREAM.PURGE.{self.stream}", {"filter": subject, "seq": keep_from}
            )
            self._kept_from[subject] = keep_from
            purged = answer.get("purged", 0)
            removed += purged if isinstance(purged, int) else 0
        if removed:
            log.debug("acknowledged work purged", extra={"stream": self.stream, "messages": removed})
        return removed
