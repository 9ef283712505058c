"""The batcher behind every coalesced hop: group commit under load, limits kept."""

from __future__ import annotations

import asyncio

from herald.batching import Batcher


async def test_items_arriving_during_a_flush_go_out_together_in_the_next() -> None:
    release = asyncio.Event()
    batches: list[list[int]] = []

    async def flush(items: list[int]) -> list[int]:
        batches.append(items)
        if len(batches) == 1:
            await release.wait()
        return [i * 10 for i in items]

    batcher: Batcher[int, int] = Batcher(flush, max_items=100, max_concurrent=1)
    first = asyncio.create_task(batcher.submit(0))
    while not batches:
        await asyncio.sleep(0.001)
    rest = [asyncio.create_task(batcher.submit(i)) for i in range(1, 41)]
    await asyncio.sleep(0.02)  # many turns of the loop pass while the first flush runs
    assert len(batches) == 1
    release.set()
    assert await first == 0
    assert [await t for t in rest] == [i * 10 for i in range(1, 41)]
    assert batches == [[0], list(range(1, 41))]


async def test_a_waiting_backlog_is_cut_by_count_and_bytes() -> None:
    release = asyncio.Event()
    batches: list[list[bytes]] = []

    async def flush(items: list[bytes]) -> list[int]:
        batches.append(items)
        await release.wait()
        return [len(i) for i in items]

    batcher: Batcher[bytes, int] = Batcher(flush, max_items=3, size_of=len, max_bytes=10, max_concurrent=1)
    tasks = [asyncio.create_task(batcher.submit(b"x" * n)) for n in (1, 2, 3, 4, 4, 9, 1, 1)]
    await asyncio.sleep(0.01)
    release.set()
    assert [await t for t in tasks] == [1, 2, 3, 4, 4, 9, 1, 1]
    assert all(len(b) <= 3 and (len(b) == 1 or sum(map(len, b)) <= 10) for b in batches)
    assert [item for b in batches for item in b] == [b"x" * n for n in (1, 2, 3, 4, 4, 9, 1, 1)]


async def test_drain_flushes_a_backlog_bigger_than_one_batch() -> None:
    seen: list[int] = []

    async def flush(items: list[int]) -> list[None]:
        seen.extend(items)
        return [None] * len(items)

    batcher: Batcher[int, None] = Batcher(flush, max_items=2, max_concurrent=1)
    tasks = [asyncio.create_task(batcher.submit(i)) for i in range(5)]
    await asyncio.sleep(0)
    await batcher.drain()
    await asyncio.gather(*tasks)
    assert sorted(seen) == list(range(5))


async def test_a_lone_item_goes_out_at_once_and_items_of_one_turn_together() -> None:
    """Nothing in flight: what was submitted goes out at the next turn of the loop, without
    waiting for company (so a light load pays no gathering delay); the items submitted in the
    same turn share that call."""
    batches: list[list[int]] = []

    async def flush(items: list[int]) -> list[int]:
        batches.append(items)
        return items

    batcher: Batcher[int, int] = Batcher(flush, max_items=100)
    together = [asyncio.create_task(batcher.submit(i)) for i in range(3)]
    assert [await t for t in together] == [0, 1, 2]
    alone = asyncio.create_task(batcher.submit(3))
    for _ in range(3):  # a few turns of the loop, no timer: the lone item is already out
        await asyncio.sleep(0)
    assert batches == [[0, 1, 2], [3]]
    assert await alone == 3
