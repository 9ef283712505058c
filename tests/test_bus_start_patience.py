"""A service that starts while JetStream does not answer yet (its server restarting, a cluster
electing a leader) finishes its start once JetStream is back, instead of exiting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
from nats.js.api import ConsumerConfig, StreamConfig

from herald.bus.streams import ensure_consumer
from herald.cli.embedded import EmbeddedNats, free_port


def test_a_consumer_ensured_while_the_server_is_down_is_made_when_it_returns(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path, port=free_port())
    url = server.start()

    async def scenario() -> list[str]:
        nc = await nats.connect(url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
        try:
            js = nc.jetstream(timeout=2)
            await js.add_stream(StreamConfig(name="PATIENCE", subjects=["patience.>"]))
            server.kill()
            starting = asyncio.create_task(
                ensure_consumer(js, "PATIENCE", ConsumerConfig(durable_name="late", filter_subject="patience.>"))
            )
            await asyncio.sleep(3)
            assert not starting.done(), "the start gave up while the server was away"
            await asyncio.to_thread(server.start)
            await asyncio.wait_for(starting, timeout=30)
            return [c.name for c in await js.consumers_info("PATIENCE")]
        finally:
            await nc.close()

    try:
        assert asyncio.run(scenario()) == ["late"]
    finally:
        server.stop()
