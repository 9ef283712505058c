"""The ledger publishes Herald's own events to the tenant (`herald.*`, the rows of the
`operational_events` outbox, see `herald_ledger.store.operational`) to the router's
operational intake subject, `<prefix>.intake.operational.<tenant>`, after the commit that
wrote them.

The router fans such an event out like any event (its subscription cache, its drafts,
`RecordEvent`), so the ledger acts here as an internal backend does at the intake, and the
jobs it then writes flow bus → sender → ledger as every job's: nothing doubles back. Only
the ledger's bus user may publish that subject (`herald.bus.permissions`); backends publish
`intake.events`, where a `herald.` type is refused.

A pass claims unpublished rows with a lease (FOR UPDATE SKIP LOCKED, `claimed_until`), so
ledger replicas share them; publishes each with `Nats-Msg-Id` `op.<id>` (a republish within
the duplicate window stores nothing new, and the event id de-duplicates in `RecordEvent`);
and marks the acknowledged ones published. A row whose publish failed (the bus away, the
intake stream not made yet by a router) waits for its lease to end and the next pass. Passes
run every HERALD_OUTBOX_SCAN_INTERVAL_S and at once when an RPC that may have written one
kicks (`kick`); a state change that does not kick (a quota threshold) waits for the next
scan. Nothing here runs on the path of a normal delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.bus.work import WorkPublisher
from herald.config import Settings
from herald.v1 import router_pb2
from herald_ledger.store import operational as store

log = logging.getLogger("herald.ledger.operational")
CLAIM_LIMIT = 100
LEASE_S = 10.0


def intake_message(row: Any) -> bytes:
    """The intake message of an event row: what the router's intake reads (a
    `PublishEventRequest`), the event id being the row's id."""
    return router_pb2.PublishEventRequest(
        tenant_id=str(row.tenant_id),
        event_type=row.event_type,
        event_id=str(row.id),
        payload=orjson.dumps(row.payload),
        content_type="application/json",
    ).SerializeToString()


class Announcer:
    def __init__(self, engine: AsyncEngine, settings: Settings, publisher: WorkPublisher) -> None:
        self.engine = engine
        self.settings = settings
        self.publisher = publisher
        self.subjects = settings.subjects()
        self._kicked = asyncio.Event()

    def kick(self) -> None:
        """Something may have been written: publish it now rather than at the next scan."""
        self._kicked.set()

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            self._kicked.clear()
            try:
                await self.publish_pending()
            except Exception as error:
                log.warning("operational events not published", extra={"error": repr(error)})
            waits = [asyncio.ensure_future(stopping.wait()), asyncio.ensure_future(self._kicked.wait())]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait(waits, timeout=self.settings.outbox_scan_interval_s, return_when="FIRST_COMPLETED")
            for waiting in waits:
                waiting.cancel()

    async def publish_pending(self) -> int:
        """Publishes what is unpublished and not held by another replica; how many went."""
        js = self.publisher.js
        if js is None or not self.publisher.connected:
            return 0
        total = 0
        while True:
            async with self.engine.begin() as conn:
                rows = await store.claim_unpublished(conn, LEASE_S, CLAIM_LIMIT)
            if not rows:
                return total
            outcomes = await asyncio.gather(
                *(
                    js.publish(
                        self.subjects.intake_operational(str(row.tenant_id)),
                        intake_message(row),
                        headers={"Nats-Msg-Id": f"op.{row.id}"},
                    )
                    for row in rows
                ),
                return_exceptions=True,
            )
            published = [
                row.id for row, outcome in zip(rows, outcomes, strict=True) if not isinstance(outcome, BaseException)
            ]
            async with self.engine.begin() as conn:
                await store.mark_published(conn, published)
            total += len(published)
            if len(published) < len(rows):
                failed = next(o for o in outcomes if isinstance(o, BaseException))
                log.warning(
                    "operational events not taken by the bus; published later",
                    extra={"unpublished": len(rows) - len(published), "error": repr(failed)},
                )
                return total
