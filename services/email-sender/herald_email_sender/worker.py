"""The email delivery: the phases `herald.sender.loop.Sender` runs for each started job, one
worker per work class (tenant email, platform email).

- prepare: the tenant's provider configurations (sealed; opened per call in the walk);
- call: the walk over the tenant's providers (`walk`), holding a slot, renewing the message's
  AckWait after each provider;
- conclude: the walk's record (one attempt row per provider considered) and the job's next
  status, sent to the ledger with the starts of the next jobs in one AdvanceWalks call.

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

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nats.js import JetStreamContext

from herald import dead_letters
from herald.bus.fair import FairFetcher
from herald.bus.subjects import Subjects
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.sender.loop import Conclusion, Counters, HandBack, Job, Sender
from herald.telemetry.metrics import DELIVERIES, DELIVERY_SECONDS
from herald.telemetry.metrics import label as metric_label
from herald.v1 import common_pb2, email_sender_pb2, ledger_jobs_pb2
from herald_email_sender.breaker import BreakerBoard
from herald_email_sender.credentials import ProviderSet
from herald_email_sender.dispatch import Senders
from herald_email_sender.outcome import Outcome
from herald_email_sender.walk import Attempt, Verdict, WalkResult, walk

__all__ = ["Counters", "EmailWorker", "WorkerConfig"]

OUTCOMES = {
    Outcome.ACCEPTED: common_pb2.ATTEMPT_OUTCOME_SUCCEEDED,
    Outcome.PERMANENT: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
    Outcome.TRANSIENT: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Outcome.SKIPPED: common_pb2.ATTEMPT_OUTCOME_SKIPPED,
}
Delivery = email_sender_pb2.EmailDelivery


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
    # Retries this long or longer are parked in the ledger, off the bus (Settings.park_retries_from_s).
    park_from_s: float | None = None

    @property
    def label(self) -> str:
        return "platform_email" if self.channel == common_pb2.CHANNEL_PLATFORM_EMAIL else "email"

    @property
    def max_walks(self) -> int:
        return len(self.retry_schedule_s) + 1


ProviderLookup = Callable[[str], Awaitable[ProviderSet]]


class EmailWorker(Sender[Delivery, ProviderSet, WalkResult, ledger_jobs_pb2.WalkRecord]):
    work_type = Delivery

    def __init__(
        self,
        config: WorkerConfig,
        fetcher: FairFetcher,
        ledger: Ledger,
        providers: ProviderLookup,
        senders: Senders,
        breakers: BreakerBoard,
        js: JetStreamContext,
        subjects: Subjects,
        alerter: dead_letters.Alerter,
        counters: Counters | None = None,
    ) -> None:
        super().__init__(
            fetcher=fetcher,
            js=js,
            subjects=subjects,
            alerter=alerter,
            concurrency=config.concurrency,
            counters=counters,
            park_from_s=config.park_from_s,
        )
        self.config = config
        self.label = config.label
        self.channel = config.channel
        self.span_name = f"{config.label}.walk"
        self.ledger = ledger
        self.providers = providers
        self.senders = senders
        self.breakers = breakers

    async def advance(
        self, records: list[ledger_jobs_pb2.WalkRecord], start_job_ids: list[str]
    ) -> list[ledger_jobs_pb2.DeliveryStart]:
        answer = await self.ledger.jobs.AdvanceWalks(
            ledger_jobs_pb2.AdvanceWalksRequest(walks=records, start_job_ids=start_job_ids), timeout=CALL_DEADLINE_S
        )
        return list(answer.starts)

    async def prepare(self, job: Job[Delivery]) -> ProviderSet:
        try:
            return await self.providers(job.work.tenant_id)
        except Exception as error:
            raise HandBack(f"provider configs unavailable ({error!r})") from error

    async def call(self, job: Job[Delivery], prepared: ProviderSet) -> WalkResult:
        if not prepared.configs and self.config.no_provider_error:
            return WalkResult(Verdict.FAILED_PERMANENTLY, (), self.config.no_provider_error)
        # A walk over several slow providers can outlast AckWait: the loop keeps it in progress.
        delivery = job.work
        return await walk(
            delivery.request,
            prepared.configs,
            prepared.open,
            senders=self.senders,
            tenant_id=self.config.breaker_tenant or delivery.tenant_id,
            # The tenant's Idempotency-Key when it gave one, else one derived from the job:
            # the same for every walk and every run of the job, so a provider that honours
            # it (Resend) never sends one job twice after a timeout.
            idempotency_key=delivery.idempotency_key or f"herald-{delivery.job_id}",
            breakers=self.breakers,
        )

    async def conclude(
        self, job: Job[Delivery], prepared: ProviderSet, called: WalkResult
    ) -> Conclusion[ledger_jobs_pb2.WalkRecord]:
        result, walk_number = called, job.attempt
        for attempt in result.attempts:
            outcome = metric_label(common_pb2.AttemptOutcome.Name(OUTCOMES[attempt.outcome]))
            DELIVERIES.labels(self.label, outcome, attempt.provider).inc()
            if attempt.called:
                DELIVERY_SECONDS.labels(self.label).observe(attempt.duration_ms / 1000)
        record = ledger_jobs_pb2.WalkRecord(job_id=job.work.job_id, calls=[_attempt_proto(a) for a in result.attempts])
        accepted = result.accepted
        if result.verdict is Verdict.ACCEPTED and accepted is not None:
            record.next_status = common_pb2.JOB_STATUS_DELIVERED
            record.provider_id = accepted.provider_id
            record.provider_message_id = accepted.message_id
            return Conclusion(record)
        record.error = result.error
        if result.verdict is Verdict.FAILED_TRANSIENTLY and walk_number < self.config.max_walks:
            record.next_status = common_pb2.JOB_STATUS_QUEUED
            delay = max(self.config.retry_schedule_s[walk_number - 1], result.retry_after_s or 0.0)
            return Conclusion(record, retry_delay_s=delay)
        record.next_status = common_pb2.JOB_STATUS_FAILED
        if result.verdict is Verdict.FAILED_TRANSIENTLY:
            return Conclusion(record, dead_letter_error=result.error)
        return Conclusion(record)


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
