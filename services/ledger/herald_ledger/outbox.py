"""The ledger publishes the work messages of the jobs it writes, and runs the outbox.

A new job is written QUEUED and its work message published (pipelined) before the
transaction commits; the few the bus refused are set back to PENDING in the same
transaction, and a bus that is not connected at all writes them PENDING. So the usual
job costs its row no "queued" update, and a 202 still rests on a committed row (the
answer leaves after the commit). A message can reach a sender before that commit: the
start waits for a job this young (`store.jobs.UNCOMMITTED_GRACE_S`) instead of dropping it.

The outbox loop republishes PENDING jobs the bus never took and fails those it never
takes within `HERALD_OUTBOX_GIVE_UP_AFTER_S`. Claims are leased in the database (FOR
UPDATE SKIP LOCKED and a lease column), so several ledger replicas share the work
without publishing the same job at the same moment; `Nats-Msg-Id` = job id makes any
overlap store nothing new.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from herald.bus.work import WorkPublisher
from herald.config import Settings
from herald.v1 import common_pb2
from herald_ledger.convert import job_to_proto
from herald_ledger.store import job_creation
from herald_ledger.store.codes import CHANNEL_TO_PROTO, PRIORITY_TO_PROTO

log = logging.getLogger("herald.ledger.outbox")
CLAIM_LIMIT = 500


def new_job_proto(job: job_creation.NewJob, status: int) -> common_pb2.Job:
    """A job just written, from what was written (never read back), without its request."""
    return common_pb2.Job(
        id=str(job.id),
        tenant_id=str(job.tenant_id),
        channel=CHANNEL_TO_PROTO[job.channel],  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        priority=PRIORITY_TO_PROTO[job.priority],  # type: ignore[arg-type]
        idempotency_key=job.idempotency_key or "",
        ordering_key=job.ordering_key or "",
        target_id=str(job.target_id) if job.target_id else "",
        last_error=job.suppressed or job.skipped,
        event_id=job.event_id or "",
        origin_job_id=str(job.origin_job_id) if job.origin_job_id else "",
    )


def work_job(job: job_creation.NewJob) -> common_pb2.Job:
    """What the work message of a new job is built from: its draft, never its row."""
    proto = new_job_proto(job, common_pb2.JOB_STATUS_QUEUED)
    if job.channel == "webhook":
        proto.webhook.CopyFrom(job.draft.webhook)
        if not proto.webhook.body:
            proto.webhook.body = job.body  # an event's drafts share one payload
    else:
        proto.email.CopyFrom(job.draft.email)
    return proto


class Outbox:
    def __init__(self, engine: AsyncEngine, settings: Settings, publisher: WorkPublisher) -> None:
        self.engine = engine
        self.settings = settings
        self.publisher = publisher

    @property
    def ready(self) -> bool:
        """Whether jobs written now are published in their transaction (else PENDING)."""
        return self.publisher.connected

    async def publish_in(
        self,
        conn: AsyncConnection,
        jobs: list[common_pb2.Job],
        traces: dict[str, dict[str, str]] | None = None,
        while_writing: Awaitable[None] | None = None,
    ) -> set[str]:
        """Inside the transaction that writes `jobs` QUEUED: publishes them and sets the
        ones the bus did not acknowledge back to PENDING. Returns the acknowledged ids.

        `while_writing`: the statements that write them, run on `conn` while the messages
        go out, so the transaction waits once for PostgreSQL and the bus together instead
        of one after the other (its row locks are held for that long). A message may then
        reach a sender before its row is even written: the same case as before the commit
        (the start waits for the commit, see `inflight.Committing`). When the writing fails
        the publishing is still waited for, then the error goes on and the transaction
        rolls back: messages of jobs that never were, as when a commit fails."""
        publishing = asyncio.ensure_future(self.publisher.publish(jobs, traces)) if jobs else None
        try:
            if while_writing is not None:
                await while_writing
        except BaseException:
            if publishing is not None:
                await asyncio.gather(publishing, return_exceptions=True)
            raise
        if publishing is None:
            return set()
        acknowledged = await publishing
        await job_creation.unpublished(conn, [uuid.UUID(j.id) for j in jobs if j.id not in acknowledged])
        return acknowledged

    async def publish_committed(self, jobs: list[common_pb2.Job], restore: bool = False) -> set[str]:
        """Jobs already committed PENDING (the outbox's claims, explicit retries): publishes
        them and marks the acknowledged ones QUEUED. `restore` (the outbox's loop, never a
        caller waiting on an answer): a deleted work stream is created again first."""
        publish = self.publisher.publish_or_restore if restore else self.publisher.publish
        acknowledged = await publish(jobs)
        if acknowledged:
            try:
                async with self.engine.begin() as conn:
                    await job_creation.mark_published(conn, [uuid.UUID(i) for i in sorted(acknowledged)])
            except Exception as error:
                # The row stays PENDING: the outbox republishes, the bus de-duplicates.
                log.warning("jobs not marked QUEUED; the outbox will see them", extra={"error": repr(error)})
        return acknowledged

    async def run(self, stopping: asyncio.Event) -> None:
        interval = self.settings.outbox_scan_interval_s
        while not stopping.is_set():
            try:
                await self._pass()
            except Exception as error:
                log.warning("outbox pass failed", extra={"error": repr(error)})
            try:
                await asyncio.wait_for(stopping.wait(), timeout=interval)
            except TimeoutError:
                pass

    async def _pass(self) -> None:
        bound = self.settings.outbox_give_up_after_s
        async with self.engine.begin() as conn:
            failed = await job_creation.fail_unpublished(
                conn, bound, f"the bus did not accept the job within {bound:.0f}s"
            )
        if failed:
            log.error("jobs failed: bus unavailable too long", extra={"jobs": len(failed)})
        if not self.ready:
            return
        lease_s = max(self.settings.outbox_scan_interval_s * 3, 5)
        while True:
            async with self.engine.begin() as conn:
                rows = await job_creation.claim_unpublished(
                    conn, self.settings.outbox_republish_after_s, lease_s, CLAIM_LIMIT
                )
            if not rows:
                return
            published = await self.publish_committed([job_to_proto(r) for r in rows], restore=True)
            log.info("outbox republished", extra={"claimed": len(rows), "published": len(published)})
            if len(published) < len(rows):
                return
