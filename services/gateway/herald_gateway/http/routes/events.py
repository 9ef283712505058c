"""Tenant events: POST /v1/events (fanned out to every matching subscription) and its batch,
the event log (GET /v1/events, GET /v1/events/{id}) and POST /v1/events/{id}/replay."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import orjson
from fastapi import APIRouter, Query, Request
from pydantic import ValidationError
from starlette.responses import Response

from herald.v1 import router_pb2
from herald_gateway.access import UNKEYED_PATHS, Counted
from herald_gateway.errors import GatewayError, Invalid, Unavailable
from herald_gateway.http.crud import Cursor, Limit
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.routes.batches import (
    REFUSED_BATCH,
    batch_items,
    problem_of,
    refuse_batch_key,
    spend_batch_rate,
    violations_of,
)
from herald_gateway.http.schemas.batch import ItemProblem, request_body
from herald_gateway.http.schemas.events import (
    EventBatchIn,
    EventBatchItemResult,
    EventBatchResults,
    EventList,
    EventOut,
    ReplayIn,
    event_out,
)
from herald_gateway.http.schemas.submit import EventAccepted, EventDeliveryOut, EventIn, payload_of
from herald_gateway.operations.events import EventQuery
from herald_gateway.operations.subscriptions import EventInput

router = APIRouter(tags=["events"])
EVENTS_BATCH = "/v1/events/batch"
assert EVENTS_BATCH in UNKEYED_PATHS


@router.post("/v1/events", status_code=202, response_model=EventAccepted)
async def publish_event(body: EventIn, principal: Counted, operations: OperationsDep) -> EventAccepted:
    """One webhook job per enabled target of a matching active subscription (a target matched
    by several subscriptions gets one); a matching subscription that is paused, or whose target
    is disabled, gets a `skipped` delivery instead (GET /v1/events/{id} lists it; the target's
    recover runs it). The event counts once against the rate limit; each job it sends counts
    against the monthly webhook quota (any job over quota refuses the whole event: 429, nothing
    written; a skipped one does not count). The jobs are durable when this answers 202. A
    repeated `event_id` within 24 h answers the first result (`replayed: true`) and creates
    nothing. Types starting with `herald.` are Herald's own (422)."""
    accepted = await operations.publish_event(principal, event_input(body))
    return EventAccepted(event_id=accepted.event_id, replayed=accepted.replayed, deliveries=accepted_out(accepted))


def event_input(body: EventIn) -> EventInput:
    raw, content_type = payload_of(body)
    return EventInput(
        event_type=body.event_type,
        payload=raw,
        content_type=content_type,
        event_id=body.event_id or "",
        ordering_key=body.ordering_key or "",
    )


def accepted_out(accepted: router_pb2.PublishEventResponse | router_pb2.ReplayEventResponse) -> list[EventDeliveryOut]:
    return [EventDeliveryOut(job_id=d.job_id, target_id=d.target_id) for d in accepted.deliveries]


@router.post(
    EVENTS_BATCH,
    response_model=EventBatchResults,
    openapi_extra=request_body(EventBatchIn),
    responses=REFUSED_BATCH,  # type: ignore[arg-type]
)
async def publish_events(request: Request, principal: Tenant, operations: OperationsDep) -> Response:
    """Accepts up to 1,000 events, each the body of POST /v1/events (its own `event_id`
    de-duplicates it, as alone).

    Answers 200 with one result per item, in order: 202 with the event's deliveries, or the
    item's own problem. Each item counts as one request of the rate limit; the items are
    recorded in order (events sharing an ordering key keep it)."""
    refuse_batch_key(request)
    items = batch_items(await request.body())
    await spend_batch_rate(request, principal, len(items))
    prepared: list[EventInput | GatewayError] = []
    for item in items:
        try:
            if not isinstance(item, dict):
                raise Invalid([("item", "must be an object")])
            prepared.append(event_input(EventIn.model_validate(item)))
        except ValidationError as error:
            prepared.append(Invalid(violations_of(error)))
        except GatewayError as error:
            prepared.append(error)
    results = []
    for index, outcome in enumerate(await operations.publish_events(principal, prepared)):
        if outcome.accepted is not None:
            result = EventBatchItemResult(
                index=index,
                status=202,
                event_id=outcome.accepted.event_id,
                replayed=outcome.accepted.replayed,
                deliveries=accepted_out(outcome.accepted),
            )
        else:
            refusal = outcome.error or Unavailable("the item was not recorded; retry it")
            result = EventBatchItemResult(
                index=index, status=refusal.status, problem=ItemProblem(**problem_of(refusal))
            )
        results.append(result.model_dump(exclude_none=True))
    return Response(orjson.dumps({"results": results}), media_type="application/json")


def _utc(value: datetime | None) -> datetime | None:
    return value if value is None or value.tzinfo is not None else value.replace(tzinfo=UTC)


@router.get("/v1/events", response_model=EventList)
async def list_events(
    principal: Tenant,
    operations: OperationsDep,
    limit: Limit = 50,
    cursor: Cursor = None,
    event_type: Annotated[
        str | None, Query(max_length=255, description="An exact type, a prefix wildcard (orders.*) or *.")
    ] = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> EventList:
    """Your events, newest first (without payloads: GET /v1/events/{id} has it)."""
    page = await operations.list_events(
        principal, EventQuery(limit, cursor or "", event_type or "", _utc(since), _utc(until))
    )
    return EventList(data=[event_out(e) for e in page.events], next_cursor=page.next_cursor or None)


@router.get("/v1/events/{event_id:path}", response_model=EventOut)
async def get_event(event_id: str, principal: Tenant, operations: OperationsDep) -> EventOut:
    """One event: its payload as sent, and every delivery it led to (target, job, status, and
    why one was skipped or failed)."""
    return event_out(await operations.get_event(principal, event_id), full=True)


@router.post("/v1/events/{event_id:path}/replay", status_code=202, response_model=EventAccepted)
async def replay_event(
    event_id: str, principal: Counted, operations: OperationsDep, body: ReplayIn | None = None
) -> EventAccepted:
    """Fans the event out again, with its payload, to the subscriptions that match it today (or
    to `target_id` only): new jobs, counted against the rate limit and the quota like any
    submission. 404 for an unknown event, or a target no active subscription of it names."""
    replayed = await operations.replay_event(principal, event_id, (body.target_id or "") if body else "")
    return EventAccepted(event_id=replayed.event_id, replayed=False, deliveries=accepted_out(replayed))


@router.delete("/v1/events/{event_id:path}/payload", status_code=204)
async def expunge_event_payload(event_id: str, principal: Tenant, operations: OperationsDep) -> Response:
    """Takes the event's payload out of Herald, and its deliveries' (DELETE /v1/jobs/{id}/payload
    for each). The event and its deliveries still answer, with `payload_expunged_at`. 409 while
    a delivery is under way; 404 for an unknown event."""
    await operations.expunge_event_payload(principal, event_id)
    return Response(status_code=204)
