"""The delivery loop.

Fetch up to the free concurrency from the durable consumer; ask the ledger, in
one call for the batch, which jobs may start (a redelivered job that is already
DELIVERED is acknowledged and skipped); deliver each; record the attempt; and
only after the ledger committed it, acknowledge the message. A crash at any
point leaves the message unacknowledged and JetStream redelivers it after
AckWait, which exceeds the HTTP timeout so a slow receiver is never handed to a
second sender while the first still waits.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import httpx
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import FetchTimeoutError

from herald.batching import Batcher
from herald.config import Settings
from herald.telemetry.metrics import DELIVERIES, DELIVERY_SECONDS, label
from herald.v1 import common_pb2, ledger_pb2, ledger_pb2_grpc, webhook_sender_pb2
from herald_webhook_sender.client import call_receiver
from herald_webhook_sender.signing import Signer

log = logging.getLogger("herald.webhook_sender")


@dataclass
class Counters:
    in_flight: int = 0
    delivered: int = 0
    failed: int = 0


class WebhookWorker:
    def __init__(
        self,
        settings: Settings,
        subscription: JetStreamContext.PullSubscription,
        ledger: ledger_pb2_grpc.LedgerServiceAsyncStub,
        signer: Signer,
    ) -> None:
        self.settings = settings
        self.signer = signer
        self.subscription = subscription
        self.ledger = ledger
        self.counters = Counters()
        self.http = httpx.AsyncClient(
            timeout=settings.webhook_timeout_s,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=settings.webhook_concurrency * 2),
        )
        self.recorder: Batcher[ledger_pb2.AttemptResult, None] = Batcher(self._record, max_items=200)
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(settings.webhook_concurrency)

    @property
    def max_attempts(self) -> int:
        return len(self.settings.webhook_retry_schedule_s) + 1

    async def run(self, stopping: asyncio.Event) -> None:
        concurrency = self.settings.webhook_concurrency
        while not stopping.is_set():
            free = concurrency - len(self._tasks)
            if free <= 0:
                await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                messages = await self.subscription.fetch(batch=free, timeout=1.0)
            except (FetchTimeoutError, TimeoutError):
                continue
            except Exception as error:
                log.warning("fetch failed", extra={"error": repr(error)})
                await asyncio.sleep(0.5)
                continue
            await self._start(messages)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.recorder.drain()

    async def _start(self, messages: list[Msg]) -> None:
        deliveries = []
        for message in messages:
            delivery = webhook_sender_pb2.WebhookDelivery()
            try:
                delivery.ParseFromString(message.data)
            except Exception:
                log.error("unreadable work message dropped", extra={"subject": message.subject})
                await message.term()
                continue
            deliveries.append((message, delivery))
        if not deliveries:
            return
        try:
            started = await self.ledger.StartDeliveries(
                ledger_pb2.StartDeliveriesRequest(job_ids=[d.job_id for _, d in deliveries])
            )
        except Exception as error:
            log.warning("ledger unavailable; handing messages back", extra={"error": repr(error)})
            for message, _ in deliveries:
                await message.nak(delay=1.0)
            return
        for (message, delivery), start in zip(deliveries, started.starts, strict=True):
            if not start.proceed:
                # Already finished (a redelivery after a crash) or unknown: never deliver twice.
                await message.ack()
                continue
            task = asyncio.create_task(self._deliver(message, delivery, start.attempt_count))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _deliver(self, message: Msg, delivery: webhook_sender_pb2.WebhookDelivery, previous: int) -> None:
        self.counters.in_flight += 1
        try:
            try:
                signature = await self.signer.headers(delivery.tenant_id, delivery.job_id, delivery.request.body)
            except Exception as error:
                # Never send unsigned what should be signed: hand it back and try later.
                log.error("cannot sign delivery; handed back", extra={"job_id": delivery.job_id, "error": repr(error)})
                await message.nak(delay=5.0)
                return
            result = await call_receiver(self.http, delivery.job_id, delivery.request, signature)
            DELIVERY_SECONDS.labels("webhook").observe(result.duration_ms / 1000)
            outcome_name = label(common_pb2.AttemptOutcome.Name(result.outcome))
            DELIVERIES.labels("webhook", outcome_name).inc()
            attempt_number = previous + 1
            retry_delay: float | None = None
            if result.outcome == common_pb2.ATTEMPT_OUTCOME_SUCCEEDED:
                next_status = common_pb2.JOB_STATUS_DELIVERED
            elif result.outcome == common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE and attempt_number < self.max_attempts:
                next_status = common_pb2.JOB_STATUS_QUEUED
                retry_delay = self.settings.webhook_retry_schedule_s[attempt_number - 1]
            else:
                next_status = common_pb2.JOB_STATUS_FAILED
            attempt = common_pb2.Attempt(
                job_id=delivery.job_id,
                target=delivery.request.url,
                outcome=result.outcome,  # type: ignore[arg-type]
                status_code=result.status_code,
                duration_ms=result.duration_ms,
                error=result.error,
            )
            attempt.started_at.FromDatetime(result.started_at)
            job_error = result.error if next_status == common_pb2.JOB_STATUS_FAILED else ""
            try:
                await self.recorder.submit(
                    ledger_pb2.AttemptResult(attempt=attempt, next_status=next_status, error=job_error)
                )
            except Exception as error:
                # Not recorded, so not acknowledged: the bus redelivers it later.
                log.warning("could not record attempt; message handed back", extra={"error": repr(error)})
                await message.nak(delay=2.0)
                return
            if retry_delay is not None:
                await message.nak(delay=retry_delay)
            else:
                await message.ack()
            if next_status == common_pb2.JOB_STATUS_DELIVERED:
                self.counters.delivered += 1
            elif next_status == common_pb2.JOB_STATUS_FAILED:
                self.counters.failed += 1
        finally:
            self.counters.in_flight -= 1

    async def _record(self, results: list[ledger_pb2.AttemptResult]) -> list[None]:
        await self.ledger.RecordAttempts(ledger_pb2.RecordAttemptsRequest(results=results))
        return [None] * len(results)

    async def close(self) -> None:
        await self.http.aclose()
