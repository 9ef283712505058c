"""Coalescing many concurrent calls into one, without waiting for company.

A caller submits one item and awaits its own result. When no call is in flight, what was
submitted goes out at the next turn of the event loop (so the items of requests handled in the
same turn share it, and a lone item waits for nothing else); while `max_concurrent` calls are in
flight, what arrives waits and goes out together as soon as one finishes (group commit). So a
light load pays one round trip per item and no gathering delay, and a heavy one gets batches as
large as a call's duration gathers: the batch grows with the load, not with a timer. A fixed wait
would cost every job at light load what it saves at heavy load, where the in-flight call gathers
as much (measured: docs/performance.md, the open loop at 200 requests/s).

`max_concurrent` (1 unless a caller measured better) bounds the flushes running at once: without
the bound a saturated process would start a small flush per turn and the calls would queue behind
each other (and behind row locks) instead of growing: profiled at about six jobs per ledger
transaction under full load before the bound, the whole window after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class Batcher(Generic[Item, Result]):
    def __init__(
        self,
        flush: Callable[[list[Item]], Awaitable[Sequence[Result]]],
        max_items: int = 500,
        size_of: Callable[[Item], int] | None = None,
        max_bytes: int = 8 * 1024 * 1024,
        max_concurrent: int = 1,
    ) -> None:
        """With `size_of`, a batch is also flushed before it would exceed `max_bytes`, so a
        few large items (multi-MB webhook bodies) never make one message over a transport's limit."""
        self._flush = flush
        self._max_items = max_items
        self._size_of = size_of
        self._max_bytes = max_bytes
        self._max_concurrent = max_concurrent
        self._pending_bytes = 0
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        # The flush due at the next turn of the loop (items of the same turn go out together).
        self._due: asyncio.Handle | None = None
        self._in_flight: set[asyncio.Task[None]] = set()

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        if self._size_of is not None:
            size = self._size_of(item)
            if self._pending and self._pending_bytes + size > self._max_bytes:
                self._start_flush()
            self._pending_bytes += size
        self._pending.append((item, future))
        if len(self._pending) >= self._max_items or (
            self._size_of is not None and self._pending_bytes >= self._max_bytes
        ):
            self._start_flush()
        elif self._due is None and len(self._in_flight) < self._max_concurrent:
            self._due = asyncio.get_running_loop().call_soon(self._start_flush)
        return await future

    def _start_flush(self, force: bool = False) -> None:
        if self._due is not None:
            self._due.cancel()
            self._due = None
        if not self._pending:
            return
        if not force and len(self._in_flight) >= self._max_concurrent:
            return  # the next flush to finish starts this one, with whatever joined meanwhile
        batch, self._pending = self._take()
        task = asyncio.create_task(self._run(batch))
        self._in_flight.add(task)
        task.add_done_callback(self._flushed)

    def _take(self) -> tuple[list[tuple[Item, asyncio.Future[Result]]], list[tuple[Item, asyncio.Future[Result]]]]:
        """The next batch (at most `max_items`, and `max_bytes` unless one item alone is
        larger) and what stays pending."""
        if self._size_of is None:
            self._pending_bytes = 0
            return self._pending[: self._max_items], self._pending[self._max_items :]
        taken, size = 0, 0
        for item, _ in self._pending[: self._max_items]:
            item_size = self._size_of(item)
            if taken and size + item_size > self._max_bytes:
                break
            taken, size = taken + 1, size + item_size
        self._pending_bytes -= size
        return self._pending[:taken], self._pending[taken:]

    def _flushed(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if self._pending:
            self._start_flush()

    async def _run(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._flush([item for item, _ in batch])
        except BaseException as error:
            _fail(batch, error)
            if isinstance(error, asyncio.CancelledError):
                raise
            return
        if len(results) != len(batch):
            _fail(batch, RuntimeError(f"batch flush returned {len(results)} results for {len(batch)} items"))
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)

    async def drain(self) -> None:
        """Flushes what is waiting and waits for every flush under way (used at shutdown)."""
        while self._pending or self._in_flight:
            while self._pending:
                self._start_flush(force=True)
            await asyncio.gather(*self._in_flight, return_exceptions=True)


def _fail(batch: Sequence[tuple[object, asyncio.Future[Any]]], error: BaseException) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(error)
