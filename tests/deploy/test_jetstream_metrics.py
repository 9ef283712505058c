"""The JetStream collector against a real JetStream (the machine's NATS when
NATS_URL is set or 127.0.0.1:4222 answers, else an embedded nats-server), on
streams of its own that it deletes afterwards."""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig
from prometheus_client import CollectorRegistry, generate_latest

from herald.bus.streams import ensure_streams, topology
from herald.config import Settings, nats_servers
from herald.telemetry.jetstream_metrics import JetStreamCollector

WORK_MESSAGES = 5
DEAD_LETTERS = 2


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("NATS_URL")
    if url:
        yield url
        return
    try:
        with socket.create_connection(("127.0.0.1", 4222), timeout=0.5):
            pass
        yield "nats://127.0.0.1:4222"
        return
    except OSError:
        pass
    from herald.cli.embedded import EmbeddedNats

    server = EmbeddedNats(tmp_path_factory.mktemp("jsm"))
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
async def bus(nats_url: str) -> AsyncIterator[tuple[Any, Settings]]:
    settings = Settings(bus_prefix=f"jsm{secrets.token_hex(4)}", consumer_max_ack_pending=1000)
    nc = await nats.connect(nats_servers(nats_url))
    js = nc.jetstream(timeout=5)
    try:
        await ensure_streams(js, settings)
        yield js, settings
    finally:
        names = topology(settings)
        for stream in (names.work_stream, names.dead_letter_stream):
            try:
                await js.delete_stream(stream)
            except Exception:
                pass
        await nc.close()


def values(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


async def add_work_consumer(js: Any, settings: Settings, durable: str, filter_tail: str) -> None:
    """A durable pull consumer like the senders' (explicit acks, filtered on work subjects)."""
    await js.add_consumer(
        topology(settings).work_stream,
        ConsumerConfig(
            durable_name=durable,
            ack_policy=AckPolicy.EXPLICIT,
            ack_wait=30,
            max_deliver=-1,
            filter_subject=f"{settings.bus_prefix}.work.{filter_tail}",
        ),
    )


async def test_depth_lag_in_flight_redeliveries_and_dead_letters(bus: tuple[Any, Settings]) -> None:
    js, settings = bus
    names = topology(settings)
    prefix = settings.bus_prefix
    # One fairness lane's consumer: <prefix>.work.<class>.<priority>.<lane>.<tenant>.
    consumer = "webhook-normal-3"
    await add_work_consumer(js, settings, consumer, "webhook.normal.3.>")
    for i in range(WORK_MESSAGES):
        await js.publish(f"{prefix}.work.webhook.normal.3.tenant{i}", b"x" * 100)
    for i in range(DEAD_LETTERS):
        await js.publish(f"{prefix}.dlq.webhook.tenant{i}", b"dead")

    collector = JetStreamCollector.for_settings(settings)
    registry = CollectorRegistry()
    registry.register(collector)
    work, dlq = names.work_stream, names.dead_letter_stream
    lane = {"stream": work, "consumer": consumer, "channel": "webhook", "priority": "normal"}

    await collector.refresh(js)
    assert values(registry, "herald_jetstream_up") == 1
    assert values(registry, "herald_stream_messages", stream=work) == WORK_MESSAGES
    assert values(registry, "herald_stream_messages", stream=dlq) == DEAD_LETTERS
    assert values(registry, "herald_stream_stored_messages_total", stream=work) == WORK_MESSAGES
    assert (values(registry, "herald_stream_bytes", stream=work) or 0) > WORK_MESSAGES * 100
    assert values(registry, "herald_dead_letter_messages") == DEAD_LETTERS
    assert values(registry, "herald_consumer_pending_messages", **lane) == WORK_MESSAGES
    assert values(registry, "herald_consumer_ack_pending_messages", **lane) == 0
    # Its limit, which the lane's every tenant shares: an operator compares the two.
    assert values(registry, "herald_consumer_max_ack_pending", **lane) == 1000

    # A sender takes two and holds them: they leave the lag and are in flight.
    subscription = await js.pull_subscribe_bind(consumer, stream=work)
    taken = await subscription.fetch(2, timeout=5)
    await collector.refresh(js)
    assert values(registry, "herald_consumer_pending_messages", **lane) == WORK_MESSAGES - 2
    assert values(registry, "herald_consumer_ack_pending_messages", **lane) == 2
    assert values(registry, "herald_consumer_redelivered_messages", **lane) == 0

    # One is handed back and delivered again (a redelivery); the sender now holds everything.
    await taken[0].nak()
    rest: list[Any] = []
    while len(rest) < WORK_MESSAGES - 1:
        rest += await subscription.fetch(WORK_MESSAGES - 1 - len(rest), timeout=5)
    assert sorted(m.metadata.num_delivered for m in rest) == [1] * (WORK_MESSAGES - 2) + [2]
    await collector.refresh(js)
    assert values(registry, "herald_consumer_pending_messages", **lane) == 0
    assert values(registry, "herald_consumer_ack_pending_messages", **lane) == WORK_MESSAGES
    assert values(registry, "herald_consumer_redelivered_messages", **lane) == 1

    # Acknowledged work leaves the work-queue stream; the stored total does not go down.
    for message in [taken[1], *rest[:2]]:
        await message.ack_sync()
    await collector.refresh(js)
    assert values(registry, "herald_consumer_ack_pending_messages", **lane) == 2
    assert values(registry, "herald_stream_messages", stream=work) == WORK_MESSAGES - 3
    assert values(registry, "herald_stream_stored_messages_total", stream=work) == WORK_MESSAGES

    text = generate_latest(registry).decode()
    exposed = f'channel="webhook",consumer="{consumer}",priority="normal",stream="{work}"'
    assert f"herald_consumer_ack_pending_messages{{{exposed}}} 2.0" in text
    assert "# TYPE herald_stream_stored_messages_total counter" in text


async def test_every_consumer_is_reported_with_its_channel_and_priority(bus: tuple[Any, Settings]) -> None:
    js, settings = bus
    names = topology(settings)
    await add_work_consumer(js, settings, "webhook-sender", "webhook.>")  # one consumer for a whole class
    await add_work_consumer(js, settings, "email-critical-0", "email.critical.0.>")
    await add_work_consumer(js, settings, "platform-email-low-15", "platform_email.low.15.>")
    # And one on the dead-letter stream (an operator's, say): no work class.
    await js.add_consumer(names.dead_letter_stream, ConsumerConfig(durable_name="inspector"))
    collector = JetStreamCollector.for_settings(settings)
    await collector.refresh(js)
    reported = {(c.stream, c.name, c.channel, c.priority) for c in collector.snapshot.consumers}
    assert reported == {
        (names.work_stream, "webhook-sender", "webhook", ""),
        (names.work_stream, "email-critical-0", "email", "critical"),
        (names.work_stream, "platform-email-low-15", "platform_email", "low"),
        (names.dead_letter_stream, "inspector", "", ""),
    }


async def test_more_consumers_than_one_listing_page(bus: tuple[Any, Settings]) -> None:
    """Fairness lanes multiply consumers (lanes x priorities x classes): all are read."""
    js, settings = bus
    many = 300  # one CONSUMER.LIST page holds 256
    await asyncio.gather(
        *(add_work_consumer(js, settings, f"webhook-low-{i}", f"webhook.low.{i}.>") for i in range(many))
    )
    collector = JetStreamCollector.for_settings(settings)
    await collector.refresh(js)
    assert len(collector.snapshot.consumers) == many


async def test_a_missing_stream_is_left_out(bus: tuple[Any, Settings]) -> None:
    js, settings = bus
    names = topology(settings)
    await js.delete_stream(names.dead_letter_stream)
    collector = JetStreamCollector.for_settings(settings)
    registry = CollectorRegistry()
    registry.register(collector)
    await collector.refresh(js)
    assert values(registry, "herald_jetstream_up") == 1
    assert values(registry, "herald_stream_messages", stream=names.work_stream) == 0
    assert values(registry, "herald_stream_messages", stream=names.dead_letter_stream) is None
    assert values(registry, "herald_dead_letter_messages") is None


async def test_an_unreadable_bus_exports_up_zero_and_no_stale_numbers(nats_url: str) -> None:
    settings = Settings(bus_prefix=f"jsm{secrets.token_hex(4)}")
    nc = await nats.connect(nats_servers(nats_url))
    js = nc.jetstream(timeout=5)
    await ensure_streams(js, settings)
    collector = JetStreamCollector.for_settings(settings)
    registry = CollectorRegistry()
    registry.register(collector)
    try:
        await collector.refresh(js)
        first_success = values(registry, "herald_jetstream_last_success_timestamp_seconds")
        assert values(registry, "herald_jetstream_up") == 1 and first_success
    finally:
        names = topology(settings)
        for stream in (names.work_stream, names.dead_letter_stream):
            await js.delete_stream(stream)
        await nc.close()
    await collector.refresh(js)  # the connection is closed now
    assert values(registry, "herald_jetstream_up") == 0
    assert values(registry, "herald_stream_messages", stream=topology(settings).work_stream) is None
    assert values(registry, "herald_jetstream_last_success_timestamp_seconds") == first_success


async def test_the_loop_refreshes_until_stopping(bus: tuple[Any, Settings]) -> None:
    js, settings = bus
    collector = JetStreamCollector.for_settings(settings, interval_s=0.05)
    stopping = asyncio.Event()
    task = asyncio.create_task(collector.run(js, stopping))
    for _ in range(100):
        await asyncio.sleep(0.02)
        if collector.snapshot.up:
            break
    first = collector.snapshot.last_success
    await asyncio.sleep(0.2)
    assert collector.snapshot.last_success > first
    stopping.set()
    await asyncio.wait_for(task, timeout=2)


def test_families_are_described_without_reading_the_bus(tmp_path: Path) -> None:
    """Registering must not need a connection (the router registers before its loop runs)."""
    collector = JetStreamCollector(streams=["A_WORK", "A_DLQ"], dead_letter_stream="A_DLQ")
    registry = CollectorRegistry()
    registry.register(collector)
    names = {family.name for family in collector.describe()}
    assert "herald_consumer_pending_messages" in names and "herald_dead_letter_messages" in names
    text = generate_latest(registry).decode()
    assert "herald_jetstream_up 0.0" in text
