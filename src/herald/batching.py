"""Coalescing many concurrent calls into one.

A caller submits one item and awaits its own result; the batcher gathers what
arrives within `max_wait` (or until `max_items`) and makes a single call for all
of them: one gRPC round trip, one transaction. Under light load a lone item waits
at most `max_wait`; under heavy load batches fill and the per-item cost falls.

With `max_concurrent`, at most that many flushes run at once (group commit): what
arrives while they run waits and goes out together as soon as one finishes. Without
the bound, a saturated process starts a small flush every `max_wait` and the calls
queue behind each other (and behind row locks) instead of growing: profiled at about
six jobs per ledger transaction under full load before the bound, the whole window after.
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
        max_wait: float = 0.002,
        size_of: Callable[[Item], int] | None = None,
        max_bytes: int = 8 * 1024 * 1024,
        max_concurrent: int | None = None,
    ) -> None:
        """With `size_of`, a batch is also flushed before it would exceed `max_bytes`, so a
        few large items (multi-MB webhook bodies) never make one message over a transport's limit."""
        self._flush = flush
        self._max_items = max_items
        self._max_wait = max_wait
        self._size_of = size_of
        self._max_bytes = max_bytes
        self._max_concurrent = max_concurrent
        self._pending_bytes = 0
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._timer: asyncio.TimerHandle | None = None
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
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._max_wait, self._start_flush)
        return await future

    def _start_flush(self, force: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        if not force and self._max_concurrent is not None and len(self._in_flight) >= self._max_concurrent:
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
