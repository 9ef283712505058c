"""A sender whose process stalls past AckWait gets the message it is working on a second time from
JetStream; the fetcher must not hand that copy out beside the first (the same attempt would be made
twice: seen in CI as four timeout attempts recorded for a job allowed three). It holds the copy back
and hands it to whoever settles the first, to be settled the same way: after a bus restart the server
may know only the copy's delivery, and a verdict on the first alone left the message pending (seen in
the fault test: a work message of an ended job left on the stream)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nats

from herald.bus.fair import FairFetcher
from herald.bus.streams import ensure_streams
from herald.bus.subjects import WorkClass
from herald.cli.embedded import EmbeddedNats
from herald.config import Settings
from herald.v1 import common_pb2

ACK_WAIT_S = 1.0


def test_a_copy_redelivered_while_the_first_is_in_hand_is_settled_with_it_not_handed_out(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path)
    url = server.start()
    settings = Settings(bus_prefix="stall", fairness_lanes=1)

    async def scenario() -> tuple[bytes, bool, list[int], bool]:
        nc = await nats.connect(url)
        fetcher: FairFetcher | None = None
        try:
            js = nc.jetstream(timeout=5)
            await ensure_streams(js, settings)
            subject = settings.subjects().work(WorkClass.WEBHOOK, common_pb2.PRIORITY_NORMAL, "tenant-a")
            await js.publish(subject, b"job-1")
            fetcher = FairFetcher(js, settings, WorkClass.WEBHOOK, ack_wait_s=ACK_WAIT_S, pull_timeout_s=0.5)
            await fetcher.start()
            first = await asyncio.wait_for(fetcher.next(), timeout=10)
            # The whole process stalls (no keep-alive runs) for longer than AckWait: the server
            # sends the message again, and the fetcher's pull takes the copy once the loop runs.
            time.sleep(ACK_WAIT_S * 2.5)
            try:
                await asyncio.wait_for(fetcher.next(), timeout=ACK_WAIT_S * 3)
                copy_handed_out = True
            except TimeoutError:
                copy_handed_out = False
            # Settling the first hands over the copy, to be settled with it: nothing comes back.
            copies = fetcher.settled(first)
            for delivery in (first, *copies):
                await delivery.ack()
            copy_deliveries = [c.metadata.num_delivered for c in copies]
            try:
                await asyncio.wait_for(fetcher.next(), timeout=ACK_WAIT_S * 3)
                came_back = True
            except TimeoutError:
                came_back = False
            return first.data, copy_handed_out, copy_deliveries, came_back
        finally:
            if fetcher is not None:
                await fetcher.stop()
                await fetcher.close()
            await nc.close()

    try:
        data, copy_handed_out, copy_deliveries, came_back = asyncio.run(scenario())
    finally:
        server.stop()
    assert data == b"job-1"
    assert not copy_handed_out, "the redelivered copy was handed out while its first copy was in hand"
    assert copy_deliveries == [2], "the copy was not handed over with the first"
    assert not came_back, "the message came back after its first copy was acknowledged"
