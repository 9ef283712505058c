"""Why a job waits without a call, told to the ledger so its record shows it (`Job.waiting_reason`:
"held: target at its concurrency bound"). A user looking at a job that has not been attempted
sees that it waits behind its own target, not that it is lost.

Told once per job and reason while the reason holds (a job handed back and refused again does
not repeat it within NOTED_TTL_S), batched into one `NoteWaiting` call, never waited for by the
delivery: a note that fails is logged and dropped (the job's record is the only thing it changes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from herald.batching import Batcher
from herald.expiring import ExpiringCache
from herald.sender.slots import Refusal

log = logging.getLogger("herald.sender.waiting")

AT_TARGET_BOUND = "held: target at its concurrency bound"
AT_TENANT_BOUND = "held: tenant at its share of the sender's calls"
CIRCUIT_OPEN = "held: target's circuit is open"
NOTED_TTL_S = 30.0

Send = Callable[[list[tuple[str, str]]], Awaitable[None]]
BOUNDS = {Refusal.TARGET: AT_TARGET_BOUND, Refusal.TENANT: AT_TENANT_BOUND}


class WaitingNotes:
    def __init__(self, send: Send) -> None:
        self._send = send
        self._batches: Batcher[tuple[str, str], None] = Batcher(self._flush, max_items=500)
        self._noted: ExpiringCache[str, str] = ExpiringCache(NOTED_TTL_S)
        self._tasks: set[asyncio.Task[None]] = set()

    def note(self, job_id: str, why: Refusal | str | None) -> None:
        """Tells the ledger, in the background, unless this job's reason was told lately (None:
        it does not wait)."""
        if why is None:
            return
        reason = BOUNDS[why] if isinstance(why, Refusal) else why
        if self._noted.get(job_id) == reason:
            return
        self._noted.put(job_id, reason)
        task = asyncio.create_task(self._submit(job_id, reason))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _submit(self, job_id: str, reason: str) -> None:
        try:
            await self._batches.submit((job_id, reason))
        except Exception as error:
            log.info("waiting reason not recorded", extra={"job_id": job_id, "error": repr(error)})

    async def _flush(self, notes: list[tuple[str, str]]) -> list[None]:
        await self._send(notes)
        return [None] * len(notes)
