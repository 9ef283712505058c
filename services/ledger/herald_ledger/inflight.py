"""Deliveries under way, known in memory: what makes "delivering" visible without a row write.

A sender's start writes nothing (it only reads the row), so a job's row says QUEUED (or
PENDING) while a sender calls its receiver. The ledger that answered the start remembers
it here with the attempt count the row had, and tells the other ledger replicas (core
NATS, `<prefix>.control.deliveries`, starts and ends of one sender call in one message),
so any of them answers `GET /v1/jobs/{id}` with DELIVERING while the row's attempt count
is unchanged: the outcome's update (one more attempt, the next status) ends it, whichever
replica recorded it. An entry that hears no end expires after `ttl_s` (a sender that
died: the bus redelivers, and that start makes a fresh one). Best effort by design: a
replica that restarted, or missed a message, says QUEUED for a delivery under way until
its outcome, never a status the row contradicts.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from herald_ledger.job_status import JobStatus

_ENTRY = struct.Struct("!16si")
_COUNT = struct.Struct("!I")
# Row statuses a delivery can be under way in.
_UNDER_WAY = frozenset({JobStatus.PENDING, JobStatus.QUEUED})
# How long after its commit a job's first start is answered without a read (Committing).
FRESH_S = 5.0


class InFlight:
    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        # job id -> (expires at, attempt count at the start); insertion order is expiry order.
        self._started: dict[uuid.UUID, tuple[float, int]] = {}

    def started(self, entries: Iterable[tuple[uuid.UUID, int]]) -> None:
        now = time.monotonic()
        expires = now + self.ttl_s
        for job_id, attempt_count in entries:
            self._started.pop(job_id, None)
            self._started[job_id] = (expires, attempt_count)
        self._expire(now)

    def ended(self, job_ids: Iterable[uuid.UUID]) -> None:
        for job_id in job_ids:
            self._started.pop(job_id, None)

    def _expire(self, now: float) -> None:
        while self._started:
            oldest = next(iter(self._started))
            if self._started[oldest][0] > now:
                return
            del self._started[oldest]

    def status(self, job_id: uuid.UUID, row_status: JobStatus, attempt_count: int) -> JobStatus:
        """What a reader is told: DELIVERING while a start is known and the row shows no
        attempt recorded since; otherwise the row's status."""
        if row_status not in _UNDER_WAY:
            return row_status
        entry = self._started.get(job_id)
        if entry is None or entry[0] <= time.monotonic() or entry[1] != attempt_count:
            return row_status
        return JobStatus.DELIVERING

    def delivering(self) -> list[uuid.UUID]:
        now = time.monotonic()
        return [job_id for job_id, (expires, _) in self._started.items() if expires > now]

    @staticmethod
    def encode(started: list[tuple[uuid.UUID, int]], ended: list[uuid.UUID]) -> bytes:
        """One announcement per sender call: its starts (id, attempt count), then its ends."""
        return b"".join(
            [_COUNT.pack(len(started))]
            + [_ENTRY.pack(job_id.bytes, count) for job_id, count in started]
            + [job_id.bytes for job_id in ended]
        )

    def receive(self, data: bytes) -> None:
        """What a replica announced (possibly this one: the same entries again)."""
        if len(data) < _COUNT.size:
            return
        (count,) = _COUNT.unpack_from(data)
        ends_at = _COUNT.size + count * _ENTRY.size
        if ends_at > len(data) or (len(data) - ends_at) % 16:
            return
        self.started(
            (uuid.UUID(bytes=raw), attempts)
            for raw, attempts in (
                _ENTRY.unpack_from(data, offset) for offset in range(_COUNT.size, ends_at, _ENTRY.size)
            )
        )
        self.ended(uuid.UUID(bytes=data[offset : offset + 16]) for offset in range(ends_at, len(data), 16))


class Written(Protocol):
    """What Committing reads of a job being written (store.job_creation.NewJob)."""

    id: uuid.UUID
    ordering_key: str | None


class Committing:
    """Jobs whose transaction this ledger has not finished, though their work messages are
    out (published before the commit). A sender that starts one before the commit would
    be told to wait and come back (a NAK and a redelivery); when the start reaches the
    ledger that is writing it, the start waits for that commit instead, a few
    milliseconds. Another replica's start still answers `wait`.

    Once the commit landed, the first start of such a job is answered from here, without
    reading its row: the row is the one this ledger just wrote (QUEUED, no attempt, due
    now), and no one else can have changed it in the moment since: its id reaches the
    tenant in the same instant, with the 202. So the start costs no statement, and the
    delivery waits for nothing but the commit its 202 waits for too. Only a job without an
    ordering key (that one must look for earlier jobs of its key), only its first start
    (a second one, a redelivery, reads the row), and only for `FRESH_S` after the commit."""

    def __init__(self, fresh_s: float = FRESH_S) -> None:
        self._by_job: dict[uuid.UUID, asyncio.Future[None]] = {}
        self.fresh_s = fresh_s
        # Committed, not started yet: job id -> until when; insertion order is expiry order.
        self._fresh: dict[uuid.UUID, float] = {}

    @contextlib.contextmanager
    def writing(self) -> Iterator[Callable[[Iterable[Written]], None]]:
        """Around a writing transaction: yields `add(jobs)`; when the block ends (committed
        or not), whoever waits on those jobs goes on. A block that ends without an error
        committed them: their first starts need no read (see above)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        added: list[Written] = []

        def add(jobs: Iterable[Written]) -> None:
            for job in jobs:
                self._by_job[job.id] = done
                added.append(job)

        try:
            yield add
            now = time.monotonic()
            self._expire(now)
            until = now + self.fresh_s
            for job in added:
                if job.ordering_key is None:
                    self._fresh[job.id] = until
        finally:
            for job in added:
                if self._by_job.get(job.id) is done:
                    del self._by_job[job.id]
            done.set_result(None)

    async def wait_for(self, job_ids: Iterable[uuid.UUID], timeout_s: float) -> None:
        waiting = {self._by_job[i] for i in job_ids if i in self._by_job}
        if waiting:
            await asyncio.wait(waiting, timeout=timeout_s)

    def first_starts(self, job_ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
        """Which of `job_ids` are starting for the first time since this ledger committed them
        (each is answered so once)."""
        now = time.monotonic()
        first = set()
        for job_id in job_ids:
            until = self._fresh.pop(job_id, None)
            if until is not None and until > now:
                first.add(job_id)
        return first

    def _expire(self, now: float) -> None:
        while self._fresh:
            oldest = next(iter(self._fresh))
            if self._fresh[oldest] > now:
                return
            del self._fresh[oldest]
