"""The links a service behind the ledger and the bus opens first, the same for the router, the
verifier and the two senders: the ledger's gRPC channel, the NATS connection and its JetStream
with the streams ensured. Both are closed at stop after the service's own stop hooks, which
may still need them (hooks run most recent first)."""

from __future__ import annotations

from typing import NamedTuple

import grpc
from nats.aio.client import Client
from nats.js import JetStreamContext

from herald.bus.connection import close as close_bus
from herald.bus.connection import connect_with_retry
from herald.bus.streams import ensure_streams
from herald.grpcio.client import open_channel
from herald.grpcio.ledger import Ledger
from herald.service import ServiceRuntime

JETSTREAM_TIMEOUT_S = 5


class Links(NamedTuple):
    channel: grpc.aio.Channel
    ledger: Ledger
    nc: Client
    js: JetStreamContext


async def open_links(runtime: ServiceRuntime) -> Links:
    """The ledger channel and the bus (named after the service), closed when the service stops."""
    settings = runtime.settings
    channel = open_channel(settings.ledger_addr, runtime.mesh, "ledger")
    nc = await connect_with_retry(settings, runtime.name, runtime.stopping)
    js = nc.jetstream(timeout=JETSTREAM_TIMEOUT_S)
    await ensure_streams(js, settings)

    async def close() -> None:
        await close_bus(nc)
        await channel.close()

    runtime.on_stop(close)
    return Links(channel, Ledger.over(channel), nc, js)
