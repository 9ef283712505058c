"""Request and response bodies, as the OpenAPI document shows them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from herald.v1 import common_pb2

PriorityName = Literal["low", "normal", "critical"]
PRIORITY_VALUES: dict[str, int] = {
    "low": common_pb2.PRIORITY_LOW,
    "normal": common_pb2.PRIORITY_NORMAL,
    "critical": common_pb2.PRIORITY_CRITICAL,
}
STATUS_NAMES: dict[int, str] = {
    common_pb2.JOB_STATUS_PENDING: "pending",
    common_pb2.JOB_STATUS_QUEUED: "queued",
    common_pb2.JOB_STATUS_DELIVERING: "delivering",
    common_pb2.JOB_STATUS_DELIVERED: "delivered",
    common_pb2.JOB_STATUS_FAILED: "failed",
}
STATUS_VALUES = {v: k for k, v in STATUS_NAMES.items()}
CHANNEL_NAMES = {
    common_pb2.CHANNEL_WEBHOOK: "webhook",
    common_pb2.CHANNEL_EMAIL: "email",
    common_pb2.CHANNEL_PLATFORM_EMAIL: "platform_email",
}
CHANNEL_VALUES = {v: k for k, v in CHANNEL_NAMES.items()}
PLAN_VALUES = {
    "free": common_pb2.PLAN_FREE,
    "indie": common_pb2.PLAN_INDIE,
    "startup": common_pb2.PLAN_STARTUP,
}
PLAN_NAMES = {v: k for k, v in PLAN_VALUES.items()}
OUTCOME_NAMES = {
    common_pb2.ATTEMPT_OUTCOME_SUCCEEDED: "succeeded",
    common_pb2.ATTEMPT_OUTCOME_TRANSIENT_FAILURE: "transient_failure",
    common_pb2.ATTEMPT_OUTCOME_PERMANENT_FAILURE: "permanent_failure",
}


class WebhookIn(BaseModel):
    """Exactly one of `payload` (any JSON value, delivered as compact JSON) and
    `payload_base64` (opaque bytes, delivered exactly) is required."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=2048, examples=["https://example.com/hooks/orders"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": 42, "status": "paid"}])
    payload_base64: str | None = None
    content_type: str | None = Field(default=None, max_length=255)
    headers: dict[str, str] = Field(default_factory=dict)
    priority: PriorityName | None = None


class JobAccepted(BaseModel):
    id: str
    status: str


class AttemptOut(BaseModel):
    number: int
    target: str
    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    started_at: datetime | None


class JobOut(BaseModel):
    id: str
    channel: str
    status: str
    priority: str
    attempt_count: int
    last_error: str | None
    idempotency_key: str | None
    created_at: datetime | None
    updated_at: datetime | None
    url: str | None = None
    attempts: list[AttemptOut] | None = None


class JobList(BaseModel):
    data: list[JobOut]
    next_cursor: str | None


class TenantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    plan: Literal["free", "indie", "startup"]


class TenantCreated(BaseModel):
    tenant_id: str
    name: str
    plan: str
    api_key: str = Field(description="Shown once. Only its SHA-256 is stored.")


def when(stamp: Timestamp, present: bool) -> datetime | None:
    return stamp.ToDatetime(tzinfo=UTC) if present else None


def attempt_out(attempt: common_pb2.Attempt) -> AttemptOut:
    return AttemptOut(
        number=attempt.number,
        target=attempt.target,
        outcome=OUTCOME_NAMES.get(attempt.outcome, "unknown"),
        status_code=attempt.status_code or None,
        duration_ms=attempt.duration_ms,
        error=attempt.error or None,
        started_at=when(attempt.started_at, attempt.HasField("started_at")),
    )


def job_out(job: common_pb2.Job, attempts: list[common_pb2.Attempt] | None = None) -> JobOut:
    return JobOut(
        id=job.id,
        channel=CHANNEL_NAMES.get(job.channel, "unknown"),
        status=STATUS_NAMES.get(job.status, "unknown"),
        priority={v: k for k, v in PRIORITY_VALUES.items()}.get(job.priority, "normal"),
        attempt_count=job.attempt_count,
        last_error=job.last_error or None,
        idempotency_key=job.idempotency_key or None,
        created_at=when(job.created_at, job.HasField("created_at")),
        updated_at=when(job.updated_at, job.HasField("updated_at")),
        url=job.webhook.url if job.HasField("webhook") else None,
        attempts=[attempt_out(a) for a in attempts] if attempts is not None else None,
    )
