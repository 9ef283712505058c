"""A job's first start, asked of the ledger that just committed it, is answered without a read
(herald_ledger.inflight.Committing): once, for a job without an ordering key, and only after a
commit that landed. Everything else reads the row (tests/test_ledger_rules.py)."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

import pytest
from herald_ledger.inflight import Committing


@dataclass
class Written:
    id: uuid.UUID
    ordering_key: str | None = None


async def test_a_start_waiting_for_the_commit_is_answered_once_it_lands() -> None:
    committing = Committing()
    job = Written(uuid.uuid4())
    commit = asyncio.Event()

    async def transaction() -> None:
        with committing.writing() as add:
            add([job])
            await commit.wait()

    writer = asyncio.create_task(transaction())
    await asyncio.sleep(0)
    start = asyncio.create_task(committing.wait_for([job.id], timeout_s=5))
    await asyncio.sleep(0.01)
    assert not start.done(), "the start waits for the commit"
    assert committing.first_starts([job.id]) == set(), "not committed yet: the row is read (and not found)"
    commit.set()
    await writer
    await start
    assert committing.first_starts([job.id]) == {job.id}
    assert committing.first_starts([job.id]) == set(), "a second start (a redelivery) reads the row"


async def test_a_job_with_an_ordering_key_always_reads_its_row() -> None:
    committing = Committing()
    keyed, free = Written(uuid.uuid4(), "orders-7"), Written(uuid.uuid4())
    with committing.writing() as add:
        add([keyed, free])
    assert committing.first_starts([keyed.id, free.id]) == {free.id}


async def test_a_transaction_that_failed_leaves_nothing_to_start() -> None:
    committing = Committing()
    job = Written(uuid.uuid4())
    with pytest.raises(RuntimeError), committing.writing() as add:
        add([job])
        raise RuntimeError("the commit failed")
    await committing.wait_for([job.id], timeout_s=5)  # the waiters go on all the same
    assert committing.first_starts([job.id]) == set()


async def test_a_late_first_start_reads_its_row() -> None:
    committing = Committing(fresh_s=0.0)
    job = Written(uuid.uuid4())
    with committing.writing() as add:
        add([job])
    assert committing.first_starts([job.id]) == set()
