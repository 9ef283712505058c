"""POST /v1/events: a tenant event, fanned out to every matching active subscription."""

from __future__ import annotations

import base64
import binascii

from fastapi import APIRouter, Request

from herald_gateway.errors import Invalid
from herald_gateway.http.admission import Counted
from herald_gateway.http.deps import HandlersDep
from herald_gateway.http.routes.subscriptions import subscriptions_of
from herald_gateway.http.schemas import EventAccepted, EventDeliveryOut, EventIn, compact_json
from herald_gateway.subscriptions import EventInput

router = APIRouter(tags=["events"])


@router.post("/v1/events", status_code=202, response_model=EventAccepted)
async def publish_event(body: EventIn, principal: Counted, handlers: HandlersDep, request: Request) -> EventAccepted:
    """One webhook job per enabled target of a matching active subscription (a target matched
    by several subscriptions gets one). The event counts once against the rate limit; each
    job counts against the monthly webhook quota (any job over quota refuses the whole event:
    429, nothing written). The jobs are durable when this answers 202. A repeated `event_id`
    within 24 h answers the first result (`replayed: true`) and creates nothing."""
    has_json = "payload" in body.model_fields_set
    if has_json == (body.payload_base64 is not None):
        raise Invalid([("payload", "give exactly one of payload and payload_base64")])
    if body.payload_base64 is not None:
        try:
            raw = base64.b64decode(body.payload_base64, validate=True)
        except (binascii.Error, ValueError) as error:
            raise Invalid([("payload_base64", "is not valid base64")]) from error
        content_type = body.content_type or "application/octet-stream"
    else:
        raw = compact_json(body.payload)
        content_type = body.content_type or "application/json"
    accepted = await subscriptions_of(request, handlers).publish_event(
        principal,
        EventInput(event_type=body.event_type, payload=raw, content_type=content_type, event_id=body.event_id or ""),
    )
    return EventAccepted(
        event_id=accepted.event_id,
        replayed=accepted.replayed,
        deliveries=[EventDeliveryOut(job_id=d.job_id, target_id=d.target_id) for d in accepted.deliveries],
    )
