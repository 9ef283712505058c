"""Reading JetStream directly: what the streams of one bus prefix still hold."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import nats

from herald.config import nats_servers


@dataclass
class StreamState:
    name: str
    messages: int
    # Messages per subject (only subjects the caller asked about).
    subjects: dict[str, int] = field(default_factory=dict)
    # Per durable consumer: (unacknowledged, not yet delivered).
    consumers: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Per durable consumer: its pull requests waiting, and its messages delivered more than once
    # and not yet acknowledged: a message left unacknowledged with no pull waiting on its lane is
    # never redelivered, one with a pull waiting is kept in progress by a sender.
    pulls: dict[str, tuple[int, int]] = field(default_factory=dict)


def streams(nats_url: str, prefix: str, subjects_filter: str | None = None) -> list[StreamState]:
    """Every stream of the prefix, with per-subject counts under `subjects_filter`."""

    async def read() -> list[StreamState]:
        nc = await nats.connect(nats_servers(nats_url), connect_timeout=5, max_reconnect_attempts=1)
        try:
            js = nc.jetstream()
            found = []
            for info in await js.streams_info():
                name = info.config.name or ""
                if not name.startswith(prefix.upper() + "_"):
                    continue
                detail = await js.stream_info(name, subjects_filter=subjects_filter) if subjects_filter else info
                state = StreamState(name, detail.state.messages, dict(detail.state.subjects or {}))
                for consumer in await js.consumers_info(name):
                    state.consumers[consumer.name] = (consumer.num_ack_pending, consumer.num_pending)
                    state.pulls[consumer.name] = (consumer.num_waiting or 0, consumer.num_redelivered or 0)
                found.append(state)
            return found
        finally:
            await nc.close()

    return asyncio.run(read())
