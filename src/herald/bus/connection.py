"""Connecting to NATS so that an outage is ridden out, not fatal: the client
reconnects forever and callers see publish errors they can handle."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import nats
from nats.aio.client import Client

log = logging.getLogger("herald.bus")


async def connect(url: str, name: str) -> Client:
    async def on_disconnect() -> None:
        log.warning("bus disconnected", extra={"client": name})

    async def on_reconnect() -> None:
        log.info("bus reconnected", extra={"client": name})

    async def on_error(error: Exception) -> None:
        log.warning("bus error", extra={"client": name, "error": str(error)})

    return await nats.connect(
        url,
        name=name,
        allow_reconnect=True,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        connect_timeout=2,
        disconnected_cb=on_disconnect,
        reconnected_cb=on_reconnect,
        error_cb=on_error,
        # Publishes made while disconnected are refused at once instead of
        # buffered in memory, so the outbox (not RAM) holds them.
        pending_size=0,
    )


async def connect_with_retry(url: str, name: str, stopping: asyncio.Event) -> Client:
    """Waits for the bus at start (it may come up after us, as in Kubernetes)."""
    delay = 0.5
    while True:
        try:
            return await connect(url, name)
        except Exception as error:
            if stopping.is_set():
                raise
            log.warning("bus unreachable at start; retrying", extra={"error": repr(error), "delay_s": delay})
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)


async def close(nc: Client) -> None:
    """Flushes what was published (acks included) and closes. Not `drain()`: with
    pull subscriptions it can wait on an internal queue that never empties, and by
    the time this runs the service's loops have finished their messages."""
    with contextlib.suppress(Exception):
        await nc.flush(timeout=2)
    await nc.close()
