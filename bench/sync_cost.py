"""What `sync_interval: always` costs JetStream per message: the wall time of pipelined publishes
and of work-queue acknowledgements, on two private nats-servers, one at `always` and one at
JetStream's default (a sync every 2 minutes), in one invocation.

Usage: python bench/sync_cost.py [MESSAGES]

Per server: MESSAGES work-sized messages (600 bytes) published in batches of 1, 100 and 500,
each batch's acks awaited together (Herald's AckPipeline); then the same number fetched from a
work-queue stream and acknowledged with `ack_sync` (each acknowledgement removes its message),
and from a limits stream (nothing removed). Prints microseconds of wall time per message.
At `always` the server syncs each stored message, and each removed one, before it answers:
one after the other per stream, so a batch costs the sum of its syncs (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import nats
from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy, StreamConfig

from herald.bus.publisher import AckPipeline, OutgoingMessage
from herald.cli.embedded.nats import EmbeddedNats

BODY = b"x" * 600


async def measure(url: str, count: int) -> dict[str, float]:
    nc = await nats.connect(url)
    js = nc.jetstream()
    pipeline = AckPipeline(nc)
    figures: dict[str, float] = {}
    sequence = 0
    for retention in (RetentionPolicy.WORK_QUEUE, RetentionPolicy.LIMITS):
        await js.add_stream(StreamConfig(name="SYNC", subjects=["sync.>"], retention=retention))
        if retention == RetentionPolicy.WORK_QUEUE:
            for batch in (1, 100, 500):
                started = time.perf_counter()
                for first in range(0, count, batch):
                    messages = [
                        OutgoingMessage(f"sync.{sequence + i}", f"m{sequence + i}", BODY)
                        for i in range(min(batch, count - first))
                    ]
                    sequence += len(messages)
                    errors = [e for e in await pipeline.publish(messages, ack_timeout=30) if e is not None]
                    assert not errors, errors[:3]
                figures[f"publish, batches of {batch}"] = (time.perf_counter() - started) / count * 1e6
        else:
            messages = [OutgoingMessage(f"sync.{sequence + i}", f"m{sequence + i}", BODY) for i in range(count)]
            sequence += count
            for first in range(0, count, 500):
                await pipeline.publish(messages[first : first + 500], ack_timeout=30)
        held = count * 3 if retention == RetentionPolicy.WORK_QUEUE else count
        pull = await js.pull_subscribe("sync.>", durable="c", config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT))
        started, taken = time.perf_counter(), 0
        while taken < held:
            fetched = await pull.fetch(100, timeout=5)
            await asyncio.gather(*(m.ack_sync() for m in fetched))
            taken += len(fetched)
        name = "work queue (removes)" if retention == RetentionPolicy.WORK_QUEUE else "limits (keeps)"
        figures[f"fetch + ack, {name}"] = (time.perf_counter() - started) / held * 1e6
        await js.delete_stream("SYNC")
    await nc.close()
    return figures


async def main(count: int) -> None:
    results: dict[str, dict[str, float]] = {}
    for sync in ("always", ""):
        server = EmbeddedNats(Path(tempfile.mkdtemp(prefix="sync-cost-")), sync_interval=sync)
        url = server.start()
        try:
            results[sync or "default (2m)"] = await measure(url, count)
        finally:
            server.stop()
    names = list(next(iter(results.values())))
    print(f"{'µs of wall time per message':34}" + "".join(f"{k:>16}" for k in results))
    for name in names:
        print(f"{name:34}" + "".join(f"{results[k][name]:>16.0f}" for k in results))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
