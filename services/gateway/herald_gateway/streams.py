"""Depth and lag of Herald's JetStream streams, for operators (GET /admin/v1/streams).

Depth is what a stream holds; lag is what its consumers have not finished: messages not yet
delivered to them (`num_pending`) and delivered but not yet acknowledged (`num_ack_pending`),
summed over a stream's consumers (the work stream has one per class, priority and lane), and
the time of the oldest message still held, which on a work-queue stream is how long the
oldest piece of work has waited.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

log = logging.getLogger("herald.gateway.streams")


@dataclass(frozen=True)
class StreamReport:
    name: str
    messages: int
    bytes: int
    consumers: int
    pending: int
    ack_pending: int
    redelivered: int
    oldest_at: datetime | None


async def report(js: JetStreamContext, names: tuple[str, ...]) -> list[StreamReport]:
    """One report per stream that exists (a stream not created yet is left out)."""
    found = []
    for name in names:
        try:
            info = await js.stream_info(name)
        except NotFoundError:
            continue
        consumers = await js.consumers_info(name)
        oldest_at = None
        if info.state.messages:
            try:
                oldest_at = (await js.get_msg(name, info.state.first_seq)).time
            except NotFoundError:
                oldest_at = None  # taken between the two reads
        found.append(
            StreamReport(
                name=name,
                messages=info.state.messages,
                bytes=info.state.bytes,
                consumers=len(consumers),
                pending=sum(c.num_pending or 0 for c in consumers),
                ack_pending=sum(c.num_ack_pending or 0 for c in consumers),
                redelivered=sum(c.num_redelivered or 0 for c in consumers),
                oldest_at=oldest_at,
            )
        )
    return found
