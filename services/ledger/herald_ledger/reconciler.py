"""The ledger is the truth: whatever the bus loses, the reconciler publishes again.

A job's row says QUEUED once the bus acknowledged its work message, and from then on the bus
alone carries it: a purged, deleted or expired work stream (or a bus that lost acknowledged
writes in a crash) would leave the row QUEUED for good. Every job that is not terminal has a
time by which the bus must have acted on it: a fresh one `reconcile_queued_after_s` after its
commit, a scheduled retry `reconcile_retry_grace_s` after its next attempt was due. Each pass
claims the jobs past that time (`store.overdue`, bounded batches, FOR UPDATE SKIP LOCKED, so
several ledger replicas share the work) and publishes them again under a fresh message id
(`<job id>.c<claim time>`: the original `Nats-Msg-Id` would be swallowed by the duplicate
window).

A copy of a message the bus still holds is harmless: the sender's start skips a job that
ended, makes a copy of a job whose retry is not due yet wait for it, and a sender holding the
job already holds the copy back (`herald.sender.loop`); jobs this ledger knows in flight
(`herald_ledger.inflight`) are not claimed at all (a sender is acting on them). What is
left is a copy started by another sender while the first is still calling, which needs a job
in flight that no ledger replica knows of: at most a duplicate delivery, never a lost job.

Each pass first publishes the parked jobs that came due (`store.parking`: what the ledger holds
off the bus, a long retry or a delivery its target's open circuit holds), the same way, with no
grace and no warning: their time has come, nothing was lost. Each pass also sets
`herald_unsettled_job_age_seconds` per status and `herald_jobs_parked`, and reads which lanes
jobs are parked on (`herald_ledger.parked_lanes`: an answer on one releases it, and every
`webhook_park_recheck_s` one job of each circuit's lane is made due, to be a probe), and sets
how many circuits hold deliveries (`herald_webhook_circuits_holding`): the steady sign of a
dead target, which a sender's counters show only when it holds one of the target's deliveries.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy.ext.asyncio import AsyncEngine

from herald.bus.work import WorkPublisher
from herald.config import Settings
from herald.telemetry.metrics import (
    CIRCUITS_HOLDING,
    JOBS_PARKED,
    JOBS_REPUBLISHED,
    JOBS_UNPARKED,
    UNSETTLED_JOB_AGE,
    label,
)
from herald.v1 import common_pb2
from herald_ledger.convert import job_to_proto
from herald_ledger.inflight import InFlight
from herald_ledger.parked_lanes import MAX_LANES, ParkedLanes
from herald_ledger.store.overdue import claim_overdue, oldest_unsettled
from herald_ledger.store.parking import due_parked, parked_count, parked_lanes, recheck, unparked

log = logging.getLogger("herald.ledger.reconciler")


class Reconciler:
    def __init__(
        self,
        engine: AsyncEngine,
        settings: Settings,
        publisher: WorkPublisher,
        inflight: InFlight,
        lanes: ParkedLanes | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.publisher = publisher
        self.inflight = inflight
        self.lanes = lanes if lanes is not None else ParkedLanes()  # an empty one is falsy

    async def reconcile(self) -> int:
        """One pass: every overdue job published again (batch after batch); how many were."""
        async with self.engine.connect() as conn:
            for status, age_s in (await oldest_unsettled(conn)).items():
                UNSETTLED_JOB_AGE.labels(status).set(age_s)
            JOBS_PARKED.set(await parked_count(conn))
            self.lanes.reading()
            self.lanes.read(await parked_lanes(conn, MAX_LANES))
            CIRCUITS_HOLDING.set(self.lanes.circuits())
        if not self.publisher.connected:
            return 0  # the rows wait: claiming them now would only move their time on
        if rechecked := self.lanes.rechecks(time.monotonic()):
            async with self.engine.begin() as conn:
                made_due = await recheck(conn, rechecked)
            log.info("parked lanes rechecked", extra={"lanes": len(rechecked), "made_due": made_due})
        await self.unpark()
        total = 0
        while True:
            async with self.engine.begin() as conn:
                rows = await claim_overdue(
                    conn,
                    self.settings.reconcile_queued_after_s,
                    self.settings.reconcile_retry_grace_s,
                    self.settings.reconcile_batch,
                    self.inflight.delivering(),
                )
            if not rows:
                return total
            jobs = [job_to_proto(r) for r in rows]
            published = await self.publisher.publish_or_restore(jobs, copy=f"c{int(time.time() * 1000)}")
            total += len(published)
            for job in jobs:
                if job.id in published:
                    JOBS_REPUBLISHED.labels(label(common_pb2.Channel.Name(job.channel))).inc()
            log.warning(
                "jobs the bus had not acted on published again",
                extra={"claimed": len(rows), "published": len(published)},
            )
            if len(rows) < self.settings.reconcile_batch or len(published) < len(jobs):
                return total

    async def unpark(self) -> int:
        """Parked jobs that came due, published again (batch after batch); how many were. A
        batch's rows stay locked while it is published; one the bus refuses stays parked."""
        total = 0
        while True:
            async with self.engine.begin() as conn:
                rows = await due_parked(conn, self.settings.reconcile_batch)
                if not rows:
                    return total
                jobs = [job_to_proto(r) for r in rows]
                published = await self.publisher.publish_or_restore(jobs, copy=f"p{int(time.time() * 1000)}")
                await unparked(conn, [r.id for r in rows if str(r.id) in published])
            total += len(published)
            for job in jobs:
                if job.id in published:
                    JOBS_UNPARKED.labels(label(common_pb2.Channel.Name(job.channel))).inc()
            if len(rows) < self.settings.reconcile_batch or len(published) < len(jobs):
                return total
