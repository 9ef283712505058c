"""The rate limiter at high limits: two replicas (two limiters, each on its own NATS
connection, sharing one real KV bucket as two gateways do) stay exact, and what one
request costs in KV operations does not grow with the limit.

These run the limiter in-process rather than through two gateways because a 100,000/min
limit takes 100,000 requests to reach; tests/test_admission.py covers the same limiter
behind two real gateway replicas at 200/min."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import nats
import pytest
from herald_gateway.rate_limit import RateLimiter

Replicas = tuple[RateLimiter, RateLimiter]


@pytest.fixture
async def replicas(infra: dict[str, str]) -> AsyncIterator[Replicas]:
    bucket = f"{infra['bus_prefix']}_RATE_LEASES_{secrets.token_hex(3)}".upper()
    connections = [await nats.connect(infra["nats_url"]) for _ in range(2)]
    await connections[0].jetstream().create_key_value(bucket=bucket, history=1, ttl=120)
    limiters = (RateLimiter(fail_open=False), RateLimiter(fail_open=False))
    for limiter, nc in zip(limiters, connections, strict=True):
        limiter.kv = await nc.jetstream().key_value(bucket)
    yield limiters
    await connections[0].jetstream().delete_key_value(bucket)
    for nc in connections:
        await nc.close()


async def send(replicas: Replicas, tenant: str, limit: int, requests: int, concurrency: int = 32) -> int:
    """Sends `requests` requests alternately through the two replicas; how many were admitted."""
    admitted = 0

    async def one(i: int) -> None:
        nonlocal admitted
        state = await replicas[i % 2].consume(tenant, limit)
        admitted += state.allowed

    for start in range(0, requests, concurrency):
        await asyncio.gather(*(one(i) for i in range(start, min(start + concurrency, requests))))
    return admitted


def kv_ops(replicas: Replicas) -> int:
    return sum(limiter.kv_ops for limiter in replicas)


async def test_two_replicas_are_exact_at_a_hundred_thousand_per_minute(replicas: Replicas) -> None:
    admitted = await send(replicas, "tenant-100k", 100_000, 100_300)
    assert admitted == 100_000
    state = await replicas[1].consume("tenant-100k", 100_000)
    assert not state.allowed and state.remaining == 0 and state.retry_after_s >= 1


async def test_one_request_costs_no_more_kv_operations_at_a_million_than_at_two_hundred(replicas: Replicas) -> None:
    costs = {}
    for limit in (200, 1_000_000):
        before = kv_ops(replicas)
        admitted = await send(replicas, f"tenant-{limit}", limit, 300)
        assert admitted == min(limit, 300)
        costs[limit] = (kv_ops(replicas) - before) / 300
    # Amortised, a request costs at most one KV read and one compare-and-set (the old limiter's
    # price at every limit), and at a million per minute no more than at two hundred.
    assert costs[1_000_000] <= costs[200] <= 2, costs
    # The shared state is the same size whatever the limit.
    sizes = {len((await replicas[0].kv.get(f"tenant-{limit}")).value or b"") for limit in (200, 1_000_000)}  # type: ignore[union-attr]
    assert len(sizes) == 1, sizes


async def test_a_stream_chunk_gets_all_the_room_there_is_not_only_what_is_leased(replicas: Replicas) -> None:
    first = await replicas[0].consume("tenant-stream", 100)
    assert first.allowed
    # The replica holds a slice of the window now; a chunk of 50 items needs more than the slice.
    chunk = await replicas[0].consume("tenant-stream", 100, count=50, partial=True)
    assert chunk.granted == 50
    # Each replica gets what the window has, less what the other holds (until it spends it or its
    # second ends); all together, exactly the limit.
    granted = [1, 50]
    for replica in (replicas[1], replicas[0], replicas[1]):
        granted.append((await replica.consume("tenant-stream", 100, count=80, partial=True)).granted)
    assert sum(granted) == 100, granted
    assert not (await replicas[0].consume("tenant-stream", 100)).allowed


async def test_a_replica_that_alone_writes_a_window_takes_each_lease_with_one_compare_and_set(
    replicas: Replicas,
) -> None:
    # A limit of 8 leases nothing beyond the request itself (an eighth of the room is under one), so
    # every request goes to the window: the cost of taking a lease, request by request.
    alone, other = replicas

    async def cost(replica: RateLimiter) -> int:
        before = replica.kv_ops
        assert (await replica.consume("tenant-lone", 8)).allowed
        return replica.kv_ops - before

    # The first: a read (nothing there yet) and the write that creates the window.
    assert await cost(alone) == 2
    # Then the window as this replica wrote it: the compare-and-set alone.
    assert [await cost(alone), await cost(alone)] == [1, 1]
    # Another replica writes it: this one's compare-and-set fails once, it reads and writes; from then
    # on it reads first (a read and a compare-and-set). The other learns the same way; all stays exact.
    assert await cost(other) == 2
    assert [await cost(alone), await cost(alone)] == [3, 2]
    assert await cost(other) == 3
    # Seven admitted so far: one more, then the window is full for both.
    assert [(await alone.consume("tenant-lone", 8)).allowed for _ in range(2)] == [True, False]
    assert not (await other.consume("tenant-lone", 8)).allowed
