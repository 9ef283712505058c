"""CPU per JetStream publish in one process: nats-py's publish_async against Herald's AckPipeline.

Usage: NATS_URL=nats://127.0.0.1:4222 python bench/publish_cost.py [ROUNDS] [MESSAGES]

Publishes MESSAGES work-sized messages (300 bytes, a Nats-Msg-Id and a traceparent header each) in
batches of 500, every batch's acks awaited together as the ledger does inside its transaction, to a
throw-away file stream; rounds alternate between the two publishers. Prints the publisher process's
CPU (process_time) and wall time per message: the CPU is what the ledger pays per job for its
publish, the wall time is how long the batch holds its transaction open.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid

import nats
import uvloop
from nats.aio.client import Client
from nats.js import JetStreamContext

from herald.bus.publisher import AckPipeline, OutgoingMessage

BATCH = 500
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


async def with_publish_async(js: JetStreamContext, messages: list[OutgoingMessage]) -> None:
    futures = [
        await js.publish_async(m.subject, m.data, headers={"Nats-Msg-Id": m.msg_id, **(m.headers or {})})
        for m in messages
    ]
    await asyncio.gather(*futures)


async def with_pipeline(pipeline: AckPipeline, messages: list[OutgoingMessage]) -> None:
    errors = [e for e in await pipeline.publish(messages) if e is not None]
    assert not errors, errors[:3]


async def main(rounds: int, count: int) -> None:
    nc: Client = await nats.connect(os.environ.get("NATS_URL", "nats://127.0.0.1:4222"))
    js = nc.jetstream()
    stream = "PUBCOST" + uuid.uuid4().hex[:8].upper()
    await js.add_stream(name=stream, subjects=[f"pubcost.{stream}.>"])
    pipeline = AckPipeline(nc)
    try:
        for round_ in range(rounds):
            for name in ("publish_async", "AckPipeline"):
                messages = [
                    OutgoingMessage(
                        f"pubcost.{stream}.w.{i % 4}", str(uuid.uuid4()), b"x" * 300, {"traceparent": TRACEPARENT}
                    )
                    for i in range(count)
                ]
                cpu, wall = time.process_time(), time.perf_counter()
                for start in range(0, count, BATCH):
                    batch = messages[start : start + BATCH]
                    if name == "publish_async":
                        await with_publish_async(js, batch)
                    else:
                        await with_pipeline(pipeline, batch)
                cpu_us = (time.process_time() - cpu) / count * 1e6
                wall_us = (time.perf_counter() - wall) / count * 1e6
                print(f"round {round_ + 1} {name:14} {cpu_us:6.1f} us CPU/msg  {wall_us:7.1f} us wall/msg")
    finally:
        await js.delete_stream(stream)
        await nc.close()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, int(sys.argv[2]) if len(sys.argv) > 2 else 4000))
