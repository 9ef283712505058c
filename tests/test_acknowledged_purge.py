"""A work stream of limits retention (HERALD_STREAM_RETENTION=limits) keeps acknowledged
messages until the ledger's purge (herald.bus.acknowledged) removes, subject by subject, what
every consumer reading that subject acknowledged: never a message a consumer still holds or has
not read, and a message waiting out a retry holds back only its own lane."""

from __future__ import annotations

import asyncio
import contextlib

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, RawStreamMsg, RetentionPolicy, StreamConfig
from nats.js.errors import NotFoundError

from herald.bus.acknowledged import AcknowledgedPurge, overlaps
from herald.bus.streams import ensure_stream
from herald.config import nats_servers


@pytest.mark.parametrize(
    ("a", "b", "meet"),
    [
        ("w.webhook.normal.3.>", "w.webhook.normal.3.>", True),
        ("w.webhook.normal.3.>", "w.webhook.normal.4.>", False),
        ("w.webhook.normal.3.>", "w.webhook.*.3.t1", True),
        ("w.webhook.normal.3.t1", "w.webhook.normal.3", False),
        ("w.>", "w.email.low.0.t2", True),
        ("", "w.email.low.0.t2", True),
    ],
)
def test_filters_overlap_when_one_subject_can_match_both(a: str, b: str, meet: bool) -> None:
    assert overlaps(a, b) is meet and overlaps(b, a) is meet


def test_the_purge_removes_only_what_every_reader_acknowledged(infra: dict[str, str]) -> None:
    stream = f"{infra['bus_prefix']}_ACKNOWLEDGED".upper().replace(".", "_").replace("-", "_")
    base = f"{infra['bus_prefix']}.acknowledged"

    async def scenario() -> dict[str, list[bytes | None]]:
        nc = await nats.connect(nats_servers(infra["nats_url"]))
        try:
            js = nc.jetstream(timeout=5)
            await ensure_stream(js, StreamConfig(name=stream, subjects=[f"{base}.>"], retention=RetentionPolicy.LIMITS))
            for lane in ("0", "1"):
                await js.add_consumer(
                    stream,
                    ConsumerConfig(
                        durable_name=f"lane-{lane}", ack_policy=AckPolicy.EXPLICIT, filter_subject=f"{base}.{lane}.>"
                    ),
                )
            for n in range(6):
                await js.publish(f"{base}.{n % 2}.tenant", f"{n % 2}:{n}".encode())
            purge = AcknowledgedPurge(stream)
            purge.nc = nc
            # Lane 0 acknowledges its first two and NAKs its third with a delay (a retry's
            # backoff); lane 1 reads all three and acknowledges the last one only.
            zero = await js.pull_subscribe_bind("lane-0", stream)
            first, second, third = await zero.fetch(3, timeout=5)
            await first.ack_sync()
            await second.ack_sync()
            await third.nak(delay=60)
            one = await js.pull_subscribe_bind("lane-1", stream)
            *unsettled, last = await one.fetch(3, timeout=5)
            await last.ack_sync()
            assert await purge.purge() == 2
            kept = [m.data for m in await read_all(js, stream)]
            # Lane 1's first two are acknowledged, then its last: everything goes.
            for message in unsettled:
                await message.ack_sync()
            assert await purge.purge() == 3
            assert await purge.purge() == 0, "nothing moved, nothing sent"
            left = [m.data for m in await read_all(js, stream)]
            return {"kept": kept, "left": left}
        finally:
            await js.delete_stream(stream)
            await nc.close()

    found = asyncio.run(scenario())
    assert found["kept"] == [b"1:1", b"1:3", b"0:4", b"1:5"]
    assert found["left"] == [b"0:4"], "the message waiting out its retry stays"


async def read_all(js: JetStreamContext, stream: str) -> list[RawStreamMsg]:
    """The stream's messages, in order, read by sequence (no consumer: one would hold purges back)."""
    info = await js.stream_info(stream)
    found = []
    for sequence in range(info.state.first_seq, info.state.last_seq + 1):
        with contextlib.suppress(NotFoundError):
            found.append(await js.get_msg(stream, sequence))
    return found


def test_a_stream_keeps_the_retention_jetstream_cannot_change(infra: dict[str, str]) -> None:
    """An existing work queue configured to limits (or back) starts as it is, not refused."""
    stream = f"{infra['bus_prefix']}_KEPT".upper().replace(".", "_").replace("-", "_")
    subjects = [f"{infra['bus_prefix']}.kept.>"]

    async def scenario() -> tuple[RetentionPolicy | None, float | None]:
        nc = await nats.connect(nats_servers(infra["nats_url"]))
        js = nc.jetstream(timeout=5)
        try:
            await ensure_stream(js, StreamConfig(name=stream, subjects=subjects, retention=RetentionPolicy.WORK_QUEUE))
            await ensure_stream(
                js, StreamConfig(name=stream, subjects=subjects, retention=RetentionPolicy.LIMITS, max_age=60)
            )
            info = await js.stream_info(stream)
            return info.config.retention, info.config.max_age
        finally:
            await js.delete_stream(stream)
            await nc.close()

    assert asyncio.run(scenario()) == (RetentionPolicy.WORK_QUEUE, 60), "the retention kept, the rest updated"
