"""The ledger's housekeeping, every HERALD_LEDGER_MAINTENANCE_INTERVAL_S: idempotency keys past
their 24 hours are deleted (a stored answer must not outlive its promise, and the table must
not grow forever), and plans whose paid period ended after a cancellation go back to free.

Every ledger replica runs it; the statements are idempotent, so two replicas at once only
repeat each other's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from herald_ledger.store.idempotency import RETENTION_S

log = logging.getLogger("herald.ledger.maintenance")

# Rows deleted per statement: short transactions, no long lock on a busy table. The age is
# indexed (ix_idempotency_keys_created_at), so a round with nothing to delete costs one probe.
PRUNE_BATCH = 5_000

_PRUNE = text(
    """
    DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM idempotency_keys
        WHERE created_at < now() - make_interval(secs => :retention_s) LIMIT :batch
    ))
    """
)


async def prune_idempotency_keys(engine: AsyncEngine, retention_s: float = RETENTION_S) -> int:
    """Deletes every key older than its retention; how many went."""
    total = 0
    while True:
        async with engine.begin() as conn:
            deleted = (await conn.execute(_PRUNE, {"retention_s": retention_s, "batch": PRUNE_BATCH})).rowcount
        total += deleted
        if deleted < PRUNE_BATCH:
            return total


async def run_maintenance(
    steps: list[Callable[[], Awaitable[object]]], interval_s: float, stopping: asyncio.Event
) -> None:
    """Runs each step every `interval_s` until `stopping`; a failing step is logged and tried again."""
    while not stopping.is_set():
        for step in steps:
            try:
                await step()
            except Exception as error:  # the database may be away for a while: try again next round
                log.warning("maintenance step failed", extra={"step": step.__name__, "error": repr(error)})
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=interval_s)
