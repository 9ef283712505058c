"""Rows to protos and back."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.engine import Row

from herald.plans import TENANT_OVERRIDES
from herald.v1 import common_pb2
from herald_ledger.job_status import JobStatus
from herald_ledger.store.codes import (
    CHANNEL_TO_PROTO,
    OUTCOME_TO_PROTO,
    PLAN_TO_PROTO,
    PRIORITY_TO_PROTO,
    PROVIDER_TO_PROTO,
    STATUS_TO_PROTO,
    TLS_TO_PROTO,
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
    """The request's columns (JSONB: sealed headers as base64) and its body."""
    fields = {"url": request.url, "headers": dict(request.headers), "content_type": request.content_type}
    if request.sealed_headers:
        fields["sealed_headers"] = base64.b64encode(request.sealed_headers).decode()
    return fields, request.body


def email_request_to_row(request: common_pb2.EmailRequest) -> dict[str, Any]:
    fields: dict[str, Any] = json_format.MessageToDict(request, preserving_proto_field_name=True)
    return fields


def waiting_reason(job: Any) -> str:
    """Why a sender holds the job back, while that is news: it is QUEUED and no attempt was
    recorded since the sender said so."""
    noted = job.get("waiting_noted_at")
    if job.get("status") != JobStatus.QUEUED.value or noted is None or noted < job.get("updated_at"):
        return ""
    return str(job.get("waiting_reason") or "")


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
        ordering_key=row.ordering_key or "",
        target_id=str(row.target_id) if row._mapping.get("target_id") else "",
        run=mapping.get("run") or 0,
        provider_id=mapping.get("provider_id") or "",
        provider_message_id=mapping.get("provider_message_id") or "",
        status_event_id=mapping.get("status_event_id") or "",
        provider_delivered_at=timestamp(mapping.get("provider_delivered_at")),
        waiting_reason=waiting_reason(mapping),
        event_id=mapping.get("event_id") or "",
        origin_job_id=str(mapping["origin_job_id"]) if mapping.get("origin_job_id") else "",
        payload_expunged_at=timestamp(mapping.get("payload_expunged_at")),
        run_started_at=timestamp(mapping.get("run_started_at")),
    )
    if row.status == JobStatus.QUEUED.value and mapping.get("next_attempt_at") is not None:
        job.next_attempt_at.FromDatetime(mapping["next_attempt_at"].astimezone(UTC))
    if "request" in mapping and row.channel in ("email", "platform_email"):
        job.email.CopyFrom(json_format.ParseDict(row.request, common_pb2.EmailRequest()))
    if "request" not in mapping and mapping.get("url") and row.channel == "webhook":
        job.webhook.url = mapping["url"]  # a list's summary row carries only the URL
    if "request" in mapping and row.channel == "webhook":
        request = row.request
        job.webhook.CopyFrom(
            common_pb2.WebhookRequest(
                url=request["url"],
                headers=request.get("headers") or {},
                content_type=request.get("content_type") or "",
                body=bytes(row.body),
                sealed_headers=base64.b64decode(request.get("sealed_headers") or ""),
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
        provider_id=row.provider_id or "",
        provider_message_id=row.provider_message_id or "",
        walk=row.walk or 0,
        error_class=row.error_class or "",
        response_headers=row.response_headers or {},
        response_excerpt=row.response_excerpt or "",
    )


def dead_letter_to_proto(row: Row[Any]) -> common_pb2.DeadLetter:
    return common_pb2.DeadLetter(
        job_id=str(row.job_id),
        tenant_id=str(row.tenant_id),
        channel=CHANNEL_TO_PROTO[row.channel],  # type: ignore[arg-type]
        error=row.error,
        dead_lettered_at=timestamp(row.dead_lettered_at),
        attempts=row.attempts,
        stream_sequence=row.stream_sequence or 0,
        retried_at=timestamp(row.retried_at),
        run=row.run,
    )


def domain_to_proto(row: Row[Any]) -> common_pb2.SendingDomain:
    records = [
        common_pb2.DnsRecord(
            type=str(r.get("type", "")),
            name=str(r.get("name", "")),
            value=str(r.get("value", "")),
            status=str(r.get("status", "")),
            purpose=str(r.get("purpose", "")),
            priority=int(r.get("priority") or 0),
        )
        for r in row.records or []
    ]
    return common_pb2.SendingDomain(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        name=row.name,
        provider_id=str(row.provider_id) if row.provider_id else "",
        provider=PROVIDER_TO_PROTO.get(row.provider, common_pb2.EMAIL_PROVIDER_UNSPECIFIED),  # type: ignore[arg-type]
        provider_domain_id=row.provider_domain_id,
        verified=row.verified,
        records=records,
        provider_status=row.provider_status,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
        verified_at=timestamp(row.verified_at),
    )


def records_to_row(records: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": r.type,
            "name": r.name,
            "value": r.value,
            "status": r.status,
            "purpose": r.purpose,
            **({"priority": r.priority} if r.priority else {}),
        }
        for r in records
    ]


def tenant_to_proto(row: Row[Any]) -> common_pb2.Tenant:
    tenant = common_pb2.Tenant(
        id=str(row.id),
        name=row.name,
        plan=PLAN_TO_PROTO[row.plan],  # type: ignore[arg-type]
        disabled=row.disabled,
        created_at=timestamp(row.created_at),
        contact_email=row._mapping.get("contact_email") or "",
    )
    mapping = row._mapping
    for field in TENANT_OVERRIDES:
        if mapping.get(field) is not None:
            setattr(tenant, field, mapping[field])
    return tenant


def api_key_to_proto(row: Row[Any]) -> common_pb2.ApiKey:
    return common_pb2.ApiKey(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        name=row.name,
        public_id=row.public_id,
        created_at=timestamp(row.created_at),
        revoked_at=timestamp(row.revoked_at),
        last_used_at=timestamp(row.last_used_at),
        scopes=row.scopes,
    )


def provider_to_proto(row: Row[Any], masked_secret: str, secret_error: str) -> common_pb2.ProviderConfig:
    return common_pb2.ProviderConfig(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        provider=PROVIDER_TO_PROTO[row.provider],  # type: ignore[arg-type]
        priority=row.priority,
        base_url=row.base_url,
        options=row.options or {},
        masked_secret=masked_secret,
        secret_error=secret_error,
        smtp_host=row.smtp_host or "",
        smtp_port=row.smtp_port or 0,
        smtp_username=row.smtp_username or "",
        smtp_tls_mode=TLS_TO_PROTO.get(row.smtp_tls_mode or "", common_pb2.SMTP_TLS_MODE_UNSPECIFIED),  # type: ignore[arg-type]
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def webhook_secret_status(row: Row[Any] | None) -> common_pb2.WebhookSecretStatus:
    if row is None:
        return common_pb2.WebhookSecretStatus(exists=False)
    return common_pb2.WebhookSecretStatus(
        exists=True,
        created_at=timestamp(row.created_at),
        rotated_at=timestamp(row.rotated_at),
        previous_expires_at=timestamp(row.previous_expires_at),
    )


def target_to_proto(row: Row[Any]) -> common_pb2.WebhookTarget:
    target = common_pb2.WebhookTarget(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        url=row.url,
        description=row.description,
        headers=row.headers or {},
        sealed_headers=row.sealed_headers or b"",
        enabled=row.enabled,
        disabled_reason=row.disabled_reason or "",
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
        breaker="closed",
    )
    if row.rate_limit_per_min is not None:
        target.rate_limit_per_min = row.rate_limit_per_min
    if getattr(row, "max_in_flight", None) is not None:
        target.max_in_flight = row.max_in_flight
    failing_since = timestamp(getattr(row, "failing_since", None))
    if failing_since is not None:
        target.failing_since.CopyFrom(failing_since)
    last_success = timestamp(getattr(row, "last_success_at", None))
    if last_success is not None:
        target.last_success_at.CopyFrom(last_success)
    return target


def filter_to_proto(row: Row[Any]) -> common_pb2.EventFilter:
    return common_pb2.EventFilter(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        description=row.description,
        event_types=list(row.event_types),
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )


def subscription_to_proto(row: Row[Any]) -> common_pb2.Subscription:
    return common_pb2.Subscription(
        id=str(row.id),
        tenant_id=str(row.tenant_id),
        target_id=str(row.target_id),
        filter_id=str(row.filter_id),
        active=row.active,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at),
    )
