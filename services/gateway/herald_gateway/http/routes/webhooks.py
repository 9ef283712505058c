"""POST /v1/webhooks: a direct webhook to one URL."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Header, Request
from starlette.responses import Response

from herald.v1 import common_pb2
from herald_gateway.errors import Invalid
from herald_gateway.handlers import WebhookInput
from herald_gateway.http.admission import Counted
from herald_gateway.http.deps import HandlersDep
from herald_gateway.http.schemas import PRIORITY_VALUES, STATUS_NAMES, JobAccepted, WebhookIn, compact_json
from herald_gateway.idempotency import check_idempotency_key, request_hash

router = APIRouter(tags=["webhooks"])


def webhook_input(body: WebhookIn, idempotency_key: str, digest: bytes = b"") -> WebhookInput:
    """The request as the handlers take it (shared with POST /v1/webhooks/batch)."""
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
    return WebhookInput(
        url=body.url,
        body=raw,
        content_type=content_type,
        headers=body.headers,
        priority=PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED),
        idempotency_key=idempotency_key,
        ordering_key=body.ordering_key or "",
        request_hash=digest,
    )


@router.post("/v1/webhooks", status_code=202, response_model=JobAccepted)
async def send_webhook(
    body: WebhookIn,
    principal: Counted,
    handlers: HandlersDep,
    response: Response,
    request: Request,
    idempotency_key: Annotated[str | None, Header()] = None,
) -> JobAccepted:
    """Accepts a webhook for delivery. The job is durable when this answers 202.

    With an Idempotency-Key, the key is written with the job in one transaction: a
    repeat answers 202 with the first job (`Idempotent-Replayed: true`), one with
    another body 422, and a repeat after a lost answer never makes a second job."""
    digest = b""
    if idempotency_key is not None:
        check_idempotency_key(idempotency_key)
        digest = request_hash("POST", "/v1/webhooks", await request.body())
    sent = await handlers.send_webhook(principal, webhook_input(body, idempotency_key or "", digest))
    response.headers["Location"] = f"/v1/jobs/{sent.job.id}"
    if sent.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return JobAccepted(id=sent.job.id, status=STATUS_NAMES.get(sent.job.status, "pending"))
