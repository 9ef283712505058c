"""POST /v1/events: a tenant event, fanned out to every matching active subscription."""

from __future__ import annotations

from fastapi import APIRouter

from herald_gateway.access import Counted
from herald_gateway.http.deps import OperationsDep
from herald_gateway.http.schemas.submit import EventAccepted, EventDeliveryOut, EventIn, payload_of
from herald_gateway.operations.subscriptions import EventInput

router = APIRouter(tags=["events"])


@router.post("/v1/events", status_code=202, response_model=EventAccepted)
async def publish_event(body: EventIn, principal: Counted, operations: OperationsDep) -> EventAccepted:
    """One webhook job per enabled target of a matching active subscription (a target matched
    by several subscriptions gets one). The event counts once against the rate limit; each
    job counts against the monthly webhook quota (any job over quota refuses the whole event:
    429, nothing written). The jobs are durable when this answers 202. A repeated `event_id`
    within 24 h answers the first result (`replayed: true`) and creates nothing."""
    raw, content_type = payload_of(body)
    accepted = await operations.publish_event(
        principal,
        EventInput(event_type=body.event_type, payload=raw, content_type=content_type, event_id=body.event_id or ""),
    )
    return EventAccepted(
        event_id=accepted.event_id,
        replayed=accepted.replayed,
        deliveries=[EventDeliveryOut(job_id=d.job_id, target_id=d.target_id) for d in accepted.deliveries],
    )
