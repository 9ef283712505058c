"""Turning jobs into work messages and getting them onto the bus.

Used by the ledger, the service that owns the job rows: it sends a job's work message in
the transaction that writes the row, waits for the bus's acknowledgement after the commit
(see docs/architecture.md, "What is guaranteed") and republishes from its outbox what the
bus did not take.
`Nats-Msg-Id` = job id makes a republish store nothing new.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from nats.aio.client import Client
from nats.js import JetStreamContext

from herald.bus.payloads import PayloadStore
from herald.bus.publisher import AckPipeline, OutgoingMessage, Sent
from herald.bus.streams import ensure_streams
from herald.bus.subjects import CHANNEL_CLASSES, Subjects
from herald.config import Settings
from herald.telemetry.metrics import JOBS_PUBLISHED, PUBLISH_FAILURES, label
from herald.v1 import common_pb2, email_sender_pb2, webhook_sender_pb2

log = logging.getLogger("herald.bus.work")


def message_id(job: common_pb2.Job) -> str:
    """The job id; a rerun after an explicit retry gets its own (`<id>.r<run>`), or the
    bus would drop it as a duplicate of the first run inside the duplicate window."""
    return job.id if job.run == 0 else f"{job.id}.r{job.run}"


def work_message(
    subjects: Subjects,
    job: common_pb2.Job,
    payload_object: str = "",
    headers: dict[str, str] | None = None,
    copy: str = "",
) -> OutgoingMessage:
    """The work message for a job; `payload_object` names a body stored beside it,
    `headers` the trace context of the request that drafted the job. `copy` names a
    republication of a message the bus lost (herald_ledger.reconciler): its message id is
    the job's with `.<copy>` added, which the duplicate window does not swallow."""
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
        if job.HasField("run_started_at"):
            delivery.run_started_at.CopyFrom(job.run_started_at)
        if payload_object:
            delivery.request.body = b""
        data = delivery.SerializeToString()
    subject = subjects.work(CHANNEL_CLASSES[job.channel], job.priority, job.tenant_id)
    msg_id = f"{message_id(job)}.{copy}" if copy else message_id(job)
    return OutgoingMessage(subject=subject, msg_id=msg_id, data=data, headers=headers)


@dataclass(frozen=True)
class Sending:
    """Work messages on their way: `jobs` asked for, `ready` those sent (a body that could not
    be stored leaves its job out), `sent` what the pipeline awaits (None: no bus)."""

    jobs: list[common_pb2.Job]
    ready: list[common_pb2.Job]
    sent: Sent | None


class WorkPublisher:
    """Publishes work messages (pipelined) once a bus connection is attached; before
    that, and whenever the bus refuses, `publish` says so and the caller keeps the jobs
    PENDING for the outbox."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.subjects = settings.subjects()
        self.nc: Client | None = None
        self.js: JetStreamContext | None = None
        self.payloads: PayloadStore | None = None
        self.pipeline: AckPipeline | None = None

    def attach(self, nc: Client) -> None:
        self.nc = nc
        self.js = nc.jetstream(timeout=5)
        self.pipeline = AckPipeline(nc)
        self.payloads = PayloadStore(self.js, self.settings.payload_bucket, self.settings.stream_replicas)

    @property
    def connected(self) -> bool:
        """Worth trying now: a job written while this is false is written PENDING."""
        return self.nc is not None and self.nc.is_connected

    async def _store_large_bodies(self, jobs: list[common_pb2.Job]) -> tuple[list[common_pb2.Job], dict[str, str]]:
        """Puts bodies too large for a message in the payload store (the claim check); a
        job whose body could not be stored is left out (it stays PENDING for the outbox)."""
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

    async def publish(
        self, jobs: list[common_pb2.Job], traces: Mapping[str, dict[str, str]] | None = None, copy: str = ""
    ) -> set[str]:
        """Publishes; returns the ids of the jobs the bus acknowledged. `traces`: per job id,
        the trace context to carry (else the current one); `copy`: see `work_message`."""
        return await self.acknowledged(await self.send(jobs, traces, copy))

    async def send(
        self,
        jobs: list[common_pb2.Job],
        traces: Mapping[str, dict[str, str]] | None = None,
        copy: str = "",
        flushed: bool = False,
    ) -> Sending:
        """Sends the jobs' messages without waiting for the bus's acknowledgements (`acknowledged`
        waits for them); `flushed`: see `AckPipeline.send`."""
        if self.pipeline is None or not jobs:
            return Sending(jobs, [], None)
        ready, objects = await self._store_large_bodies(jobs)
        traces = traces or {}
        messages = [work_message(self.subjects, j, objects.get(j.id, ""), traces.get(j.id), copy) for j in ready]
        return Sending(jobs, ready, await self.pipeline.send(messages, flushed))

    async def acknowledged(self, sending: Sending) -> set[str]:
        """The ids of the jobs whose messages the bus acknowledged (the rest it refused, or did
        not answer within the deadline)."""
        if sending.sent is None or self.pipeline is None:
            return set()
        outcomes = await self.pipeline.acknowledgements(sending.sent)
        acknowledged = set()
        for job, error in zip(sending.ready, outcomes, strict=True):
            channel = label(common_pb2.Channel.Name(job.channel))
            if error is None:
                acknowledged.add(job.id)
                JOBS_PUBLISHED.labels(channel).inc()
            else:
                PUBLISH_FAILURES.labels(channel).inc()
        if len(acknowledged) < len(sending.jobs):
            first = next((e for e in outcomes if e is not None), None)
            log.warning(
                "bus did not acknowledge; jobs stay PENDING for the outbox",
                extra={"unacknowledged": len(sending.jobs) - len(acknowledged), "error": repr(first)},
            )
        return acknowledged

    async def publish_or_restore(self, jobs: list[common_pb2.Job], copy: str = "") -> set[str]:
        """`publish`, for jobs already committed (the outbox's, the reconciler's): when the bus
        refused some because the work stream is gone (deleted), the streams are ensured and those
        published once more. Whatever is still refused stays with its caller's next round."""
        published = await self.publish(jobs, copy=copy)
        refused = [j for j in jobs if j.id not in published]
        if not refused or self.js is None or not self.connected:
            return published
        try:
            await ensure_streams(self.js, self.settings)
        except Exception as error:
            log.warning("work streams not ensured", extra={"error": repr(error)})
            return published
        return published | await self.publish(refused, copy=copy)

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
