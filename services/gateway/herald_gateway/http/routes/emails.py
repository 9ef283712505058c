"""POST /v1/emails: accepted here, delivered by the email-sender through the tenant's providers."""

from __future__ import annotations

from email.utils import parseaddr
from typing import Annotated

from email_validator import EmailNotValidError, validate_email
from fastapi import APIRouter, Header
from starlette.responses import Response

from herald.v1 import common_pb2
from herald_gateway.errors import Invalid
from herald_gateway.http.admission import Counted
from herald_gateway.http.deps import HandlersDep
from herald_gateway.http.schemas import PRIORITY_VALUES, STATUS_NAMES, AddressIn, EmailIn, JobAccepted

router = APIRouter(tags=["emails"])


def address(value: AddressIn, field: str, problems: list[tuple[str, str]]) -> common_pb2.EmailAddress:
    if isinstance(value, str):
        name, email = parseaddr(value)
    else:
        name, email = value.name, value.email
    try:
        normalized = validate_email(email, check_deliverability=False).normalized
    except EmailNotValidError as error:
        problems.append((field, str(error)))
        return common_pb2.EmailAddress()
    return common_pb2.EmailAddress(email=normalized, name=name)


@router.post("/v1/emails", status_code=202, response_model=JobAccepted)
async def send_email(
    body: EmailIn,
    principal: Counted,
    handlers: HandlersDep,
    response: Response,
    idempotency_key: Annotated[str | None, Header()] = None,
) -> JobAccepted:
    """Accepts an email for delivery. The job is durable when this answers 202."""
    problems: list[tuple[str, str]] = []
    if not body.text and not body.html:
        problems.append(("text/html", "give text, html or both"))
    if body.fallback and not body.provider:
        problems.append(("fallback", "a fallback needs a pinned provider"))
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
    email.__getattribute__("from").CopyFrom(address(body.from_, "from", problems))
    for field in ("to", "cc", "bcc"):
        for i, value in enumerate(getattr(body, field)):
            getattr(email, field).append(address(value, f"{field}[{i}]", problems))
    if body.reply_to is not None:
        email.reply_to.CopyFrom(address(body.reply_to, "reply_to", problems))
    if problems:
        raise Invalid(problems)
    job = await handlers.send_email(
        principal,
        email,
        PRIORITY_VALUES.get(body.priority or "", common_pb2.PRIORITY_UNSPECIFIED),
        idempotency_key or "",
        body.ordering_key or "",
    )
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return JobAccepted(id=job.id, status=STATUS_NAMES.get(job.status, "pending"))
