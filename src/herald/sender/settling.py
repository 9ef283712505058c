"""How a sender's message ends (`herald.sender.loop`): acknowledged, NAKed with a delay or
terminated (`_settle`), parked in the ledger (`_park`), or recorded first (`record_success`,
`record_failure`): the record is committed before the message is settled, and a last failed
attempt is in the dead-letter stream before its record."""

from __future__ import annotations

import logging
from typing import Generic

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from herald import dead_letters
from herald.batching import Batcher
from herald.bus.fair import FairFetcher
from herald.bus.subjects import Subjects
from herald.sender.states import HAND_BACK_S, Conclusion, Counters, Identity, Job, Park, Record, Work
from herald.telemetry.metrics import PARKED_DELIVERIES, observe_finished
from herald.v1 import common_pb2, ledger_jobs_pb2

log = logging.getLogger("herald.sender")


class Settling(Generic[Work, Record]):
    """The settling half of `herald.sender.loop.Sender`; the loop sets these attributes."""

    label: str
    channel: int
    fetcher: FairFetcher
    js: JetStreamContext
    subjects: Subjects
    alerter: dead_letters.Alerter
    counters: Counters
    records: Batcher[Record, None]
    parks: Batcher[ledger_jobs_pb2.ParkedDelivery, bool]
    # Retries this long or longer leave the bus (None: none do).
    park_from_s: float | None

    def parked(self, tenant_id: str, park: Park) -> None: ...

    async def _settle(self, message: Msg, *, nak_delay: float | None = None, term: bool = False) -> None:
        """Ack (the default), NAK with a delay, or terminate; no longer kept in progress. Copies
        of the message the server sent while it was in hand get the same verdict."""
        copies: list[Msg] = self.fetcher.settled(message)
        for delivery in (message, *copies):
            if term:
                await delivery.term()
            elif nak_delay is not None:
                await delivery.nak(delay=nak_delay)
            else:
                await delivery.ack()

    async def _park(self, message: Msg, identity: Identity, park: Park) -> None:
        """Acknowledged once the ledger holds the job; on the bus for `fallback_s` otherwise (the
        ledger is away, or the job is not QUEUED: not committed yet, or ended, which its start
        then says)."""
        try:
            parked = await self.parks.submit(
                ledger_jobs_pb2.ParkedDelivery(job_id=identity.job_id, lane=park.lane, delay_s=park.delay_s)
            )
        except Exception as error:
            log.warning("could not park; message handed back", extra={"error": repr(error)})
            parked = False
        if not parked:
            await self._settle(message, nak_delay=park.fallback_s)
            return
        await self._settle(message)
        PARKED_DELIVERIES.labels(self.label, park.reason).inc()
        self.parked(identity.tenant_id, park)

    async def record_success(self, job: Job[Work], conclusion: Conclusion[Record]) -> bool:
        return await self._record(job, conclusion, None)

    async def record_failure(self, job: Job[Work], conclusion: Conclusion[Record]) -> bool:
        """A retry is recorded QUEUED and NAKed with its delay; a last failed attempt goes to
        the dead-letter stream first (see herald.dead_letters), then FAILED."""
        entry: common_pb2.DeadLetter | None = None
        if conclusion.dead_letter_error is not None:
            entry = dead_letters.entry_for(
                job_id=job.identity.job_id,
                tenant_id=job.identity.tenant_id,
                channel=self.channel,
                error=conclusion.dead_letter_error,
                attempts=job.attempt,
                run=job.identity.run,
                work_message=job.message.data,
                work_subject=job.message.subject,
            )
            try:
                conclusion.record.dead_letter_sequence = await dead_letters.publish(self.js, self.subjects, entry)
            except Exception as error:
                # Not in the dead-letter stream, so not failed yet: the last attempt runs again.
                log.warning("dead-letter stream unavailable; handed back", extra={"error": repr(error)})
                await self._settle(job.message, nak_delay=HAND_BACK_S)
                return False
            conclusion.record.dead_lettered = True
        return await self._record(job, conclusion, entry)

    async def _record(
        self, job: Job[Work], conclusion: Conclusion[Record], entry: common_pb2.DeadLetter | None
    ) -> bool:
        delay_s = conclusion.retry_delay_s
        if delay_s is not None and self.park_from_s is not None and delay_s >= self.park_from_s:
            conclusion.record.parked = True  # the ledger holds it until due; the message is acknowledged
        try:
            await self.records.submit(conclusion.record)
        except Exception as error:
            # Not recorded, so not acknowledged: the bus redelivers it later.
            log.warning("could not record the attempt; message handed back", extra={"error": repr(error)})
            await self._settle(job.message, nak_delay=HAND_BACK_S)
            return False
        if conclusion.record.parked:
            await self._settle(job.message)
            PARKED_DELIVERIES.labels(self.label, "retry").inc()
        else:
            await self._settle(job.message, nak_delay=conclusion.retry_delay_s)
        status = conclusion.record.next_status
        if status == common_pb2.JOB_STATUS_DELIVERED:
            self.counters.delivered += 1
        elif status == common_pb2.JOB_STATUS_FAILED:
            self.counters.failed += 1
        if status != common_pb2.JOB_STATUS_QUEUED:
            observe_finished(self.label, job.identity.job_id, job.attempt, conclusion.delivered)
        if entry is not None:
            self.counters.dead_lettered += 1
            log.warning(
                "job dead-lettered",
                extra={"job_id": job.identity.job_id, "tenant_id": job.identity.tenant_id, "attempts": job.attempt},
            )
            self.alerter.notify(entry)
        return True
