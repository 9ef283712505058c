"""Pipelined, de-duplicated publishing of work messages.

Every message carries the job id as `Nats-Msg-Id`, so publishing the same job
twice inside the stream's duplicate window stores it once: the outbox may
republish freely. Many publishes are in flight at once instead of one round trip
per job.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from nats.js import JetStreamContext

from herald.telemetry.propagation import inject_headers


@dataclass(frozen=True)
class OutgoingMessage:
    subject: str
    msg_id: str
    data: bytes
    headers: dict[str, str] | None = None


async def publish_all(
    js: JetStreamContext, messages: list[OutgoingMessage], ack_timeout: float = 2.0
) -> list[BaseException | None]:
    """Publishes concurrently; returns, per message, None when acknowledged or the error."""

    async def one(message: OutgoingMessage) -> None:
        headers = inject_headers({"Nats-Msg-Id": message.msg_id, **(message.headers or {})})
        await js.publish(message.subject, message.data, timeout=ack_timeout, headers=headers)

    results = await asyncio.gather(*(one(m) for m in messages), return_exceptions=True)
    return [r if isinstance(r, BaseException) else None for r in results]
