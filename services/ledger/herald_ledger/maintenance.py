"""The ledger's housekeeping, every HERALD_LEDGER_MAINTENANCE_INTERVAL_S: idempotency keys and
event claims past their 24 hours are deleted (a stored answer must not outlive its promise, and
the tables must not grow forever), plans whose paid period ended after a cancellation go back
to free; retention (herald_ledger.retention) runs in the same way at its own interval.

Every ledger replica runs it; the statements are idempotent, so two replicas at once only
repeat each other's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncEngine

from herald_ledger.store.idempotency import RETENTION_S

log = logging.getLogger("herald.ledger.maintenance")

# Rows deleted per statement: short transactions, no long lock on a busy table. The age is
# indexed (ix_<table>_created_at), so a round with nothing to delete costs one probe.
PRUNE_BATCH = 5_000
# Tables whose rows live for the 24 hours of a promise (a stored answer, an event's de-duplication).
PRUNED_BY_AGE = ("idempotency_keys", "event_claims")


def _prune(table: str) -> TextClause:
    return text(
        f"""
        DELETE FROM {table} WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM {table}
            WHERE created_at < now() - make_interval(secs => :retention_s) LIMIT :batch
        ))
        """  # noqa: S608 (constant table names)
    )


async def prune_by_age(engine: AsyncEngine, table: str, retention_s: float = RETENTION_S) -> int:
    """Deletes every row of `table` older than `retention_s`; how many went."""
    total = 0
    statement = _prune(table)
    while True:
        async with engine.begin() as conn:
            deleted = (await conn.execute(statement, {"retention_s": retention_s, "batch": PRUNE_BATCH})).rowcount
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
