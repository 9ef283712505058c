"""POST /v1/emails: accepted here, delivered by the email-sender through the tenant's providers."""

from __future__ import annotations

from email.utils import parseaddr
from functools import lru_cache
from typing import Annotated

from fastapi import APIRouter, Header, Request
from starlette.responses import Response

from herald.names import PRIORITY_VALUES
from herald.v1 import common_pb2
from herald_gateway.access import Counted
from herald_gateway.http.deps import OperationsDep
from herald_gateway.http.routes.webhooks import job_accepted, keyed_digest
from herald_gateway.http.schemas.submit import AddressIn, EmailIn, JobAccepted

router = APIRouter(tags=["emails"])


@lru_cache(maxsize=8192)
def _parsed(value: str) -> tuple[str, str]:
    """(name, email) of "Ann <a@example.com>" (cached: addresses repeat; the parse is pure Python)."""
    name, email = parseaddr(value)
    return name, email or value


def address(value: AddressIn) -> common_pb2.EmailAddress:
    """As given; the handler validates and normalizes every address."""
    if isinstance(value, str):
        name, email = _parsed(value)
        return common_pb2.EmailAddress(email=email, name=name)
    return common_pb2.EmailAddress(email=value.email, name=value.name)


def email_request(body: EmailIn) -> common_pb2.EmailRequest:
    """The request as the operations take it (shared with POST /v1/emails/batch)."""
    email = common_pb2.EmailRequest(
        subject=body.subject,
        text=body.text or "",
        html=body.html or "",
        headers=body.headers,
        tags=body.tags,
        metadata=body.metadata,
        provider_id=body.provider or "",
        fallback_provider_id=body.fallback or "",
    )
    email.__getattribute__("from").CopyFrom(address(body.from_))
    for field in ("to", "cc", "bcc"):
        for value in getattr(body, field):
            getattr(email, field).append(address(value))
    if body.reply_to is not None:
        email.reply_to.CopyFrom(address(body.reply_to))
    return email


@router.post("/v1/emails", status_code=202, response_model=JobAccepted)
async def send_email(
    body: EmailIn,
    principal: Counted,
    operations: OperationsDep,
    response: Response,
    request: Request,
    idempotency_key: Annotated[str | None, Header()] = None,
) -> JobAccepted:
    """Accepts an email for delivery. The job is durable when this answers 202. An
    Idempotency-Key is written with the job, as for `POST /v1/webhooks`.

    Refused with 422 (`sender-domain-unverified`) when the from-domain is one of your
    sending domains that is not verified yet; a domain you never registered is not
    checked by Herald (your provider enforces its own sender identity)."""
    digest = await keyed_digest(request, "/v1/emails", idempotency_key)
    sent = await operations.send_email(
        principal,
        email_request(body),
        PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED),
        idempotency_key or "",
        body.ordering_key or "",
        digest,
    )
    return job_accepted(sent, response)
