"""The ledger publishes the work messages of the jobs it writes, and runs the outbox.

A new job is written QUEUED and its work message sent in the same transaction, which
commits once the bus has read the messages (a PING's answer after them), not once it has
acknowledged storing them: at `sync_interval: always` every stored message costs JetStream
a disk sync, one after the other per stream, and waiting for them inside the transaction
(which holds its tenants' usage rows) or before the answer set the pace of every
submission (docs/performance.md). The acknowledgements are awaited after the commit, in
the background; the few messages the bus refused, or did not acknowledge in time, put
their jobs back to PENDING in a small transaction of their own. So the usual job costs its
row one version, a 202 rests on a committed row, and a ledger that dies after the commit
has already handed its messages over. The messages awaiting acknowledgement are bounded
(`UNACKNOWLEDGED_MAX`): past it, creation waits for room, the bus's backpressure on the
submit path. A message can reach a sender before its commit: the start waits for a job
this young (`store.deliveries.UNCOMMITTED_GRACE_S`) instead of dropping it.

The outbox loop republishes PENDING jobs the bus never took and fails those it never
takes within `HERALD_OUTBOX_GIVE_UP_AFTER_S`. Claims are leased in the database (FOR
UPDATE SKIP LOCKED and a lease column), so several ledger replicas share the work
without publishing the same job at the same moment; `Nats-Msg-Id` = job id makes any
overlap store nothing new.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncEngine

from herald.bus.work import Sending, WorkPublisher
from herald.config import Settings
from herald.v1 import common_pb2
from herald_ledger.convert import job_to_proto
from herald_ledger.store import job_creation
from herald_ledger.store.codes import CHANNEL_TO_PROTO, PRIORITY_TO_PROTO

log = logging.getLogger("herald.ledger.outbox")
CLAIM_LIMIT = 500
# Work messages that may await the bus's acknowledgement after their commit: about two
# seconds of a busy bus at `sync_interval: always` (docs/performance.md). Past it, the next
# creation waits for room before it is answered.
UNACKNOWLEDGED_MAX = 2048


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


class Publication:
    """The work messages of one writing transaction (`Outbox.publishing`)."""

    def __init__(self, publisher: WorkPublisher) -> None:
        self.publisher = publisher
        self.sending: Sending | None = None

    async def send(self, jobs: list[common_pb2.Job], traces: dict[str, dict[str, str]] | None = None) -> None:
        """Inside the transaction, after its writes: sends the messages and returns once the
        bus has read them (so a commit is never left without its messages by this process
        dying), without waiting for their acknowledgements."""
        if jobs:
            self.sending = await self.publisher.send(jobs, traces, flushed=True)


class Outbox:
    def __init__(self, engine: AsyncEngine, settings: Settings, publisher: WorkPublisher) -> None:
        self.engine = engine
        self.settings = settings
        self.publisher = publisher
        self._unacknowledged = 0
        self._room = asyncio.Condition()
        self._settling: set[asyncio.Task[None]] = set()
        # Jobs written QUEUED whose messages the bus refused while the database was away:
        # published again by the next pass.
        self._unsettled: list[common_pb2.Job] = []

    @property
    def ready(self) -> bool:
        """Whether jobs written now are written QUEUED, their messages sent with them (else PENDING)."""
        return self.publisher.connected

    @contextlib.asynccontextmanager
    async def publishing(self, most: int) -> AsyncIterator[Publication]:
        """Around the transaction that writes up to `most` jobs QUEUED: yields the
        `Publication` that sends their messages inside it. Waits first while more than
        `UNACKNOWLEDGED_MAX` messages await the bus. When the block ends committed, the
        acknowledgements are awaited in the background and the jobs whose messages the bus
        refused go back to PENDING; when it raises, the messages sent were of jobs that never
        were (a start finds no row and drops them)."""
        async with self._room:
            await self._room.wait_for(lambda: self._unacknowledged < UNACKNOWLEDGED_MAX)
            self._unacknowledged += most
        publication = Publication(self.publisher)
        try:
            yield publication
        except BaseException:
            await self._release(most)
            raise
        if publication.sending is None:  # nothing was sent (no bus, or every job suppressed)
            await self._release(most)
            return
        task = asyncio.ensure_future(self._settle(publication.sending, most))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def _settle(self, sending: Sending, most: int) -> None:
        try:
            acknowledged = await self.publisher.acknowledged(sending)
            refused = [j for j in sending.jobs if j.id not in acknowledged]
            if refused:
                try:
                    async with self.engine.begin() as conn:
                        await job_creation.unpublished(conn, [uuid.UUID(j.id) for j in refused])
                except Exception as error:
                    # QUEUED without a message: this ledger's next pass publishes them again.
                    log.warning("refused jobs not set back to PENDING", extra={"error": repr(error)})
                    self._unsettled.extend(refused)
        finally:
            await self._release(most)

    async def _release(self, count: int) -> None:
        async with self._room:
            self._unacknowledged -= count
            self._room.notify_all()

    async def settle(self, timeout_s: float) -> None:
        """At shutdown: waits (at most `timeout_s`) for the messages still awaiting the bus."""
        if self._settling:
            await asyncio.wait(set(self._settling), timeout=timeout_s)

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
        if self._unsettled:
            unsettled, self._unsettled = self._unsettled, []
            published = await self.publisher.publish_or_restore(unsettled)
            self._unsettled.extend(j for j in unsettled if j.id not in published)
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
