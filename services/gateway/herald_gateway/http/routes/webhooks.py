"""POST /v1/webhooks: a direct webhook to one URL."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Header
from starlette.responses import Response

from herald.v1 import common_pb2
from herald_gateway.errors import Invalid
from herald_gateway.handlers import WebhookInput
from herald_gateway.http.admission import Counted
from herald_gateway.http.deps import HandlersDep
from herald_gateway.http.schemas import PRIORITY_VALUES, STATUS_NAMES, JobAccepted, WebhookIn, compact_json

router = APIRouter(tags=["webhooks"])


@router.post("/v1/webhooks", status_code=202, response_model=JobAccepted)
async def send_webhook(
    body: WebhookIn,
    principal: Counted,
    handlers: HandlersDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header()] = None,
) -> JobAccepted:
    """Accepts a webhook for delivery. The job is durable when this answers 202."""
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
    job = await handlers.send_webhook(
        principal,
        WebhookInput(
            url=body.url,
            body=raw,
            content_type=content_type,
            headers=body.headers,
            priority=PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED),
            idempotency_key=idempotency_key or "",
            ordering_key=body.ordering_key or "",
        ),
    )
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return JobAccepted(id=job.id, status=STATUS_NAMES.get(job.status, "pending"))
