"""The delivery loop every sender runs; a sender supplies only its delivery.

Take the next message in fair order (`herald.bus.fair`) while the window of started jobs has
room; ask the ledger whether the job may start (coalesced with concurrent asks into one
`advance` call, a read, never behind the commit of a call recording finished jobs: a
redelivered job that already ended is acknowledged and skipped, one held back by its ordering
key goes back for a moment); then the named phases:

- **prepare** (the sender's): what the call needs, fetched before a slot is taken (a large
  body, secrets, provider settings); `HandBack` gives the message back for later;
- **call** (the sender's): the outbound call, holding one of `concurrency` slots and nothing else,
  taken in fair order across (tenant, target) lanes under their bounds (`herald.sender.slots`; a
  job held back says why, `herald.sender.waiting`); none once its tenant is erased (`.erased`);
- **conclude** (the sender's): the ledger record of the attempt and what happens next;
- **record success** / **record failure**: a last failed attempt goes to the dead-letter
  stream first; the record goes to the ledger; only after the ledger committed it is the
  message acknowledged (or NAKed with the retry delay: JetStream brings it back then, nothing
  sleeps in process; a retry from `park_from_s` on is acknowledged and parked in the ledger,
  whose reconciler publishes it again when due: a message NAKed with a delay stays
  unacknowledged on its lane's consumer, and enough of them stop the lane for every tenant);
  counters, the finished-job metrics, the dead-letter alert;
- **finished** (the sender's, optional): what follows a committed record.

From its pull to its ack or NAK a message is kept in progress by the fetcher, so a slow call,
a long wait for a slot or a slow ledger never lets AckWait run out under a live sender.
A crash at any point leaves the message unacknowledged and JetStream redelivers it after AckWait;
the ledger's start then says whether it already ended (so a committed delivery is never made again)
and the duplicates a crash can cause are at most the window of started jobs (`herald.sender.slots.
window_size`) whose call was made and whose record was not yet committed.
Acknowledgements are not waited for: the ledger's commit is the guarantee, a lost ack costs a
redelivery that the start skips. A bug in a delivery costs its message a redelivery, never the
loop. On stop, buffered messages are handed back at once and started ones are finished."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any, Generic

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from opentelemetry import trace

from herald import dead_letters
from herald.batching import Batcher
from herald.bus.fair import FairFetcher
from herald.bus.subjects import Subjects
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.sender.erased import ErasedTenants
from herald.sender.settling import Settling
from herald.sender.slots import CallLane, CallSlots, Place, Refusal, window_size
from herald.sender.states import (
    HAND_BACK_S,
    Called,
    Conclusion,
    Counters,
    HandBack,
    Identity,
    Job,
    Park,
    Prepared,
    Record,
    Work,
    WorkMessage,
)
from herald.sender.waiting import WaitingNotes
from herald.telemetry import tracing
from herald.telemetry.metrics import HELD_BACK, watch_sender
from herald.telemetry.propagation import extract_context
from herald.v1 import ledger_jobs_pb2

__all__ = [
    "HAND_BACK_S",
    "CallLane",
    "Conclusion",
    "Counters",
    "HandBack",
    "Identity",
    "Job",
    "Park",
    "Sender",
    "WorkMessage",
]

log = logging.getLogger("herald.sender")
_tracer = trace.get_tracer("herald.sender")

ORDERING_RETRY_S = 0.05
# A copy of a job this sender has in hand (the reconciler's) comes back after this, when the
# first has ended or scheduled its retry.
COPY_IN_HAND_S = 1.0
LEDGER_DOWN_S = 1.0
ADVANCE_MAX_ITEMS = 400
# Ledger calls in flight at once, for starts and for records each: what arrives while one is
# under way goes out together in the next. One, not two: a second halved every call's batch and
# doubled the ledger's transactions (docs/performance.md, "Measurements behind the defaults").
ADVANCES_IN_FLIGHT = 1


class Sender(Settling[Work, Record], ABC, Generic[Work, Prepared, Called, Record]):
    """The loop; subclasses supply the phases marked abstract (and may override the hooks)."""

    label: str  # metrics' channel label: "webhook", "email", "platform_email"
    channel: int  # common_pb2.Channel of the jobs (dead-letter entries)
    span_name: str
    work_type: Callable[[], Work]  # the work message's class
    waiting: WaitingNotes | None = None  # where a job held back without a call says why, if anywhere
    ledger: Ledger  # the subclass's client

    def __init__(
        self,
        *,
        fetcher: FairFetcher,
        js: JetStreamContext,
        subjects: Subjects,
        alerter: dead_letters.Alerter,
        concurrency: int,
        counters: Counters | None = None,
        tenant_bound: int | None = None,
        crowded_at: int | None = None,
        park_from_s: float | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.js = js
        self.subjects = subjects
        self.alerter = alerter
        self.counters = counters or Counters()
        # What begins (a job id) and what finished (a record) go to the ledger in calls of their
        # own, so a start, a read, never waits for a record's commit: at 200/s that wait was half
        # the time from a job's 202 to its call (docs/performance.md, "Starts in calls of their own").
        self.starts: Batcher[str, ledger_jobs_pb2.DeliveryStart] = Batcher(
            self._start_many, max_items=ADVANCE_MAX_ITEMS, max_concurrent=ADVANCES_IN_FLIGHT
        )
        self.records: Batcher[Record, None] = Batcher(
            self._record_many, max_items=ADVANCE_MAX_ITEMS, max_concurrent=ADVANCES_IN_FLIGHT
        )
        self.parks: Batcher[ledger_jobs_pb2.ParkedDelivery, bool] = Batcher(
            self._park_many, max_items=ADVANCE_MAX_ITEMS, max_concurrent=ADVANCES_IN_FLIGHT
        )
        # Retries this long or longer leave the bus (None: none do).
        self.park_from_s = park_from_s
        self._tasks: set[asyncio.Task[None]] = set()
        self.concurrency = concurrency
        self.slots = CallSlots(concurrency, tenant_bound, crowded_at)
        self._window = asyncio.Semaphore(window_size(concurrency))
        # Done once the loop stops taking work: calls still waiting for a slot hand theirs back.
        self._stopped: asyncio.Future[None] | None = None
        # Jobs in hand from start to settling: a copy of one waits instead of a second call.
        self._jobs_in_hand: set[str] = set()
        self.erased = ErasedTenants()  # main may share one between its workers

    # -- what a sender supplies -------------------------------------------------------------

    def parse(self, data: bytes) -> Work:
        """The work message; raises on one that cannot be read (it is terminated)."""
        work = self.work_type()
        work.ParseFromString(data)
        return work

    def identify(self, work: Work) -> Identity:
        return Identity(work.job_id, work.tenant_id, work.run)

    async def hold_back(self, message: Msg, work: Work) -> float | Park:
        """Seconds before this work may start (a target's rate limit), 0 to start now; or `Park`
        for a delivery that must wait longer (the ledger holds it, see `Settling._park`)."""
        return 0.0

    def refused(self, lane: CallLane, refusal: Refusal) -> float | Park:
        """Where a job its lane (or tenant) refused waits: seconds on the bus by default; `Park`
        for a sender that parks a slow receiver's backlog."""
        return self.slots.held_delay_s(lane)

    def parked(self, tenant_id: str, park: Park) -> None:
        """After the ledger took a parked job (a sender may release its lane again, if what
        held it ended while the park was under way)."""

    async def _park_many(self, parks: list[ledger_jobs_pb2.ParkedDelivery]) -> list[bool]:
        """One ledger call parking these jobs (`ParkDeliveries`): which the ledger now holds."""
        answer = await self.ledger.jobs.ParkDeliveries(
            ledger_jobs_pb2.ParkDeliveriesRequest(parks=parks), timeout=CALL_DEADLINE_S
        )
        parked = set(answer.parked_job_ids)
        return [p.job_id in parked for p in parks]

    async def call_lane(self, work: Work) -> CallLane:
        """Where the call goes and its bound of calls in flight (`herald.sender.slots`); by
        default one lane per tenant, bounded by the tenant's share alone."""
        return CallLane(work.tenant_id, "", self.concurrency)

    @abstractmethod
    async def prepare(self, job: Job[Work]) -> Prepared:
        """Before a slot is taken; raise HandBack when it cannot go on now."""

    @abstractmethod
    async def call(self, job: Job[Work], prepared: Prepared) -> Called:
        """The outbound call, holding a slot; raise HandBack when it cannot be made now."""

    @abstractmethod
    async def conclude(self, job: Job[Work], prepared: Prepared, called: Called) -> Conclusion[Record]: ...

    async def finished(
        self, job: Job[Work], prepared: Prepared, called: Called, conclusion: Conclusion[Record]
    ) -> None:
        """After the record is committed and the message settled."""

    @abstractmethod
    async def advance(self, records: list[Record], start_job_ids: list[str]) -> list[ledger_jobs_pb2.DeliveryStart]:
        """One ledger call: record `records`, then start `start_job_ids` (their starts, in order),
        with the deadline `CALL_DEADLINE_S`: one that never answered would hold its messages,
        kept in progress, and every job behind the call in flight, for good; a call that
        fails hands its messages back to the bus."""

    # -- the loop ---------------------------------------------------------------------------

    async def run(self, stopping: asyncio.Event) -> None:
        self._stopped = asyncio.get_running_loop().create_future()
        self.slots.start()
        watch_sender(self.label, self.slots, self.fetcher, window_size(self.concurrency))
        taking = asyncio.create_task(self._take(stopping))
        stop = asyncio.create_task(stopping.wait())
        await asyncio.wait({taking, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if taking.done():
            taking.result()  # the fetcher failed: as before, the loop fails with it
        # Cancelled only where it waits (for room or a message): a message is handled or left buffered.
        taking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await taking
        self._stopped.set_result(None)
        # Calls that have not begun go back (another replica takes them at once); begun ones finish.
        self.slots.refuse_waiting(HandBack("the sender is stopping", delay_s=0.0, level=logging.INFO))
        for message in await self.fetcher.stop():
            with contextlib.suppress(Exception):
                await message.nak()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.slots.stop()
        if self.waiting is not None:
            await self.waiting.drain()
        await self.fetcher.close()
        await self.starts.drain()
        await self.records.drain()
        await self.parks.drain()

    async def _take(self, stopping: asyncio.Event) -> None:
        """Takes messages while the window has room. One task for the whole run, awaiting the
        fetcher directly: a task and a wait per message cost more than the message's start."""
        while not stopping.is_set():
            await self._window.acquire()
            try:
                message = await self.fetcher.next()
            except BaseException:
                self._window.release()
                raise
            self.background(self._handle(message))

    def _parks_wait(self, wait_s: float) -> bool:
        return self.park_from_s is not None and wait_s >= max(self.park_from_s, 1.0)

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """A task the stop waits for."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start_many(self, job_ids: list[str]) -> list[ledger_jobs_pb2.DeliveryStart]:
        return await self.advance([], job_ids)

    async def _record_many(self, records: list[Record]) -> list[None]:
        await self.advance(records, [])
        return [None] * len(records)

    async def _handle(self, message: Msg) -> None:
        place: Place | None = None
        held = ""
        try:
            try:
                work = self.parse(message.data)
            except Exception:
                log.error("unreadable work message dropped", extra={"subject": message.subject})
                await self._settle(message, term=True)
                return
            identity = self.identify(work)
            if identity.job_id in self._jobs_in_hand:
                await self._settle(message, nak_delay=COPY_IN_HAND_S)
                return
            self._jobs_in_hand.add(identity.job_id)
            held = identity.job_id
            wait_s = await self.hold_back(message, work)
            if isinstance(wait_s, Park):
                await self._park(message, identity, wait_s)
                return
            if wait_s > 0:
                await self._settle(message, nak_delay=wait_s)
                return
            lane = await self.call_lane(work)
            admitted = self.slots.admit(lane)
            if isinstance(admitted, Refusal):
                # Its target (or tenant) already has its fill waiting: back to the bus (or the
                # ledger) before it starts, so a stalled receiver's backlog never fills the window.
                HELD_BACK.labels(self.label, admitted.value).inc()
                if self.waiting is not None:
                    self.waiting.note(work.job_id, admitted)
                waits = self.refused(lane, admitted)
                if isinstance(waits, Park):
                    await self._park(message, identity, waits)
                else:
                    await self._settle(message, nak_delay=waits)
                return
            place = admitted
            try:
                start = await self.starts.submit(identity.job_id)
            except Exception as error:
                log.warning("ledger unavailable; handing the message back", extra={"error": repr(error)})
                await self._settle(message, nak_delay=LEDGER_DOWN_S)
                return
            if start.wait and self._parks_wait(start.wait_s):
                # Long behind its ordering key's earlier jobs: the ledger holds it until then.
                await self._park(message, identity, Park("", start.wait_s, start.wait_s, "ordering"))
            elif start.wait:
                await self._settle(message, nak_delay=start.wait_s or ORDERING_RETRY_S)
            elif not start.proceed:
                # Already ended (a redelivery after a crash) or unknown: never deliver twice.
                await self._settle(message)
            elif not tracing.exporting():
                await self._deliver(Job(message, work, identity, start.attempt_count + 1, place))
            else:
                # The trace the publisher started (HTTP request, router) continues here.
                with _tracer.start_as_current_span(
                    self.span_name,
                    context=extract_context(message.headers),
                    kind=trace.SpanKind.CONSUMER,
                    attributes={"herald.job_id": identity.job_id, "herald.attempt": start.attempt_count + 1},
                ):
                    await self._deliver(Job(message, work, identity, start.attempt_count + 1, place))
        except Exception:
            # A bug here must cost one message a redelivery, never the sender.
            log.exception("delivery failed unexpectedly; message left for redelivery", extra={"sender": self.label})
        finally:
            if place is not None:
                self.slots.release(place)
            self.fetcher.settled(message)  # a message left for redelivery (its copies too) runs down its AckWait
            self._jobs_in_hand.discard(held)
            self._window.release()

    async def _deliver(self, job: Job[Work]) -> None:
        self.counters.in_flight += 1
        try:
            try:
                prepared = await self.prepare(job)
                called = await self.in_slot(job, prepared)
            except HandBack as back:
                log.log(back.level, "handed back: %s", back, extra={"job_id": job.identity.job_id})
                if back.park is not None:
                    await self._park(job.message, job.identity, back.park)
                else:
                    await self._settle(job.message, nak_delay=back.delay_s)
                return
            conclusion = await self.conclude(job, prepared, called)
            if conclusion.delivered:
                recorded = await self.record_success(job, conclusion)
            else:
                recorded = await self.record_failure(job, conclusion)
            if recorded:
                await self.finished(job, prepared, called, conclusion)
        finally:
            self.counters.in_flight -= 1

    async def in_slot(self, job: Job[Work], prepared: Prepared) -> Called:
        """The call, made by one of the `concurrency` callers when its lane and tenant are under
        their bounds (`herald.sender.slots`; the fetcher keeps the message in progress
        meanwhile). A call still waiting when the sender stops is handed back (HandBack, no
        delay), so another replica takes it at once; one whose tenant was erased meanwhile too."""
        if self._stopped is not None and self._stopped.done():
            raise HandBack("the sender is stopping", delay_s=0.0, level=logging.INFO)
        assert job.place is not None
        if self.waiting is not None:
            self.waiting.note(job.identity.job_id, self.slots.holding_back(job.place.lane))
        span = trace.get_current_span() if tracing.exporting() else None  # it goes with the call

        async def calling() -> Called:
            self.erased.refuse(job.identity.tenant_id)  # erased while the job waited for its slot
            if span is None:
                return await self.call(job, prepared)
            with trace.use_span(span, end_on_exit=False):
                return await self.call(job, prepared)

        return await self.slots.call(job.place, calling)
