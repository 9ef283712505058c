"""Rows to protos and back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.engine import Row

from herald.v1 import common_pb2
from herald_ledger.job_status import JobStatus
from herald_ledger.store.codes import (
    CHANNEL_TO_PROTO,
    OUTCOME_TO_PROTO,
    PLAN_TO_PROTO,
    PRIORITY_TO_PROTO,
    STATUS_TO_PROTO,
)


def timestamp(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(value.astimezone(UTC))
    return stamp


def from_timestamp(stamp: Timestamp, present: bool) -> datetime | None:
    return stamp.ToDatetime(tzinfo=UTC) if present else None


def webhook_request_to_row(request: common_pb2.WebhookRequest) -> tuple[dict[str, Any], bytes]:
    return {
        "url": request.url,
        "headers": dict(request.headers),
        "content_type": request.content_type,
    }, request.body


def job_to_proto(row: Row[Any]) -> common_pb2.Job:
    mapping = row._mapping
    job = common_pb2.Job(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        channel=CHANNEL_TO_PROTO[row.channel],  # type: ignore[arg-type]
        status=STATUS_TO_PROTO[JobStatus(row.status)],  # type: ignore[arg-type]
        priority=PRIORITY_TO_PROTO[row.priority],  # type: ignore[arg-type]
        idempotency_key=row.idempotency_key or "",
        attempt_count=row.attempt_count,
        last_error=row.last_error or "",
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )
    if "request" in mapping and row.channel == "webhook":
        request = row.request
        job.webhook.CopyFrom(
            common_pb2.WebhookRequest(
                url=request["url"],
                headers=request.get("headers") or {},
                content_type=request.get("content_type") or "",
                body=bytes(row.body),
            )
        )
    return job


def attempt_to_proto(row: Row[Any]) -> common_pb2.Attempt:
    return common_pb2.Attempt(
        job_id=str(row.job_id),
        number=row.number,
        target=row.target,
        outcome=OUTCOME_TO_PROTO[row.outcome],  # type: ignore[arg-type]
        status_code=row.status_code or 0,
        duration_ms=row.duration_ms,
        error=row.error or "",
        started_at=timestamp(row.started_at),
    )


def tenant_to_proto(row: Row[Any]) -> common_pb2.Tenant:
    return common_pb2.Tenant(
        id=str(row.id),
        name=row.name,
        plan=PLAN_TO_PROTO[row.plan],  # type: ignore[arg-type]
        disabled=row.disabled,
        created_at=timestamp(row.created_at),
    )
