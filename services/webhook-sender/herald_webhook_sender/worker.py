"""The delivery loop.

Take the next message in fair order (`herald.bus.fair`) while the window of
started jobs has room; ask the ledger whether the job may start (coalesced with
concurrent asks into one call: a redelivered job that is already DELIVERED is
acknowledged and skipped; one held back by its ordering key goes back for a
moment); deliver, holding one of `webhook_concurrency` slots only for the
receiver call; record the attempt; and only after the ledger committed it,
acknowledge the message. A crash at any point leaves the message unacknowledged
and JetStream redelivers it after AckWait, which exceeds the HTTP timeout so a
slow receiver is never handed to a second sender while the first still waits.

The window (`WINDOW_PER_SLOT` started jobs per slot) is what lets the ledger's
start and record calls carry many jobs each while the slots stay busy with
receivers: profiled, a slot that also waited for its own two ledger calls spent
most of its time there, and five slots delivered about 140 jobs/s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import httpx
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from opentelemetry import trace

from herald import dead_letters
from herald.batching import Batcher
from herald.bus.fair import FairFetcher
from herald.bus.payloads import PayloadStore
from herald.config import Settings
from herald.telemetry.metrics import DELIVERIES, DELIVERY_SECONDS, WEBHOOK_PROVIDER, label, observe_finished
from herald.telemetry.propagation import extract_context
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc, webhook_sender_pb2
from herald.webhooks.retry_policy import RetryPolicy, Verdict, attempt_error_class, decide
from herald.webhooks.target_guard import AllowList, TargetGuard
from herald_webhook_sender.client import call_receiver
from herald_webhook_sender.pacing import Pacer
from herald_webhook_sender.signing import Signer
from herald_webhook_sender.target_health import TargetHealth
from herald_webhook_sender.tenant_config import TenantConfig

log = logging.getLogger("herald.webhook_sender")
_tracer = trace.get_tracer("herald.webhook_sender")


@dataclass
class Counters:
    in_flight: int = 0
    delivered: int = 0
    failed: int = 0


# A job id to start, or an attempt to record (see WebhookWorker.ledger_steps).
LedgerStep = ledger_pb2.AttemptResult | str
ORDERING_RETRY_S = 0.05
WINDOW_PER_SLOT = 8
OUTCOMES = {
    Verdict.DELIVERED: common_pb2.ATTEMPT_OUTCOME_SUCCEEDED,
    Verdict.RETRY: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Verdict.EXHAUSTED: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Verdict.FAILED: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
    Verdict.GONE: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
}


class WebhookWorker:
    def __init__(
        self,
        settings: Settings,
        fetcher: FairFetcher,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        signer: Signer,
        js: JetStreamContext,
        alerter: dead_letters.Alerter,
        pacer: Pacer | None = None,
    ) -> None:
        self.settings = settings
        self.js = js
        self.alerter = alerter
        self.subjects = settings.subjects()
        self.payloads = PayloadStore(js, settings.payload_bucket, settings.stream_replicas)
        self.fetcher = fetcher
        self.ledger = ledger
        self.signer = signer
        self.counters = Counters()
        self.policy = RetryPolicy(
            schedule_s=tuple(settings.webhook_retry_schedule_s),
            jitter=settings.webhook_retry_jitter,
            retry_statuses=frozenset(settings.webhook_retry_statuses),
            retry_after_max_s=settings.webhook_retry_after_max_s,
        )
        # Every connection goes to an address the guard checked at connect time, so a
        # target cannot reach private ranges, even by re-pointing its DNS (rebinding).
        guard = TargetGuard(AllowList.parse(settings.target_allow, loopback=settings.webhook_allow_loopback))
        self.http = httpx.AsyncClient(
            transport=guard.transport(limits=httpx.Limits(max_connections=settings.webhook_concurrency * 2)),
            timeout=settings.webhook_timeout_s,
            follow_redirects=False,
        )
        # What finished (an attempt to record) and what begins (a job id to start) go to the
        # ledger together: one AdvanceDeliveries call and transaction for both.
        self.ledger_steps: Batcher[LedgerStep, ledger_pb2.DeliveryStart | None] = Batcher(
            self._advance, max_items=400, max_concurrent=1
        )
        self._tasks: set[asyncio.Task[None]] = set()
        # Receiver calls at once: what `webhook_concurrency` promises receivers.
        self._slots = asyncio.Semaphore(settings.webhook_concurrency)
        # Jobs taken from the bus and not yet finished.
        self._window = asyncio.Semaphore(settings.webhook_concurrency * WINDOW_PER_SLOT)
        # Targets' rate limits, tenants' retry schedules, targets' failing streaks.
        self.pacer = pacer or Pacer(None)
        self.config = TenantConfig(ledger, self.policy, settings.webhook_config_cache_ttl_s)
        self.health = TargetHealth(ledger, alerter, settings.webhook_target_disable_after_s)

    async def run(self, stopping: asyncio.Event) -> None:
        stop = asyncio.create_task(stopping.wait())
        while not stopping.is_set():
            await self._window.acquire()
            taking = asyncio.create_task(self.fetcher.next())
            await asyncio.wait({taking, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not taking.done():
                taking.cancel()
                self._window.release()
                break
            task = asyncio.create_task(self._handle(taking.result()))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        stop.cancel()
        for message in await self.fetcher.stop():
            await message.nak()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.ledger_steps.drain()

    async def _advance(self, steps: list[LedgerStep]) -> list[ledger_pb2.DeliveryStart | None]:
        results = [s for s in steps if isinstance(s, ledger_pb2.AttemptResult)]
        job_ids = [s for s in steps if isinstance(s, str)]
        answer = await self.ledger.AdvanceDeliveries(
            ledger_pb2.AdvanceDeliveriesRequest(results=results, start_job_ids=job_ids)
        )
        starts = iter(answer.starts)
        return [next(starts) if isinstance(s, str) else None for s in steps]

    async def _start(self, job_id: str) -> ledger_pb2.DeliveryStart:
        start = await self.ledger_steps.submit(job_id)
        assert start is not None
        return start

    async def _handle(self, message: Msg) -> None:
        try:
            delivery = webhook_sender_pb2.WebhookDelivery()
            try:
                delivery.ParseFromString(message.data)
            except Exception:
                log.error("unreadable work message dropped", extra={"subject": message.subject})
                await message.term()
                return
            if delivery.target_id and await self._held_back(message, delivery):
                return
            try:
                start = await self._start(delivery.job_id)
            except Exception as error:
                log.warning("ledger unavailable; handing the message back", extra={"error": repr(error)})
                await message.nak(delay=1.0)
                return
            if start.wait:
                await message.nak(delay=ORDERING_RETRY_S)
            elif not start.proceed:
                # Already finished (a redelivery after a crash) or unknown: never deliver twice.
                await message.ack()
            else:
                with _tracer.start_as_current_span(
                    "webhook.deliver",
                    context=extract_context(message.headers),
                    kind=trace.SpanKind.CONSUMER,
                    attributes={"herald.job_id": delivery.job_id, "herald.attempt": start.attempt_count + 1},
                ):
                    await self._deliver(message, delivery, start.attempt_count)
        finally:
            self._window.release()

    async def _take_slot(self, message: Msg) -> None:
        """Waits for a receiver slot; a long wait (slow receivers holding every slot) tells
        the bus the message is in progress, so it is not redelivered to another sender."""
        acquiring = asyncio.ensure_future(self._slots.acquire())
        try:
            while True:
                done, _ = await asyncio.wait({acquiring}, timeout=max(self.settings.webhook_ack_wait_s / 3, 0.5))
                if done:
                    return
                with contextlib.suppress(Exception):
                    await message.in_progress()
        except asyncio.CancelledError:
            if acquiring.done() and not acquiring.cancelled():
                self._slots.release()
            acquiring.cancel()
            raise

    async def _held_back(self, message: Msg, delivery: webhook_sender_pb2.WebhookDelivery) -> bool:
        """The target's rate limit: a delivery whose turn has not come goes back to the bus
        until it has (NAK with delay), before it starts, so it is no attempt at all."""
        limit = await self.config.rate_limit(delivery.tenant_id, delivery.target_id)
        wait_s = await self.pacer.take(delivery.target_id, limit) if limit else 0.0
        if wait_s > 0:
            await message.nak(delay=wait_s)
            return True
        return False

    async def _deliver(self, message: Msg, delivery: webhook_sender_pb2.WebhookDelivery, previous: int) -> None:
        self.counters.in_flight += 1
        try:
            if delivery.payload_object:
                try:
                    delivery.request.body = await self.payloads.get(delivery.payload_object)
                except Exception as error:
                    log.warning("large payload unavailable; handed back", extra={"error": repr(error)})
                    await message.nak(delay=2.0)
                    return
            try:
                signature = await self.signer.headers(delivery.tenant_id, delivery.job_id, delivery.request.body)
            except Exception as error:
                # Never send unsigned what should be signed: hand it back and try later.
                log.error("cannot sign delivery; handed back", extra={"job_id": delivery.job_id, "error": repr(error)})
                await message.nak(delay=5.0)
                return
            await self._take_slot(message)
            try:
                result = await call_receiver(self.http, delivery.job_id, delivery.request, signature)
            finally:
                self._slots.release()
            attempt_number = previous + 1
            policy = await self.config.policy(delivery.tenant_id)
            if result.status_code is not None:
                decision = decide(
                    policy, attempt_number, status_code=result.status_code, retry_after=result.retry_after
                )
            else:
                assert result.error is not None
                decision = decide(policy, attempt_number, error=result.error)
            outcome = OUTCOMES[decision.verdict]
            DELIVERY_SECONDS.labels("webhook").observe(result.duration_ms / 1000)
            DELIVERIES.labels("webhook", label(common_pb2.AttemptOutcome.Name(outcome)), WEBHOOK_PROVIDER).inc()
            next_status = {
                Verdict.DELIVERED: common_pb2.JOB_STATUS_DELIVERED,
                Verdict.RETRY: common_pb2.JOB_STATUS_QUEUED,
            }.get(decision.verdict, common_pb2.JOB_STATUS_FAILED)
            attempt = common_pb2.Attempt(
                job_id=delivery.job_id,
                target=delivery.request.url,
                outcome=outcome,  # type: ignore[arg-type]
                status_code=result.status_code or 0,
                duration_ms=result.duration_ms,
                error="" if decision.verdict is Verdict.DELIVERED else decision.reason,
                error_class=attempt_error_class(result.status_code, result.error),
                response_headers=result.response_headers,
                response_excerpt=result.response_excerpt,
            )
            attempt.started_at.FromDatetime(result.started_at)
            job_error = decision.reason if next_status == common_pb2.JOB_STATUS_FAILED else ""
            record = ledger_pb2.AttemptResult(attempt=attempt, next_status=next_status, error=job_error)
            entry: common_pb2.DeadLetter | None = None
            if decision.verdict is Verdict.EXHAUSTED:
                # Out of attempts: into the dead-letter stream first, then FAILED (see herald.dead_letters).
                entry = dead_letters.entry_for(
                    job_id=delivery.job_id,
                    tenant_id=delivery.tenant_id,
                    channel=common_pb2.CHANNEL_WEBHOOK,
                    error=decision.reason,
                    attempts=attempt_number,
                    run=delivery.run,
                    work_message=message.data,
                    work_subject=message.subject,
                )
                try:
                    record.dead_letter_sequence = await dead_letters.publish(self.js, self.subjects, entry)
                except Exception as error:
                    log.warning("dead-letter stream unavailable; handed back", extra={"error": repr(error)})
                    await message.nak(delay=2.0)
                    return
                record.dead_lettered = True
            try:
                await self.ledger_steps.submit(record)
            except Exception as error:
                # Not recorded, so not acknowledged: the bus redelivers it later.
                log.warning("could not record attempt; message handed back", extra={"error": repr(error)})
                await message.nak(delay=2.0)
                return
            if decision.verdict is Verdict.RETRY:
                await message.nak(delay=decision.delay_s)
            else:
                await message.ack()
            if next_status == common_pb2.JOB_STATUS_DELIVERED:
                self.counters.delivered += 1
            elif next_status == common_pb2.JOB_STATUS_FAILED:
                self.counters.failed += 1
            if next_status != common_pb2.JOB_STATUS_QUEUED:
                observe_finished(
                    "webhook", delivery.job_id, attempt_number, next_status == common_pb2.JOB_STATUS_DELIVERED
                )
            if entry is not None:
                log.warning("job dead-lettered", extra={"job_id": delivery.job_id, "attempts": attempt_number})
                self.alerter.notify(entry)
            if delivery.payload_object and next_status != common_pb2.JOB_STATUS_QUEUED:
                # The job has ended: its body is no longer needed beside the message.
                await self.payloads.delete(delivery.payload_object)
            if decision.verdict is Verdict.GONE and delivery.target_id:
                await self._disable_target(delivery, decision.reason)
            elif delivery.target_id:
                self._background(
                    self.health.report(
                        delivery.tenant_id,
                        delivery.target_id,
                        decision.verdict is Verdict.DELIVERED,
                        result.started_at,
                    )
                )
        finally:
            self.counters.in_flight -= 1

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _disable_target(self, delivery: webhook_sender_pb2.WebhookDelivery, reason: str) -> None:
        """410 Gone: the receiver says the endpoint is gone for good, so the target stops
        receiving events (the ledger's change notification updates every router's cache)."""
        try:
            await self.ledger.UpdateWebhookTarget(
                ledger_pb2.UpdateWebhookTargetRequest(
                    tenant_id=delivery.tenant_id,
                    target_id=delivery.target_id,
                    enabled=False,
                    disabled_reason=f"disabled automatically: {reason} (410 Gone)",
                )
            )
            log.warning("target disabled after 410 Gone", extra={"target_id": delivery.target_id})
        except Exception as error:
            log.warning(
                "could not disable a gone target", extra={"target_id": delivery.target_id, "error": repr(error)}
            )

    async def close(self) -> None:
        await self.http.aclose()
