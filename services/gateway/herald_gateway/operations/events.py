"""The event log and sending again: a tenant's events (a page, one with its deliveries), a
recorded event fanned out again (replay), a finished job sent again as a new one (resend).
Replay and resend create work: the routes spend the rate limit, the ledger admits against the
quota."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import grpc

from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_jobs_pb2, ledger_pb2, ledger_subscriptions_pb2, router_pb2
from herald_gateway.auth import Principal
from herald_gateway.errors import GatewayError, Invalid, NotFound, ask, refused
from herald_gateway.operations.payloads import PayloadExpunged
from herald_gateway.operations.subscriptions import EventInput, SubscriptionOperations, event_id_ok, pattern_ok


class NotResendable(
    GatewayError,
    status=409,
    title="Only a delivered or failed job can be sent again",
    kind="not-resendable",
    code=grpc.StatusCode.FAILED_PRECONDITION,
):
    pass


@dataclass
class EventOutcome:
    """What became of one event of a batch: accepted (as POST /v1/events answers), or why not."""

    accepted: router_pb2.PublishEventResponse | None = None
    error: GatewayError | None = None


@dataclass
class EventPage:
    events: list[common_pb2.Event]
    next_cursor: str


@dataclass
class EventQuery:
    page_size: int = 50
    cursor: str = ""
    event_type: str = ""
    since: datetime | None = None
    until: datetime | None = None


# The ledger's FAILED_PRECONDITION on a resend: the job is not finished (or not a webhook), or its
# payload is gone; on a replay: the event's payload is gone.
NOT_RESENDABLE = {
    grpc.StatusCode.FAILED_PRECONDITION: lambda e: (
        PayloadExpunged(e.details()) if "expunged" in (e.details() or "") else NotResendable(e.details() or "")
    )
}
NOT_REPLAYABLE = {grpc.StatusCode.FAILED_PRECONDITION: lambda e: PayloadExpunged(e.details() or "")}


class EventOperations(SubscriptionOperations):
    async def list_events(self, principal: Principal, query: EventQuery) -> EventPage:
        problems = []
        if query.event_type and not pattern_ok(query.event_type):
            problems.append(("event_type", "an event type (orders.created.v1), a prefix wildcard (orders.*) or *"))
        if query.since is not None and query.until is not None and query.until < query.since:
            problems.append(("until", "must not be before since"))
        if problems:
            raise Invalid(problems)
        request = ledger_subscriptions_pb2.ListEventsRequest(
            tenant_id=principal.tenant_id, page_size=query.page_size, cursor=query.cursor, event_type=query.event_type
        )
        if query.since is not None:
            request.since.FromDatetime(query.since)
        if query.until is not None:
            request.until.FromDatetime(query.until)
        page = await ask(self.ledger.subscriptions.ListEvents(request), "events")
        return EventPage(events=list(page.events), next_cursor=page.next_cursor)

    async def get_event(self, principal: Principal, event_id: str) -> common_pb2.Event:
        if not event_id_ok(event_id):
            raise NotFound("event not found")
        found = await ask(
            self.ledger.subscriptions.GetEvent(
                ledger_subscriptions_pb2.GetEventRequest(tenant_id=principal.tenant_id, event_id=event_id)
            ),
            "event",
        )
        return found.event

    async def replay_event(
        self, principal: Principal, event_id: str, target_id: str = ""
    ) -> router_pb2.ReplayEventResponse:
        """New deliveries of a recorded event to the subscriptions matching it today (or to one
        of their targets); 404 for an unknown or another tenant's event, or such a target."""
        if not event_id_ok(event_id):
            raise NotFound("event not found")
        if target_id and parse_id(target_id) is None:
            raise NotFound("target not found")
        replayed = await ask(
            self.router.ReplayEvent(
                router_pb2.ReplayEventRequest(
                    tenant_id=principal.tenant_id,
                    plan=principal.plan,  # type: ignore[arg-type]
                    event_id=event_id,
                    target_id=target_id,
                )
            ),
            "event or target",
            NOT_REPLAYABLE,
        )
        if replayed.rejection != ledger_pb2.REJECTION_UNSPECIFIED:
            raise refused(replayed.rejection, replayed.detail)
        return replayed

    async def resend_job(self, principal: Principal, job_id: str) -> common_pb2.Job:
        """A delivered or failed webhook job sent again as a new job; 409 for one under way."""
        if parse_id(job_id) is None:
            raise NotFound("job not found")
        resent = await ask(
            self.ledger.jobs.ResendJob(ledger_jobs_pb2.ResendJobRequest(tenant_id=principal.tenant_id, job_id=job_id)),
            "job",
            NOT_RESENDABLE,
        )
        if not resent.HasField("job"):
            raise refused(resent.rejection, resent.detail)
        return resent.job

    async def publish_events(self, principal: Principal, items: list[EventInput | GatewayError]) -> list[EventOutcome]:
        """A batch of events, each admitted as if it came alone (an item given as an error stays
        refused with it), one after the other: events sharing an ordering key keep their order."""
        outcomes = []
        for item in items:
            if isinstance(item, GatewayError):
                outcomes.append(EventOutcome(error=item))
                continue
            try:
                outcomes.append(EventOutcome(accepted=await self.publish_event(principal, item)))
            except GatewayError as error:
                outcomes.append(EventOutcome(error=error))
        return outcomes
