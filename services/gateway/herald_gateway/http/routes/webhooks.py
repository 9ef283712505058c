"""POST /v1/webhooks: a direct webhook to one URL."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request
from starlette.responses import Response

from herald.names import PRIORITY_VALUES, STATUS_NAMES
from herald.v1 import common_pb2
from herald_gateway.access import Counted
from herald_gateway.http.deps import OperationsDep
from herald_gateway.http.schemas.submit import JobAccepted, WebhookIn, payload_of
from herald_gateway.idempotency import check_idempotency_key, request_hash
from herald_gateway.operations.submit import Submitted, WebhookInput

router = APIRouter(tags=["webhooks"])


def webhook_input(body: WebhookIn, idempotency_key: str, digest: bytes = b"") -> WebhookInput:
    """The request as the operations take it (shared with POST /v1/webhooks/batch)."""
    raw, content_type = payload_of(body)
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


async def keyed_digest(request: Request, route: str, idempotency_key: str | None) -> bytes:
    """What an Idempotency-Key is written with: the request's hash, once the key is checked;
    nothing without a key (shared with POST /v1/emails)."""
    if idempotency_key is None:
        return b""
    check_idempotency_key(idempotency_key)
    return request_hash("POST", route, await request.body())


def job_accepted(sent: Submitted, response: Response) -> JobAccepted:
    """The 202 of an accepted job: where to read it back, and whether this was a repeat."""
    response.headers["Location"] = f"/v1/jobs/{sent.job.id}"
    if sent.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return JobAccepted(id=sent.job.id, status=STATUS_NAMES.get(sent.job.status, "pending"))


@router.post("/v1/webhooks", status_code=202, response_model=JobAccepted)
async def send_webhook(
    body: WebhookIn,
    principal: Counted,
    operations: OperationsDep,
    response: Response,
    request: Request,
    idempotency_key: Annotated[str | None, Header()] = None,
) -> JobAccepted:
    """Accepts a webhook for delivery. The job is durable when this answers 202.

    With an Idempotency-Key, the key is written with the job in one transaction: a
    repeat answers 202 with the first job (`Idempotent-Replayed: true`), one with
    another body 422, and a repeat after a lost answer never makes a second job."""
    digest = await keyed_digest(request, "/v1/webhooks", idempotency_key)
    sent = await operations.send_webhook(principal, webhook_input(body, idempotency_key or "", digest))
    return job_accepted(sent, response)
