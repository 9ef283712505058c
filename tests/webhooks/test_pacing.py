"""Target rate limits shared by sender replicas: two pacers (two replicas) on one real NATS KV
bucket never start more deliveries to a target than its limit allows, whatever the order they
ask in; other targets have schedules of their own. The clock is the test's."""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import AsyncIterator

import nats
import pytest
from herald_webhook_sender.pacing import Pacer
from nats.js.kv import KeyValue

from herald.config import nats_servers


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def bucket() -> AsyncIterator[KeyValue]:
    nc = await nats.connect(nats_servers(os.environ.get("NATS_URL", "nats://127.0.0.1:4222")))
    js = nc.jetstream()
    name = f"TEST_PACE_{uuid.uuid4().hex[:12].upper()}"
    kv = await js.create_key_value(bucket=name, history=1)
    try:
        yield kv
    finally:
        await js.delete_key_value(name)
        await nc.close()


async def test_two_replicas_share_one_schedule_per_target(bucket: KeyValue) -> None:
    clock = Clock()
    replicas = [Pacer(bucket, clock=clock, spread=lambda: 0.0), Pacer(bucket, clock=clock, spread=lambda: 0.0)]
    limit = 120  # per minute: one delivery every 0.5 s
    started: list[float] = []
    for tick in range(40):  # 10 s in steps of 0.25 s, both replicas asking twice each step
        clock.now = 1_000_000.0 + tick * 0.25
        for pacer in replicas + replicas:
            if await pacer.take("target-a", limit) == 0.0:
                started.append(clock.now)
    assert len(started) == 20, "exactly the limit's share of 10 s"
    assert all(b - a >= 0.5 for a, b in itertools.pairwise(started)), "never closer than 60/limit s"
    # Any 60/limit-spaced schedule holds at most `limit` starts in any 60 s window.
    window_s = 1.0
    assert max(sum(1 for t in started if s <= t < s + window_s) for s in started) <= limit * window_s / 60


async def test_a_held_back_delivery_is_told_how_long_to_wait(bucket: KeyValue) -> None:
    clock = Clock()
    pacer = Pacer(bucket, clock=clock, spread=lambda: 0.0)
    assert await pacer.take("target-b", 60) == 0.0
    clock.now += 0.25
    assert await pacer.take("target-b", 60) == pytest.approx(0.75)
    # Another target, and an unlimited one, are not held back by target-b.
    assert await pacer.take("target-c", 60) == 0.0
    assert await pacer.take("target-d", 0) == 0.0
    clock.now += 0.75
    assert await pacer.take("target-b", 60) == 0.0


async def test_without_the_shared_state_each_replica_paces_on_its_own() -> None:
    clock = Clock()
    pacer = Pacer(None, clock=clock, spread=lambda: 0.0)
    assert await pacer.take("target-e", 60) == 0.0
    assert await pacer.take("target-e", 60) == pytest.approx(1.0)


async def test_a_backlog_is_handed_back_spread_over_more_intervals() -> None:
    """Many held-back deliveries of one target come back spread out (not all after one
    interval, to be refused again), within a bounded horizon."""
    clock = Clock()
    pacer = Pacer(None, clock=clock, spread=lambda: 1.0)
    assert await pacer.take("target-f", 60) == 0.0
    delays = [await pacer.take("target-f", 60) for _ in range(100)]
    assert delays[0] == pytest.approx(2.0), "the first waits out the interval, spread over one more"
    assert delays == sorted(delays) and delays[-1] == pytest.approx(1.0 + 50), "capped at 50 intervals"
    clock.now += 120  # the backlog drained: no holds for a while
    assert await pacer.take("target-f", 60) == 0.0
    assert await pacer.take("target-f", 60) == pytest.approx(2.0)
