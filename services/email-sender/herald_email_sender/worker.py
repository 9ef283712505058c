"""The email delivery loop: one worker per work class (tenant email, platform email).

Take the next message in fair order (`herald.bus.fair`) whenever a delivery slot is free;
ask the ledger whether the job may start (coalesced: a redelivery of a finished job is
acknowledged and skipped; one held back by its ordering key comes back shortly); walk the
tenant's providers (`walk`), renewing the message's AckWait after each provider; record
the walk (one attempt row per provider considered) and the job's next status; only after
the ledger committed, acknowledge (or NAK with the retry delay).

What a walk's verdict does to the job:
- ACCEPTED: DELIVERED, with the accepting provider's message id on the job and attempt.
- FAILED_PERMANENTLY: FAILED at once, with the walk's error.
- FAILED_TRANSIENTLY: the walk spent one of the job's attempts. Before the last: QUEUED,
  and the message is NAKed with the schedule's delay (at least the provider's Retry-After):
  JetStream redelivers it then; nothing sleeps in process. After the last: the dead-letter
  queue (`herald.dead_letters`): published first, then FAILED and marked dead-lettered in
  the ledger, then acknowledged, then operators alerted.

Attempts are counted in the ledger (walks), not by JetStream's redelivery count, so a
crash mid-walk redelivers the message after AckWait without spending an attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from opentelemetry import trace

from herald import dead_letters
from herald.batching import Batcher
from herald.bus.fair import FairFetcher
from herald.bus.subjects import Subjects
from herald.telemetry.metrics import DELIVERIES, DELIVERY_SECONDS, observe_finished
from herald.telemetry.metrics import label as metric_label
from herald.telemetry.propagation import extract_context
from herald.v1 import common_pb2, email_sender_pb2, ledger_pb2, ledger_pb2_grpc
from herald_email_sender.breaker import BreakerBoard
from herald_email_sender.credentials import ProviderSet
from herald_email_sender.dispatch import Senders
from herald_email_sender.outcome import Outcome
from herald_email_sender.walk import Attempt, Verdict, WalkResult, walk

log = logging.getLogger("herald.email_sender")
_tracer = trace.get_tracer("herald.email_sender")

ORDERING_RETRY_S = 0.05
# The bus or the ledger did not answer: the message comes back after this.
HAND_BACK_S = 2.0

OUTCOMES = {
    Outcome.ACCEPTED: common_pb2.ATTEMPT_OUTCOME_SUCCEEDED,
    Outcome.PERMANENT: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
    Outcome.TRANSIENT: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Outcome.SKIPPED: common_pb2.ATTEMPT_OUTCOME_SKIPPED,
}


@dataclass
class Counters:
    in_flight: int = 0
    delivered: int = 0
    failed: int = 0
    dead_lettered: int = 0


@dataclass(frozen=True)
class WorkerConfig:
    # "email" or "platform_email": the metrics' channel label and the jobs' channel.
    channel: int
    concurrency: int
    # Delays before walks 2, 3, ...: the job gets len(schedule) + 1 walks.
    retry_schedule_s: tuple[float, ...]
    # Breakers are keyed by tenant; platform email shares one key (one provider for all).
    breaker_tenant: str = ""
    # Why a job fails when there is no provider at all (platform email without settings).
    no_provider_error: str = ""

    @property
    def label(self) -> str:
        return "platform_email" if self.channel == common_pb2.CHANNEL_PLATFORM_EMAIL else "email"

    @property
    def max_walks(self) -> int:
        return len(self.retry_schedule_s) + 1


ProviderLookup = Callable[[str], Awaitable[ProviderSet]]


class EmailWorker:
    def __init__(
        self,
        config: WorkerConfig,
        fetcher: FairFetcher,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        providers: ProviderLookup,
        senders: Senders,
        breakers: BreakerBoard,
        js: JetStreamContext,
        subjects: Subjects,
        alerter: dead_letters.Alerter,
        counters: Counters | None = None,
    ) -> None:
        self.config = config
        self.fetcher = fetcher
        self.ledger = ledger
        self.providers = providers
        self.senders = senders
        self.breakers = breakers
        self.js = js
        self.subjects = subjects
        self.alerter = alerter
        self.counters = counters or Counters()
        self.recorder: Batcher[ledger_pb2.WalkRecord, None] = Batcher(self._record, max_items=200, max_concurrent=1)
        self.starter: Batcher[str, ledger_pb2.DeliveryStart] = Batcher(
            self._start_many, max_items=200, max_concurrent=1
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(config.concurrency)

    async def run(self, stopping: asyncio.Event) -> None:
        stop = asyncio.create_task(stopping.wait())
        while not stopping.is_set():
            await self._slots.acquire()
            taking = asyncio.create_task(self.fetcher.next())
            await asyncio.wait({taking, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not taking.done():
                taking.cancel()
                self._slots.release()
                break
            task = asyncio.create_task(self._handle(taking.result()))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        stop.cancel()
        for message in await self.fetcher.stop():
            with contextlib.suppress(Exception):
                await message.nak()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.recorder.drain()

    async def _start_many(self, job_ids: list[str]) -> list[ledger_pb2.DeliveryStart]:
        started = await self.ledger.StartDeliveries(ledger_pb2.StartDeliveriesRequest(job_ids=job_ids))
        return list(started.starts)

    async def _record(self, walks: list[ledger_pb2.WalkRecord]) -> list[None]:
        await self.ledger.RecordWalks(ledger_pb2.RecordWalksRequest(walks=walks))
        return [None] * len(walks)

    async def _handle(self, message: Msg) -> None:
        try:
            delivery = email_sender_pb2.EmailDelivery()
            try:
                delivery.ParseFromString(message.data)
            except Exception:
                log.error("unreadable work message dropped", extra={"subject": message.subject})
                await message.term()
                return
            try:
                start = await self.starter.submit(delivery.job_id)
            except Exception as error:
                log.warning("ledger unavailable; handing the message back", extra={"error": repr(error)})
                await message.nak(delay=1.0)
                return
            if start.wait:
                await message.nak(delay=ORDERING_RETRY_S)
            elif not start.proceed:
                # Already finished (a redelivery after a crash) or unknown: never send twice.
                await message.ack()
            else:
                # The trace the publisher started (HTTP request, router) continues here.
                with _tracer.start_as_current_span(
                    f"{self.config.label}.walk",
                    context=extract_context(message.headers),
                    kind=trace.SpanKind.CONSUMER,
                    attributes={"herald.job_id": delivery.job_id, "herald.attempt": start.attempt_count + 1},
                ):
                    await self._deliver(message, delivery, start.attempt_count + 1)
        except Exception:
            # A bug here must cost one message a redelivery, never the worker.
            log.exception("email delivery failed unexpectedly; message left for redelivery")
        finally:
            self._slots.release()

    async def _deliver(self, message: Msg, delivery: email_sender_pb2.EmailDelivery, walk_number: int) -> None:
        self.counters.in_flight += 1
        try:
            try:
                providers = await self.providers(delivery.tenant_id)
            except Exception as error:
                log.warning("provider configs unavailable; handed back", extra={"error": repr(error)})
                await message.nak(delay=HAND_BACK_S)
                return
            if not providers.configs and self.config.no_provider_error:
                result = WalkResult(Verdict.FAILED_PERMANENTLY, (), self.config.no_provider_error)
            else:
                result = await self._walk(message, delivery, providers)
            await self._conclude(message, delivery, walk_number, result)
        finally:
            self.counters.in_flight -= 1

    async def _walk(self, message: Msg, delivery: email_sender_pb2.EmailDelivery, providers: ProviderSet) -> WalkResult:
        async def still_working(attempt: Attempt) -> None:
            # A walk over several slow providers can outlast AckWait: renew it after each.
            with contextlib.suppress(Exception):
                await message.in_progress()

        request = delivery.request
        return await walk(
            request,
            providers.configs,
            providers.open,
            senders=self.senders,
            tenant_id=self.config.breaker_tenant or delivery.tenant_id,
            # The tenant's Idempotency-Key when it gave one, else one derived from the job:
            # the same for every walk and every run of the job, so a provider that honours
            # it (Resend) never sends one job twice after a timeout.
            idempotency_key=delivery.idempotency_key or f"herald-{delivery.job_id}",
            breakers=self.breakers,
            on_attempt=still_working,
        )

    async def _conclude(
        self, message: Msg, delivery: email_sender_pb2.EmailDelivery, walk_number: int, result: WalkResult
    ) -> None:
        label = self.config.label
        for attempt in result.attempts:
            outcome = metric_label(common_pb2.AttemptOutcome.Name(OUTCOMES[attempt.outcome]))
            DELIVERIES.labels(label, outcome, attempt.provider).inc()
            if attempt.called:
                DELIVERY_SECONDS.labels(label).observe(attempt.duration_ms / 1000)
        record = ledger_pb2.WalkRecord(job_id=delivery.job_id, calls=[_attempt_proto(a) for a in result.attempts])
        retry_delay: float | None = None
        entry: common_pb2.DeadLetter | None = None
        accepted = result.accepted
        if result.verdict is Verdict.ACCEPTED and accepted is not None:
            record.next_status = common_pb2.JOB_STATUS_DELIVERED
            record.provider_id = accepted.provider_id
            record.provider_message_id = accepted.message_id
        elif result.verdict is Verdict.FAILED_TRANSIENTLY and walk_number < self.config.max_walks:
            record.next_status = common_pb2.JOB_STATUS_QUEUED
            record.error = result.error
            retry_delay = max(self.config.retry_schedule_s[walk_number - 1], result.retry_after_s or 0.0)
        elif result.verdict is Verdict.FAILED_TRANSIENTLY:
            record.next_status = common_pb2.JOB_STATUS_FAILED
            record.error = result.error
            entry = dead_letters.entry_for(
                job_id=delivery.job_id,
                tenant_id=delivery.tenant_id,
                channel=self.config.channel,
                error=result.error,
                attempts=walk_number,
                run=delivery.run,
                work_message=message.data,
                work_subject=message.subject,
            )
            try:
                record.dead_letter_sequence = await dead_letters.publish(self.js, self.subjects, entry)
            except Exception as error:
                # Not in the dead-letter stream, so not failed yet: the message comes back
                # after AckWait and the last walk runs again (its attempt was not recorded).
                log.warning("dead-letter stream unavailable; handed back", extra={"error": repr(error)})
                await message.nak(delay=HAND_BACK_S)
                return
            record.dead_lettered = True
        else:
            record.next_status = common_pb2.JOB_STATUS_FAILED
            record.error = result.error
        try:
            await self.recorder.submit(record)
        except Exception as error:
            # Not recorded, so not acknowledged: the bus redelivers it later.
            log.warning("could not record the walk; message handed back", extra={"error": repr(error)})
            await message.nak(delay=HAND_BACK_S)
            return
        if retry_delay is not None:
            await message.nak(delay=retry_delay)
        else:
            await message.ack()
        if record.next_status == common_pb2.JOB_STATUS_DELIVERED:
            self.counters.delivered += 1
        elif record.next_status == common_pb2.JOB_STATUS_FAILED:
            self.counters.failed += 1
        if record.next_status != common_pb2.JOB_STATUS_QUEUED:
            observe_finished(label, delivery.job_id, walk_number, record.next_status == common_pb2.JOB_STATUS_DELIVERED)
        if entry is not None:
            self.counters.dead_lettered += 1
            log.warning(
                "job dead-lettered",
                extra={"job_id": delivery.job_id, "tenant_id": delivery.tenant_id, "walks": walk_number},
            )
            self.alerter.notify(entry)


def _attempt_proto(attempt: Attempt) -> common_pb2.Attempt:
    proto = common_pb2.Attempt(
        target=attempt.provider,
        outcome=OUTCOMES[attempt.outcome],  # type: ignore[arg-type]
        status_code=attempt.status_code,
        duration_ms=attempt.duration_ms,
        error=attempt.error,
        provider_id=attempt.provider_id,
        provider_message_id=attempt.message_id,
    )
    proto.started_at.FromDatetime(attempt.started_at)
    return proto
