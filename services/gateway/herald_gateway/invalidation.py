"""Listens for the ledger's change notifications and evicts what they name."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import orjson
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from herald.bus.connection import close, connect_with_retry
from herald.bus.streams import keep_replicated
from herald.bus.subjects import Subjects
from herald.config import Settings
from herald.plans import RATE_WINDOW_S
from herald_gateway import streams
from herald_gateway.auth import ApiKeyAuthenticator
from herald_gateway.rate_limit import RateLimiter
from herald_gateway.streams import StreamReport

log = logging.getLogger("herald.gateway.invalidation")


@dataclass
class Bus:
    """The gateway's JetStream context once connected (operators read dead letters through it)."""

    js: JetStreamContext | None = None
    dead_letter_stream: str = ""

    # The streams operators read depth and lag of (GET /admin/v1/streams).
    streams: tuple[str, ...] = ()

    async def stream_reports(self) -> list[StreamReport] | None:
        """None until the gateway's bus connection is up."""
        if self.js is None:
            return None
        return await streams.report(self.js, self.streams)

    async def read_dead_letter(self, sequence: int) -> bytes | None:
        if self.js is None:
            return None
        try:
            stored = await self.js.get_msg(self.dead_letter_stream, sequence)
        except Exception as error:
            log.info("dead-letter entry not readable", extra={"sequence": sequence, "error": repr(error)})
            return None
        data: bytes | None = stored.data
        return data


async def follow_changes(
    settings: Settings,
    subjects: Subjects,
    tenants: ApiKeyAuthenticator,
    limiter: RateLimiter,
    rate_bucket: str,
    stopping: asyncio.Event,
    bus: Bus | None = None,
) -> None:
    """The gateway's bus connection: change notifications in, rate-limit state shared."""
    nc = await connect_with_retry(settings, "gateway", stopping)
    js = nc.jetstream(timeout=2)
    if bus is not None:
        bus.js = js
    try:
        limiter.kv = await js.key_value(rate_bucket)
        await keep_replicated(js, f"KV_{rate_bucket}", settings.stream_replicas)
    except Exception:
        limiter.kv = await js.create_key_value(
            bucket=rate_bucket, history=1, ttl=2 * RATE_WINDOW_S, replicas=settings.stream_replicas
        )

    async def on_key(message: Msg) -> None:
        fields = orjson.loads(message.data)
        tenants.forget_key(str(fields.get("key_id", "")))

    async def on_tenant(message: Msg) -> None:
        fields = orjson.loads(message.data)
        tenant_id = str(fields.get("tenant_id", ""))
        if fields.get("erased"):  # herald_ledger.rpc.erasure
            tenants.forget_erased(tenant_id)
            limiter.forget(tenant_id)
        else:
            tenants.forget_tenant(tenant_id)

    await nc.subscribe(subjects.control("apikeys"), cb=on_key)
    await nc.subscribe(subjects.control("tenants"), cb=on_tenant)
    log.info("following key and tenant changes")
    try:
        await stopping.wait()
    finally:
        await close(nc)


async def flush_uses_periodically(tenants: ApiKeyAuthenticator, interval_s: float, stopping: asyncio.Event) -> None:
    while not stopping.is_set():
        try:
            await asyncio.wait_for(stopping.wait(), timeout=interval_s)
        except TimeoutError:
            pass
        await tenants.flush_uses()
