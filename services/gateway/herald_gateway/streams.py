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
            # The raw answer: it carries the oldest message's time (`first_ts`), which nats-py's
            # StreamInfo leaves out. Reading the message itself for its time would need the
            # right to read the work stream, which the gateway is not given (herald.bus.permissions).
            state = (await js._api_request(f"{js._prefix}.STREAM.INFO.{name}", b"", timeout=js._timeout))["state"]
        except NotFoundError:
            continue
        consumers = await js.consumers_info(name)
        found.append(
            StreamReport(
                name=name,
                messages=state["messages"],
                bytes=state["bytes"],
                consumers=len(consumers),
                pending=sum(c.num_pending or 0 for c in consumers),
                ack_pending=sum(c.num_ack_pending or 0 for c in consumers),
                redelivered=sum(c.num_redelivered or 0 for c in consumers),
                oldest_at=_timestamp(state.get("first_ts", "")) if state["messages"] else None,
            )
        )
    return found


def _timestamp(value: str) -> datetime | None:
    """JetStream's RFC 3339 time, nanoseconds and all, as a UTC datetime (None for none)."""
    if not value or value.startswith("0001-"):
        return None
    whole, _, fraction = value.removesuffix("Z").partition(".")
    return datetime.fromisoformat(f"{whole}.{(fraction + '000000')[:6]}+00:00")
