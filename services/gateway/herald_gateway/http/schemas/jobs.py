"""A job as GET /v1/jobs shows it, with its attempts."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, JsonValue

from herald.names import (
    CHANNEL_NAMES,
    OUTCOME_NAMES,
    PRIORITY_VALUES,
    STATUS_NAMES,
)
from herald.v1 import common_pb2
from herald_gateway.http.schemas.common import Page, payload_views, time_of


class AttemptOut(BaseModel):
    number: int
    target: str = Field(description="The URL called, or (email) the provider kind.")
    outcome: str = Field(
        description="succeeded, transient_failure, permanent_failure, or skipped: no call was made (email: the "
        "provider's circuit was open; webhook: the target's circuit held the delivery past its retry window)."
    )
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: datetime | None
    provider_id: str | None = Field(default=None, description="Email: which of your providers.")
    provider_message_id: str | None = Field(default=None, description="Email: the provider's id for the message.")
    walk: int | None = Field(default=None, description="Email: which pass over your providers (1, 2, 3).")
    error_class: str | None = Field(
        default=None,
        description="Webhooks, on failure: http_status, timeout, connect, tls, dns, refused_by_guard, protocol, "
        "network, invalid_url, other, or circuit_open (not called: held past the retry window).",
    )
    response_headers: dict[str, str] | None = Field(
        default=None, description="Webhooks: the receiver's response headers (capped; cookies left out)."
    )
    response_excerpt: str | None = Field(
        default=None, description="Webhooks: the first 4 KiB of the receiver's response body."
    )


class JobOut(BaseModel):
    id: str
    channel: str
    status: str
    priority: str
    attempt_count: int
    last_error: str | None
    waiting_reason: str | None = Field(
        default=None,
        description=(
            "Queued and not called yet because the sender holds it back, why: its target at its "
            "concurrency bound, its tenant at its share of the sender's calls, or its target's circuit open."
        ),
    )
    idempotency_key: str | None
    created_at: datetime | None
    updated_at: datetime | None
    url: str | None = None
    attempts: list[AttemptOut] | None = None
    run: int = Field(default=0, description="How many explicit retries ran the job again.")
    provider_id: str | None = Field(default=None, description="Email: the provider that accepted it.")
    provider_message_id: str | None = Field(default=None, description="Email: the provider's id for the message.")
    provider_delivered_at: datetime | None = Field(
        default=None,
        description="Email: when the provider reported it delivered to a recipient's mail server (its earliest "
        "'delivered' event). Status 'delivered' alone means the provider accepted it.",
    )
    status_event_id: str | None = Field(
        default=None,
        description="'bounced' / 'complained': the provider event (provider:event id) that set the status; "
        "see GET /v1/jobs/{id}/events.",
    )
    event_id: str | None = Field(default=None, description="The event this job delivers (GET /v1/events/{id}).")
    target_id: str | None = Field(default=None, description="The subscription target an event sent it to.")
    origin_job_id: str | None = Field(default=None, description="A resend: the job it sends again.")
    next_attempt_at: datetime | None = Field(
        default=None, description="Queued after a failed attempt: when the next attempt is due."
    )
    headers: dict[str, str] | None = Field(
        default=None,
        description="Webhooks, GET /v1/jobs/{id} only: the request's headers, values masked ('Bearer ****3c9a'). "
        "Each attempt adds content-type, user-agent, webhook-id (the job id) and, when signed, webhook-timestamp "
        "and webhook-signature (and X-Webhook-Timestamp / X-Webhook-Signature with a tenant secret), signed "
        "afresh right before the call; those are not recorded.",
    )
    content_type: str | None = Field(default=None, description="Webhooks, GET /v1/jobs/{id} only: as sent.")
    payload: JsonValue = Field(
        default=None, description="Webhooks, GET /v1/jobs/{id} only: the payload, when it is JSON."
    )
    payload_base64: str | None = Field(
        default=None, description="Webhooks, GET /v1/jobs/{id} only: the payload as sent, base64."
    )
    payload_expunged_at: datetime | None = Field(
        default=None,
        description="When the payload went (DELETE /v1/jobs/{id}/payload or retention): the body, an email's "
        "request, a webhook's request headers and the attempts' response headers and excerpts are gone.",
    )


class JobList(Page[JobOut]):
    pass


def attempt_out(attempt: common_pb2.Attempt) -> AttemptOut:
    return AttemptOut(
        number=attempt.number,
        target=attempt.target,
        outcome=OUTCOME_NAMES.get(attempt.outcome, "unknown"),
        status_code=attempt.status_code or None,
        duration_ms=attempt.duration_ms,
        error=attempt.error or None,
        started_at=time_of(attempt, "started_at"),
        provider_id=attempt.provider_id or None,
        provider_message_id=attempt.provider_message_id or None,
        walk=attempt.walk or None,
        error_class=attempt.error_class or None,
        response_headers=dict(attempt.response_headers) or None,
        response_excerpt=attempt.response_excerpt or None,
    )


def job_out(job: common_pb2.Job, attempts: list[common_pb2.Attempt] | None = None) -> JobOut:
    """A job; with its `attempts` (GET one), a webhook's request too: what was sent."""
    out = _summary(job, attempts)
    if attempts is not None and job.HasField("webhook"):
        out.headers = dict(job.webhook.headers)
        out.content_type = job.webhook.content_type or None
        if not job.HasField("payload_expunged_at"):
            out.payload, out.payload_base64 = payload_views(job.webhook.body, job.webhook.content_type)
    return out


def _summary(job: common_pb2.Job, attempts: list[common_pb2.Attempt] | None) -> JobOut:
    return JobOut(
        id=job.id,
        channel=CHANNEL_NAMES.get(job.channel, "unknown"),
        status=STATUS_NAMES.get(job.status, "unknown"),
        priority={v: k for k, v in PRIORITY_VALUES.items()}.get(job.priority, "normal"),
        attempt_count=job.attempt_count,
        last_error=job.last_error or None,
        waiting_reason=job.waiting_reason or None,
        idempotency_key=job.idempotency_key or None,
        created_at=time_of(job, "created_at"),
        updated_at=time_of(job, "updated_at"),
        url=job.webhook.url if job.HasField("webhook") else None,
        attempts=[attempt_out(a) for a in attempts] if attempts is not None else None,
        run=job.run,
        provider_id=job.provider_id or None,
        provider_message_id=job.provider_message_id or None,
        provider_delivered_at=time_of(job, "provider_delivered_at"),
        status_event_id=job.status_event_id or None,
        event_id=job.event_id or None,
        target_id=job.target_id or None,
        origin_job_id=job.origin_job_id or None,
        next_attempt_at=time_of(job, "next_attempt_at"),
        payload_expunged_at=time_of(job, "payload_expunged_at"),
    )
