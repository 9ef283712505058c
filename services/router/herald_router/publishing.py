"""Turning jobs into work messages and getting them onto the bus.

A job is published only after its PENDING row is committed, and marked QUEUED
only after the bus acknowledged it. A job whose publish failed stays PENDING and
the outbox loop below republishes it; `Nats-Msg-Id` = job id makes that safe.
"""

from __future__ import annotations

import asyncio
import logging

from nats.js import JetStreamContext

from herald.batching import Batcher
from herald.bus.payloads import PayloadStore
from herald.bus.publisher import OutgoingMessage, publish_all
from herald.bus.subjects import CHANNEL_CLASSES, Subjects
from herald.config import Settings
from herald.telemetry.metrics import JOBS_PUBLISHED, PUBLISH_FAILURES, label
from herald.v1 import common_pb2, email_sender_pb2, ledger_pb2, ledger_pb2_grpc, webhook_sender_pb2

log = logging.getLogger("herald.router.publishing")


def message_id(job: common_pb2.Job) -> str:
    """The job id; a rerun after an explicit retry gets its own (`<id>.r<run>`), or the
    bus would drop it as a duplicate of the first run inside the duplicate window."""
    return job.id if job.run == 0 else f"{job.id}.r{job.run}"


def work_message(subjects: Subjects, job: common_pb2.Job, payload_object: str = "") -> OutgoingMessage:
    """The work message for a job; `payload_object` names a body stored beside it."""
    data: bytes
    if job.WhichOneof("request") == "email":
        data = email_sender_pb2.EmailDelivery(
            job_id=job.id,
            tenant_id=job.tenant_id,
            priority=job.priority,
            request=job.email,
            idempotency_key=job.idempotency_key,
            ordering_key=job.ordering_key,
            run=job.run,
        ).SerializeToString()
    else:
        delivery = webhook_sender_pb2.WebhookDelivery(
            job_id=job.id,
            tenant_id=job.tenant_id,
            priority=job.priority,
            request=job.webhook,
            ordering_key=job.ordering_key,
            target_id=job.target_id,
            payload_object=payload_object,
            run=job.run,
        )
        if payload_object:
            delivery.request.body = b""
        data = delivery.SerializeToString()
    subject = subjects.work(CHANNEL_CLASSES[job.channel], job.priority, job.tenant_id)
    return OutgoingMessage(subject=subject, msg_id=message_id(job), data=data)


class Publisher:
    def __init__(
        self, settings: Settings, js: JetStreamContext | None, ledger: ledger_pb2_grpc.LedgerServiceAsyncStub
    ) -> None:
        self.settings = settings
        self.subjects = settings.subjects()
        self.js = js
        self.ledger = ledger
        self.payloads = PayloadStore(js, settings.payload_bucket, settings.stream_replicas) if js else None
        # "Queued" marks of concurrent submissions go to the ledger as one call.
        self._marking: set[asyncio.Task[None]] = set()
        self.queued_marker: Batcher[list[str], None] = Batcher(
            self._mark_queued, max_items=1024, max_wait=0.002, max_concurrent=1
        )

    async def _mark_queued(self, batches: list[list[str]]) -> list[None]:
        ids = sorted({job_id for batch in batches for job_id in batch})
        await self.ledger.MarkQueued(ledger_pb2.MarkQueuedRequest(job_ids=ids))
        return [None] * len(batches)

    async def _store_large_bodies(self, jobs: list[common_pb2.Job]) -> tuple[list[common_pb2.Job], dict[str, str]]:
        """Puts bodies too large for a message in the payload store; a job whose body could
        not be stored is left out (it stays PENDING, and the outbox tries it again)."""
        assert self.payloads is not None
        limit = self.settings.payload_inline_max_bytes
        objects: dict[str, str] = {}
        ready = []
        for job in jobs:
            if job.WhichOneof("request") == "webhook" and len(job.webhook.body) > limit:
                try:
                    await self.payloads.put(job.id, job.webhook.body)
                except Exception as error:
                    log.warning("large payload not stored; job stays PENDING", extra={"error": repr(error)})
                    continue
                objects[job.id] = job.id
            ready.append(job)
        return ready, objects

    async def publish(self, jobs: list[common_pb2.Job]) -> set[str]:
        """Publishes and marks QUEUED; returns the ids the bus acknowledged."""
        if self.js is None or not jobs:
            return set()
        jobs, objects = await self._store_large_bodies(jobs)
        outcomes = await publish_all(self.js, [work_message(self.subjects, j, objects.get(j.id, "")) for j in jobs])
        acknowledged = {job.id for job, error in zip(jobs, outcomes, strict=True) if error is None}
        for job, error in zip(jobs, outcomes, strict=True):
            channel = label(common_pb2.Channel.Name(job.channel))
            if error is None:
                JOBS_PUBLISHED.labels(channel).inc()
            else:
                PUBLISH_FAILURES.labels(channel).inc()
        if len(acknowledged) < len(jobs):
            first = next(e for e in outcomes if e is not None)
            log.warning(
                "bus did not acknowledge; jobs stay PENDING for the outbox",
                extra={"unacknowledged": len(jobs) - len(acknowledged), "error": repr(first)},
            )
        if acknowledged:
            # Not awaited: the answer rests on the committed row and the bus's ack, not on
            # the QUEUED mark. A mark that fails leaves the row PENDING for the outbox,
            # whose republish the bus de-duplicates by message id (or the sender skips).
            marking = asyncio.create_task(self._mark(sorted(acknowledged)))
            self._marking.add(marking)
            marking.add_done_callback(self._marking.discard)
        return acknowledged

    async def _mark(self, job_ids: list[str]) -> None:
        try:
            await self.queued_marker.submit(job_ids)
        except Exception as error:
            log.warning("jobs not marked QUEUED; the outbox will see them", extra={"error": repr(error)})

    async def close(self) -> None:
        """Finishes the QUEUED marks under way (graceful shutdown)."""
        if self._marking:
            await asyncio.gather(*self._marking, return_exceptions=True)
        await self.queued_marker.drain()

    async def release_dead_letters(self, sequences: list[int]) -> None:
        """Removes dead-letter entries whose jobs run again: the stream then holds only
        the ones waiting (its depth is the operators' backlog). Best effort: an entry left
        behind is marked retried in the ledger all the same."""
        if self.js is None or not sequences:
            return
        stream = self.settings.stream_name("dlq")
        for sequence in sequences:
            try:
                await self.js.delete_msg(stream, sequence)
            except Exception as error:
                log.info("dead-letter entry not removed", extra={"sequence": sequence, "error": repr(error)})

    async def outbox_loop(self, stopping: asyncio.Event) -> None:
        """Republishes PENDING jobs the bus never took; fails those it never takes.

        Claims are leased in the ledger, so several router replicas share the work
        without publishing the same job at the same moment.
        """
        interval = self.settings.outbox_scan_interval_s
        while not stopping.is_set():
            try:
                await self._outbox_pass()
            except Exception as error:
                log.warning("outbox pass failed", extra={"error": repr(error)})
            try:
                await asyncio.wait_for(stopping.wait(), timeout=interval)
            except TimeoutError:
                pass

    async def _outbox_pass(self) -> None:
        give_up_ms = int(self.settings.outbox_give_up_after_s * 1000)
        failed = await self.ledger.FailUnpublished(
            ledger_pb2.FailUnpublishedRequest(
                older_than_ms=give_up_ms,
                reason=f"the bus did not accept the job within {self.settings.outbox_give_up_after_s:.0f}s",
            )
        )
        if failed.job_ids:
            log.error("jobs failed: bus unavailable too long", extra={"jobs": len(failed.job_ids)})
        while True:
            claimed = await self.ledger.ClaimUnpublished(
                ledger_pb2.ClaimUnpublishedRequest(
                    older_than_ms=int(self.settings.outbox_republish_after_s * 1000),
                    limit=500,
                    lease_ms=int(max(self.settings.outbox_scan_interval_s * 3, 5) * 1000),
                )
            )
            if not claimed.jobs:
                return
            published = await self.publish(list(claimed.jobs))
            log.info("outbox republished", extra={"claimed": len(claimed.jobs), "published": len(published)})
            if len(published) < len(claimed.jobs):
                return
