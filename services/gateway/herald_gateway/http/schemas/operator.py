"""What operators read across tenants: dead letters, the platform email log, streams, circuit breakers."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from herald.names import (
    CHANNEL_NAMES,
    STATUS_NAMES,
)
from herald.v1 import common_pb2
from herald_gateway.http.schemas.common import Page, Text, time_of
from herald_gateway.http.schemas.jobs import JobOut


class DeadLetterOut(BaseModel):
    job_id: str
    tenant_id: str
    channel: str
    error: str
    attempts: int
    run: int
    dead_lettered_at: datetime | None
    retried_at: datetime | None = None
    stream_sequence: int | None = None


class DeadLetterList(Page[DeadLetterOut]):
    pass


class DeadLetterDetail(DeadLetterOut):
    job: JobOut
    work_subject: str | None = None
    payload: dict[str, object] | None = Field(
        default=None, description="The work message as queued (from the dead-letter stream), as JSON."
    )


class RetryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_ids: list[Text] = Field(default_factory=list, max_length=1000)
    all: bool = Field(default=False, description="Every dead-lettered job still waiting (since `since`, if given).")
    since: datetime | None = None


class RetryOutcomeOut(BaseModel):
    job_id: str
    retried: bool
    status: str | None
    detail: str | None = None


class RetryOutcomeList(BaseModel):
    data: list[RetryOutcomeOut]


def dead_letter_out(entry: common_pb2.DeadLetter) -> DeadLetterOut:
    return DeadLetterOut(
        job_id=entry.job_id,
        tenant_id=entry.tenant_id,
        channel=CHANNEL_NAMES.get(entry.channel, "unknown"),
        error=entry.error,
        attempts=entry.attempts,
        run=entry.run,
        dead_lettered_at=time_of(entry, "dead_lettered_at"),
        retried_at=time_of(entry, "retried_at"),
        stream_sequence=entry.stream_sequence or None,
    )


PlatformEmailKind = Literal["quota_warning_80", "quota_warning_100", "dlq_alert", "api_key_created"]


class PlatformEmailOut(BaseModel):
    """One entry of the platform email log (Herald's own mail)."""

    id: str = Field(description="The job that carries the message (channel platform_email).")
    tenant_id: str = Field(description="The tenant it concerns; dead-letter alerts: the platform's own tenant.")
    kind: str
    recipient: str
    subject: str
    status: str = Field(description="pending | delivered | failed")
    attempts: int = Field(description="Walks over the platform provider spent so far.")
    job_status: str | None
    provider_message_id: str | None
    error: str | None
    created_at: datetime | None
    finished_at: datetime | None


class PlatformEmailList(Page[PlatformEmailOut]):
    pass


def platform_email_out(entry: common_pb2.PlatformEmail) -> PlatformEmailOut:
    return PlatformEmailOut(
        id=entry.id,
        tenant_id=entry.tenant_id,
        kind=entry.kind,
        recipient=entry.recipient,
        subject=entry.subject,
        status=entry.status,
        attempts=entry.attempts,
        job_status=STATUS_NAMES.get(entry.job_status),
        provider_message_id=entry.provider_message_id or None,
        error=entry.error or None,
        created_at=time_of(entry, "created_at"),
        finished_at=time_of(entry, "finished_at"),
    )


class StreamOut(BaseModel):
    name: str
    messages: int = Field(description="Depth: what the stream holds.")
    bytes: int
    consumers: int
    pending: int = Field(description="Lag: messages not yet delivered to its consumers.")
    ack_pending: int = Field(description="Delivered to a consumer, not yet acknowledged.")
    redelivered: int
    oldest_at: datetime | None = Field(description="When the oldest message still held was stored.")


class StreamList(BaseModel):
    data: list[StreamOut]


class CircuitOut(BaseModel):
    tenant_id: str
    provider_id: str
    provider: str
    state: str = Field(description="open (the provider is skipped) or half_open (the next call is a probe).")


class CircuitList(BaseModel):
    data: list[CircuitOut] = Field(description="Breakers not closed, in the email-sender replica that answered.")
