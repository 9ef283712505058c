"""The webhook delivery: the phases `herald.sender.loop.Sender` runs for each started job.

- hold back: a target whose circuit is open (`herald_webhook_sender.breakers`), then a
  target's rate limit; a delivery whose turn has not come goes back to the bus until it has
  (NAK with delay), before it starts, so it is no attempt at all; behind an open circuit only
  the next probe waits on the bus, the others are parked in the ledger until the circuit
  closes, and a turn further than `webhook_park_backlog_s` away is waited for parked
  (`herald_webhook_sender.parking`); one held past its retry window goes on, to end at the call;
- call lane: the target (a subscription target, or a direct webhook's origin) whose bound of
  calls in flight the call counts against (`herald.sender.slots`);
- prepare: the large body from the object store, the delivery's sealed signing keys;
- call: signed right then (the timestamp is the moment of the call, not of the wait for a
  slot), the target's breaker asked again (it may have opened meanwhile: handed back, no
  attempt; past the delivery's retry window, no call and a skipped attempt that fails it),
  one POST through the guarded receiver client (`herald.webhooks.receiver_client`), its
  outcome told to the breaker (one that closes it releases the target's parked jobs);
- conclude: the tenant's retry policy judges the answer; the attempt record with what the
  receiver answered, and the lane it answered on (the ledger then releases what other senders
  parked behind the lane's circuit);
- finished: an ended job's body deleted, a 410 disables the target, the target's health.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from herald import dead_letters
from herald.breaker import State
from herald.bus.fair import FairFetcher
from herald.bus.payloads import PayloadStore
from herald.config import Settings
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.ids import created_at_of
from herald.sender.loop import CallLane, Conclusion, HandBack, Job, Park, Sender
from herald.sender.slots import Refusal, window_size
from herald.sender.states import BOUND, PACED
from herald.sender.waiting import CIRCUIT_OPEN, WaitingNotes
from herald.telemetry.metrics import DELIVERIES, DELIVERY_SECONDS, HELD_BACK, WEBHOOK_PROVIDER, label
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_subscriptions_pb2, webhook_sender_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.retry_policy import (
    HELD_PAST_WINDOW,
    Decision,
    ReceiverCallError,
    RetryPolicy,
    Verdict,
    attempt_error_class,
    decide,
)
from herald.webhooks.sealed_headers import delivered_headers
from herald.webhooks.target_guard import AllowList, TargetGuard
from herald_webhook_sender.breakers import KIND, TargetBreakers
from herald_webhook_sender.client import CallResult, call_receiver
from herald_webhook_sender.pacing import Pacer, interval_s
from herald_webhook_sender.parking import CIRCUIT_HOLD, Parking
from herald_webhook_sender.signing import SealedSecrets, Signer
from herald_webhook_sender.target_health import TargetHealth
from herald_webhook_sender.tenant_config import TenantConfig

log = logging.getLogger("herald.webhook_sender")

__all__ = ["WebhookWorker"]

OUTCOMES = {
    Verdict.DELIVERED: common_pb2.ATTEMPT_OUTCOME_SUCCEEDED,
    Verdict.RETRY: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Verdict.EXHAUSTED: common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE,
    Verdict.FAILED: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
    Verdict.GONE: common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE,
}
NEXT_STATUS = {Verdict.DELIVERED: common_pb2.JOB_STATUS_DELIVERED, Verdict.RETRY: common_pb2.JOB_STATUS_QUEUED}
Delivery = webhook_sender_pb2.WebhookDelivery
# The lane of a subscription target: this and its id (a direct webhook's lane is its origin).
TARGET_LANE = "target:"
# A delivery that meets a half-open breaker whose probe is under way comes back after about this.
HALF_OPEN_WAIT_S = 1.0


@dataclass
class Prepared:
    secrets: SealedSecrets | None
    decision: Decision | None = None  # set by conclude


class WebhookWorker(Sender[Delivery, Prepared, CallResult, ledger_jobs_pb2.AttemptResult]):
    label = "webhook"
    channel = common_pb2.CHANNEL_WEBHOOK
    span_name = "webhook.deliver"
    work_type = Delivery
    waiting: WaitingNotes

    def __init__(
        self,
        settings: Settings,
        fetcher: FairFetcher,
        ledger: Ledger,
        signer: Signer,
        js: JetStreamContext,
        alerter: dead_letters.Alerter,
        pacer: Pacer | None = None,
    ) -> None:
        super().__init__(
            fetcher=fetcher,
            js=js,
            subjects=settings.subjects(),
            alerter=alerter,
            concurrency=settings.webhook_concurrency,
            tenant_bound=settings.webhook_tenant_in_flight,
            park_from_s=settings.park_retries_from_s,
            # Half the window: a slow target's backlog keeps the other half free for the rest.
            crowded_at=window_size(settings.webhook_concurrency) // 2,
        )
        self.settings = settings
        self.payloads = PayloadStore(js, settings.payload_bucket, settings.stream_replicas)
        self.ledger = ledger
        self.signer = signer
        self.policy = RetryPolicy(
            schedule_s=tuple(settings.webhook_retry_schedule_s),
            jitter=settings.webhook_retry_jitter,
            retry_statuses=frozenset(settings.webhook_retry_statuses),
            retry_after_max_s=settings.webhook_retry_after_max_s,
        )
        # Every connection goes to an address the guard checked at connect time, so a
        # target cannot reach private ranges, even by re-pointing its DNS (rebinding).
        guard = TargetGuard(AllowList.parse(settings.target_allow, loopback=settings.webhook_allow_loopback))
        self.http = ReceiverClient(
            guard, timeout_s=settings.webhook_timeout_s, connections=settings.webhook_concurrency * 2
        )
        # Targets' rate limits, tenants' retry schedules, targets' failing streaks.
        self.pacer = pacer or Pacer(None)
        self.config = TenantConfig(ledger, self.policy, settings.webhook_config_cache_ttl_s)
        self.health = TargetHealth(ledger, alerter, settings.webhook_target_disable_after_s)
        self.breakers = TargetBreakers(settings)
        self.parking = Parking(ledger)
        self.waiting = WaitingNotes(self._note_waiting)

    async def advance(
        self, records: list[ledger_jobs_pb2.AttemptResult], start_job_ids: list[str]
    ) -> list[ledger_jobs_pb2.DeliveryStart]:
        answer = await self.ledger.jobs.AdvanceDeliveries(
            ledger_jobs_pb2.AdvanceDeliveriesRequest(results=records, start_job_ids=start_job_ids),
            timeout=CALL_DEADLINE_S,
        )
        return list(answer.starts)

    async def hold_back(self, message: Msg, work: Delivery) -> float | Park:
        """A target whose circuit is open (its next probe waits on the bus, the others in the
        ledger), then a target's rate limit: not started, so it is no attempt at all."""
        lane = await self.call_lane(work)
        if (cool_down_s := self.breakers.wait_left_s(lane.tenant, lane.target, HALF_OPEN_WAIT_S)) > 0:
            if (window_left_s := await self._window_left_s(work)) <= 0:
                return 0.0  # its call fails it, unless the circuit lets it through as the probe
            HELD_BACK.labels(self.label, "circuit_open").inc()
            self.waiting.note(work.job_id, CIRCUIT_OPEN)
            return self.parking.hold(lane, cool_down_s * (1 + random.random() / 2), window_left_s)
        if not work.target_id:
            return 0.0
        limit = (await self.config.target(work.tenant_id, work.target_id)).rate_limit_per_min
        wait_s = await self.pacer.take(work.target_id, limit) if limit else 0.0
        if wait_s <= self.settings.webhook_park_backlog_s:
            return wait_s
        # A rate-limited target's backlog: parked until its turn, not cycled on the bus.
        return self.parking.until_turn(lane, PACED, wait_s, interval_s(limit), wait_s, "rate_limit")

    async def _window_left_s(self, delivery: Delivery) -> float:
        """How long is left of the tenant's retry window since the delivery's run began: when
        it was accepted (its id's time), or the explicit retry that started a rerun. A rerun
        whose message does not say when (published before runs carried their start) gets a
        whole window."""
        window_s = (await self.config.policy(delivery.tenant_id)).window_s
        if delivery.run:
            started = delivery.run_started_at.ToMicroseconds() / 1e6 if delivery.HasField("run_started_at") else None
        else:
            started = created_at_of(delivery.job_id)
        if started is None:
            return window_s
        return started + window_s - time.time()

    def refused(self, lane: CallLane, refusal: Refusal) -> float | Park:
        """A delivery its target's full queue refused: on the bus for a moment, unless the lane's
        backlog takes longer than that to be called (a slow receiver): then parked until its turn."""
        delay_s = self.slots.held_delay_s(lane)
        wait_s = self.slots.drain_s(lane) if refusal is Refusal.TARGET else 0.0
        if wait_s <= self.settings.webhook_park_backlog_s:
            return delay_s
        return self.parking.until_turn(lane, BOUND, wait_s, self.slots.call_gap_s(lane), delay_s, "target_bound")

    async def call_lane(self, work: Delivery) -> CallLane:
        """A subscription target is its own lane, bounded by its own `max_in_flight` (within the
        operator's maximum) or the operator's default; a direct webhook's lane is its receiver's
        origin (scheme, host and port), so one tenant's many URLs on one slow host share a bound."""
        if work.target_id:
            return await self._target_lane(work.tenant_id, work.target_id)
        return CallLane(work.tenant_id, origin(work.request.url), self.settings.webhook_target_in_flight)

    async def _target_lane(self, tenant_id: str, target_id: str) -> CallLane:
        own = (await self.config.target(tenant_id, target_id)).max_in_flight
        bound = min(own, self.settings.webhook_target_in_flight_max) if own else self.settings.webhook_target_in_flight
        return CallLane(tenant_id, f"{TARGET_LANE}{target_id}", bound)

    async def config_changed(self, tenant_id: str) -> None:
        """A tenant's targets or settings changed: read again, and the bounds of its targets'
        lanes follow at once (a raised bound lets calls already waiting go)."""
        self.config.forget(tenant_id)
        for target in self.slots.targets_of(tenant_id):
            if target.startswith(TARGET_LANE):
                self.slots.rebound(await self._target_lane(tenant_id, target.removeprefix(TARGET_LANE)))

    def parked(self, tenant_id: str, park: Park) -> None:
        """A delivery parked behind an open circuit that closed while the park was under way
        missed the release: the lane is released again."""
        if park.reason == CIRCUIT_HOLD and self.breakers.state(tenant_id, park.lane) is State.CLOSED:
            self.background(self.parking.release(CallLane(tenant_id, park.lane, 0)))

    async def _note_waiting(self, notes: list[tuple[str, str]]) -> None:
        await self.ledger.jobs.NoteWaiting(
            ledger_jobs_pb2.NoteWaitingRequest(
                notes=[ledger_jobs_pb2.WaitingNote(job_id=job_id, reason=reason) for job_id, reason in notes]
            ),
            timeout=CALL_DEADLINE_S,
        )

    async def prepare(self, job: Job[Delivery]) -> Prepared:
        delivery = job.work
        if delivery.payload_object:
            try:
                delivery.request.body = await self.payloads.get(delivery.payload_object)
            except Exception as error:
                raise HandBack(f"large payload unavailable ({error!r})") from error
        try:
            return Prepared(await self.signer.prepare(delivery.tenant_id, delivery.target_id))
        except Exception as error:
            # Never send unsigned what should be signed: hand it back and try later.
            raise HandBack(f"cannot sign delivery ({error!r})", 5.0, logging.ERROR) from error

    async def call(self, job: Job[Delivery], prepared: Prepared) -> CallResult:
        delivery = job.work
        try:
            # Signed once the slot is ours: the timestamp is the moment of the call.
            signature = self.signer.sign(prepared.secrets, delivery.job_id, delivery.request.body)
        except Exception as error:
            raise HandBack(f"cannot sign delivery ({error!r})", 5.0, logging.ERROR) from error
        assert job.place is not None
        lane = job.place.lane
        if not self.breakers.allow(lane.tenant, lane.target, KIND):
            # Opened while this one waited, or half-open with its probe under way.
            if (window_left_s := await self._window_left_s(delivery)) <= 0:
                return CallResult(None, None, ReceiverCallError(HELD_PAST_WINDOW), 0, datetime.now(UTC))
            HELD_BACK.labels(self.label, "circuit_open").inc()
            self.waiting.note(delivery.job_id, CIRCUIT_OPEN)
            wait_s = max(self.breakers.cool_down_left_s(lane.tenant, lane.target), HALF_OPEN_WAIT_S)
            held = self.parking.hold(lane, wait_s * (1 + random.random() / 2), window_left_s)
            if isinstance(held, Park):
                raise HandBack("held: the target's circuit is open", held.fallback_s, logging.DEBUG, park=held)
            raise HandBack("held: the target's circuit is open", held, logging.DEBUG)
        try:
            # The tenant's sealed header values are opened only now, for this call.
            headers = delivered_headers(self.signer.ring, delivery.tenant_id, delivery.request)
        except Exception as error:
            self.breakers.release(lane.tenant, lane.target)
            raise HandBack(f"cannot open the webhook's headers ({error!r})", 5.0, logging.ERROR) from error
        try:
            result = await call_receiver(self.http, delivery.job_id, delivery.request, signature, headers)
        except BaseException:
            self.breakers.release(lane.tenant, lane.target)
            raise
        if self.breakers.record(lane.tenant, lane.target, KIND, result):
            self.background(self.parking.release(lane))  # it answers again: its parked jobs come back
        return result

    async def conclude(
        self, job: Job[Delivery], prepared: Prepared, called: CallResult
    ) -> Conclusion[ledger_jobs_pb2.AttemptResult]:
        delivery, result = job.work, called
        policy = await self.config.policy(delivery.tenant_id)
        if result.status_code is not None:
            decision = decide(policy, job.attempt, status_code=result.status_code, retry_after=result.retry_after)
        else:
            assert result.error is not None
            decision = decide(policy, job.attempt, error=result.error)
        prepared.decision = decision
        outcome = common_pb2.ATTEMPT_OUTCOME_SKIPPED if _not_called(result) else OUTCOMES[decision.verdict]
        if outcome != common_pb2.ATTEMPT_OUTCOME_SKIPPED:
            DELIVERY_SECONDS.labels("webhook").observe(result.duration_ms / 1000)
        DELIVERIES.labels("webhook", label(common_pb2.AttemptOutcome.Name(outcome)), WEBHOOK_PROVIDER).inc()
        next_status = NEXT_STATUS.get(decision.verdict, common_pb2.JOB_STATUS_FAILED)
        record = ledger_jobs_pb2.AttemptResult(
            next_status=next_status, error=decision.reason if next_status == common_pb2.JOB_STATUS_FAILED else ""
        )
        # Filled in place: an Attempt built apart and passed in is copied whole (its headers' map too).
        attempt = record.attempt
        attempt.job_id = delivery.job_id
        attempt.target = delivery.request.url
        attempt.outcome = outcome
        attempt.status_code = result.status_code or 0
        attempt.duration_ms = result.duration_ms
        attempt.error = "" if decision.verdict is Verdict.DELIVERED else decision.reason
        attempt.error_class = attempt_error_class(result.status_code, result.error)
        attempt.response_headers.update(result.response_headers)
        attempt.response_excerpt = result.response_excerpt
        attempt.started_at.FromDatetime(result.started_at)
        if self.breakers.judge(result) is False and job.place is not None:
            # It answers: whatever any sender parked behind its circuit may come back.
            record.answered.tenant_id, record.answered.lane = job.place.lane.tenant, job.place.lane.target
        return Conclusion(
            record,
            retry_delay_s=decision.delay_s if decision.verdict is Verdict.RETRY else None,
            # Out of attempts: into the dead-letter stream first, then FAILED (see herald.dead_letters).
            dead_letter_error=decision.reason if decision.verdict is Verdict.EXHAUSTED else None,
        )

    async def finished(
        self,
        job: Job[Delivery],
        prepared: Prepared,
        called: CallResult,
        conclusion: Conclusion[ledger_jobs_pb2.AttemptResult],
    ) -> None:
        delivery = job.work
        ended = conclusion.record.next_status != common_pb2.JOB_STATUS_QUEUED
        if delivery.payload_object and ended:
            # The job has ended: its body is no longer needed beside the message.
            await self.payloads.delete(delivery.payload_object)
        assert prepared.decision is not None
        if prepared.decision.verdict is Verdict.GONE and delivery.target_id:
            await self._disable_target(delivery, prepared.decision.reason)
        elif delivery.target_id:
            self.background(
                self.health.report(delivery.tenant_id, delivery.target_id, conclusion.delivered, called.started_at)
            )

    async def _disable_target(self, delivery: webhook_sender_pb2.WebhookDelivery, reason: str) -> None:
        """410 Gone: the receiver says the endpoint is gone for good, so the target stops
        receiving events (the ledger's change notification updates every router's cache)."""
        try:
            await self.ledger.subscriptions.UpdateWebhookTarget(
                ledger_subscriptions_pb2.UpdateWebhookTargetRequest(
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
        await self.http.close()


def _not_called(result: CallResult) -> bool:
    """A delivery its target's circuit held past its retry window: ended without a call."""
    return isinstance(result.error, ReceiverCallError) and result.error.kind == HELD_PAST_WINDOW


def origin(url: str) -> str:
    """scheme://host:port of a URL (lower case, the default port written out); the URL itself
    when it cannot be read (its call fails on its own)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"
    except ValueError:
        return url
