"""Request and response bodies, as the OpenAPI document shows them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import orjson
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

from herald.v1 import common_pb2, gateway_pb2
from herald_gateway.errors import Invalid

# Refused at the door rather than downstream, where they would fail as 5xx: NUL (U+0000),
# which PostgreSQL cannot store in text, in any string a request carries; anything but
# printable ASCII in a credential Herald sends in an HTTP header; integers beyond the
# int32 the protobuf messages and the database columns hold. The patterns run in
# pydantic's core (no Python call per field) and are in the OpenAPI document.
NO_NUL_PATTERN = r"^[^\x00]*$"
HEADER_SAFE_PATTERN = r"^[\x20-\x7e]*$"
PATTERN_MEANINGS = {
    NO_NUL_PATTERN: "must not contain NUL (U+0000) characters",
    HEADER_SAFE_PATTERN: "must be printable ASCII (it is sent in an HTTP header)",
}
INT32_MAX = 2**31 - 1
Text = Annotated[str, StringConstraints(pattern=NO_NUL_PATTERN)]
HeaderSafe = Annotated[str, StringConstraints(pattern=HEADER_SAFE_PATTERN)]

PriorityName = Literal["low", "normal", "critical"]
PRIORITY_VALUES: dict[str, int] = {
    "low": common_pb2.PRIORITY_LOW,
    "normal": common_pb2.PRIORITY_NORMAL,
    "critical": common_pb2.PRIORITY_CRITICAL,
}
STATUS_NAMES: dict[int, str] = {
    common_pb2.JOB_STATUS_SUPPRESSED: "suppressed",
    common_pb2.JOB_STATUS_PENDING: "pending",
    common_pb2.JOB_STATUS_QUEUED: "queued",
    common_pb2.JOB_STATUS_DELIVERING: "delivering",
    common_pb2.JOB_STATUS_DELIVERED: "delivered",
    common_pb2.JOB_STATUS_FAILED: "failed",
    common_pb2.JOB_STATUS_BOUNCED: "bounced",
    common_pb2.JOB_STATUS_COMPLAINED: "complained",
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
    common_pb2.ATTEMPT_OUTCOME_SKIPPED: "skipped",
}


def compact_json(payload: JsonValue) -> bytes:
    """A `payload` as delivered: compact UTF-8 JSON. What cannot be written so (an integer
    beyond 64 bits, a lone surrogate) is the tenant's to fix: 422, not 500."""
    try:
        return orjson.dumps(payload)
    except orjson.JSONEncodeError as error:
        raise Invalid([("payload", f"cannot be delivered as JSON: {error}")]) from error


class WebhookIn(BaseModel):
    """Exactly one of `payload` (any JSON value, delivered as compact JSON) and
    `payload_base64` (opaque bytes, delivered exactly) is required."""

    model_config = ConfigDict(extra="forbid")

    url: Text = Field(max_length=2048, examples=["https://example.com/hooks/orders"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": 42, "status": "paid"}])
    payload_base64: Text | None = None
    content_type: Text | None = Field(default=None, max_length=255)
    headers: dict[Text, Text] = Field(default_factory=dict)
    priority: PriorityName | None = None
    ordering_key: Text | None = Field(
        default=None,
        max_length=255,
        description="Jobs sharing a key are delivered one at a time, in submission order.",
    )


class EmailAddressIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Text = Field(max_length=320)
    name: Text = Field(default="", max_length=200)


AddressIn = EmailAddressIn | Text


class EmailIn(BaseModel):
    """An address is `"a@example.com"`, `"Ann <a@example.com>"` or `{"email": ..., "name": ...}`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: AddressIn = Field(alias="from")
    to: list[AddressIn] = Field(min_length=1, max_length=50)
    cc: list[AddressIn] = Field(default_factory=list, max_length=50)
    bcc: list[AddressIn] = Field(default_factory=list, max_length=50)
    reply_to: AddressIn | None = None
    subject: Text = Field(min_length=1, max_length=998)
    text: Text | None = Field(default=None, max_length=2_000_000)
    html: Text | None = Field(default=None, max_length=5_000_000)
    headers: dict[Text, Text] = Field(default_factory=dict, max_length=50)
    tags: list[Text] = Field(default_factory=list, max_length=20)
    metadata: dict[Text, Text] = Field(default_factory=dict, max_length=50)
    provider: Text | None = Field(
        default=None, description="Pin one of your provider ids; then only it and `fallback`."
    )
    fallback: Text | None = None
    priority: PriorityName | None = None
    ordering_key: Text | None = Field(default=None, max_length=255)


class UsageOut(BaseModel):
    period: str
    webhooks: int
    emails: int
    webhooks_limit: int | None = Field(description="None: unlimited.")
    emails_limit: int | None
    shared_limit: int | None = Field(description="FREE: emails and webhooks share one allowance.")


class SuppressionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: Text = Field(max_length=320)


class SuppressionOut(BaseModel):
    address: str
    reason: str
    source_event_id: str | None
    created_at: datetime | None


class SuppressionList(BaseModel):
    data: list[SuppressionOut]
    next_cursor: str | None


# A tenant limit: the ledger keeps it in an int32 (protobuf) and an integer column.
Limit = Annotated[int, Field(ge=0, le=INT32_MAX)]


class LimitsPatch(BaseModel):
    """Per limit: a number, "unlimited", or "plan" to go back to the plan's value."""

    model_config = ConfigDict(extra="forbid")

    rate_per_min: Limit | Literal["unlimited", "plan"] | None = None
    webhooks_per_month: Limit | Literal["unlimited", "plan"] | None = None
    emails_per_month: Limit | Literal["unlimited", "plan"] | None = None


def usage_out(usage: common_pb2.Usage) -> UsageOut:
    def limit(value: int) -> int | None:
        return None if value < 0 else value

    return UsageOut(
        period=usage.period,
        webhooks=usage.webhooks,
        emails=usage.emails,
        webhooks_limit=limit(usage.webhooks_limit),
        emails_limit=limit(usage.emails_limit),
        shared_limit=limit(usage.shared_limit),
    )


class JobAccepted(BaseModel):
    id: str
    status: str


class AttemptOut(BaseModel):
    number: int
    target: str = Field(description="The URL called, or (email) the provider kind.")
    outcome: str = Field(description="succeeded, transient_failure, permanent_failure, or (email) skipped.")
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
        "network, invalid_url or other.",
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


class JobList(BaseModel):
    data: list[JobOut]
    next_cursor: str | None


class TenantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=200)
    plan: Literal["free", "indie", "startup"]
    contact_email: Text | None = Field(
        default=None, max_length=320, description="Where Herald's own mail (quota warnings, key-created notices) goes."
    )


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
        provider_id=attempt.provider_id or None,
        provider_message_id=attempt.provider_message_id or None,
        walk=attempt.walk or None,
        error_class=attempt.error_class or None,
        response_headers=dict(attempt.response_headers) or None,
        response_excerpt=attempt.response_excerpt or None,
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
        run=job.run,
        provider_id=job.provider_id or None,
        provider_message_id=job.provider_message_id or None,
        provider_delivered_at=when(job.provider_delivered_at, job.HasField("provider_delivered_at")),
        status_event_id=job.status_event_id or None,
    )


class ApiKeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(default="default", min_length=1, max_length=100)


class ApiKeyOut(BaseModel):
    id: str
    name: str
    public_id: str = Field(description="Part of the key (hk_live_<public_id>_...): names it without revealing it.")
    created_at: datetime | None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


class ApiKeyCreated(ApiKeyOut):
    api_key: str = Field(description="Shown once. Only its SHA-256 is stored.")


class ApiKeyList(BaseModel):
    data: list[ApiKeyOut]


ProviderName = Literal["sendgrid", "resend", "postmark", "smtp"]
PROVIDER_VALUES = {
    "sendgrid": common_pb2.EMAIL_PROVIDER_SENDGRID,
    "resend": common_pb2.EMAIL_PROVIDER_RESEND,
    "postmark": common_pb2.EMAIL_PROVIDER_POSTMARK,
    "smtp": common_pb2.EMAIL_PROVIDER_SMTP,
}
PROVIDER_NAMES = {v: k for k, v in PROVIDER_VALUES.items()}
TLS_VALUES = {
    "starttls": common_pb2.SMTP_TLS_MODE_STARTTLS,
    "implicit": common_pb2.SMTP_TLS_MODE_IMPLICIT,
    "none": common_pb2.SMTP_TLS_MODE_NONE,
}
TLS_NAMES = {v: k for k, v in TLS_VALUES.items()}


class SmtpIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: Text = Field(min_length=1, max_length=255)
    port: int = Field(ge=1, le=65535)
    username: Text = Field(default="", max_length=255)
    password: Text = Field(default="", max_length=1024, repr=False)
    tls_mode: Literal["starttls", "implicit", "none"] = "starttls"


POSTMARK_ACCOUNT_NOTE = (
    "Postmark only: the account token its domains API takes (sending uses the server token, api_key). "
    "Checked with Postmark, stored sealed with the server token, never shown again (masked_account_token)."
)


class ProviderIn(BaseModel):
    """`api_key` for SendGrid, Resend and Postmark (the server token); `smtp` for SMTP."""

    model_config = ConfigDict(extra="forbid")

    provider: ProviderName
    api_key: HeaderSafe | None = Field(default=None, max_length=1024, repr=False)
    account_token: HeaderSafe | None = Field(
        default=None, max_length=1024, repr=False, description=POSTMARK_ACCOUNT_NOTE
    )
    smtp: SmtpIn | None = None
    priority: int = Field(default=0, ge=0, le=1_000_000, description="Higher is tried first.")
    base_url: Text = Field(
        default="", max_length=2048, description="The provider's API base URL; empty for the real one."
    )
    options: dict[Text, Text] = Field(default_factory=dict, max_length=50)


class ProviderPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    priority: int | None = Field(default=None, ge=0, le=1_000_000)
    base_url: Text | None = Field(default=None, max_length=2048)
    options: dict[Text, Text] | None = Field(default=None, max_length=50)
    api_key: HeaderSafe | None = Field(default=None, max_length=1024, repr=False)
    smtp: SmtpIn | None = None
    account_token: HeaderSafe | None = Field(
        default=None, max_length=1024, repr=False, description=POSTMARK_ACCOUNT_NOTE + ' "" removes it.'
    )


class ProviderOut(BaseModel):
    id: str
    provider: str
    priority: int
    base_url: str
    options: dict[str, str]
    masked_secret: str | None = Field(description="e.g. SG.****abcd; never the secret itself.")
    secret_error: str | None = Field(description="Set when the stored secret cannot be opened: the row is unusable.")
    masked_account_token: str | None = Field(
        default=None, description="Postmark: the stored account token, masked; null when none is stored."
    )
    smtp: dict[str, object] | None = None
    created_at: datetime | None
    updated_at: datetime | None


class ProviderList(BaseModel):
    data: list[ProviderOut]


class WebhookSecretStatusOut(BaseModel):
    exists: bool
    created_at: datetime | None = None
    rotated_at: datetime | None = None
    previous_expires_at: datetime | None = Field(
        default=None, description="Until then the previous secret still signs alongside the new one."
    )


class WebhookSecretCreated(WebhookSecretStatusOut):
    secret: str = Field(description="Shown once. Herald keeps it encrypted to sign deliveries.")


class TenantOut(BaseModel):
    id: str
    name: str
    plan: str
    disabled: bool
    created_at: datetime | None
    limits: dict[str, int | str] = Field(default_factory=dict, description="Operator overrides of the plan.")
    contact_email: str | None = None


class TenantList(BaseModel):
    data: list[TenantOut]
    next_cursor: str | None


class TenantPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: Literal["free", "indie", "startup"] | None = None
    disabled: bool | None = None
    contact_email: Text | None = Field(default=None, max_length=320, description='"" clears it.')


class MasterKeyRotation(BaseModel):
    reencrypted: int
    already_current: int
    active_key_id: str
    unreadable_ids: list[str] = Field(
        description="Rows whose secret did not open (tampered or moved); left as they are."
    )


def api_key_out(key: common_pb2.ApiKey) -> ApiKeyOut:
    return ApiKeyOut(
        id=key.id,
        name=key.name,
        public_id=key.public_id,
        created_at=when(key.created_at, key.HasField("created_at")),
        revoked_at=when(key.revoked_at, key.HasField("revoked_at")),
        last_used_at=when(key.last_used_at, key.HasField("last_used_at")),
    )


def provider_out(provider: common_pb2.ProviderConfig) -> ProviderOut:
    smtp = None
    if provider.provider == common_pb2.EMAIL_PROVIDER_SMTP:
        smtp = {
            "host": provider.smtp_host,
            "port": provider.smtp_port,
            "username": provider.smtp_username,
            "tls_mode": TLS_NAMES.get(provider.smtp_tls_mode, "starttls"),
        }
    return ProviderOut(
        id=provider.id,
        provider=PROVIDER_NAMES.get(provider.provider, "unknown"),
        priority=provider.priority,
        base_url=provider.base_url,
        options=dict(provider.options),
        masked_secret=provider.masked_secret or None,
        secret_error=provider.secret_error or None,
        masked_account_token=provider.masked_account_token or None,
        smtp=smtp,
        created_at=when(provider.created_at, provider.HasField("created_at")),
        updated_at=when(provider.updated_at, provider.HasField("updated_at")),
    )


def credential_from(provider: str, api_key: str | None, smtp: SmtpIn | None) -> common_pb2.ProviderCredential:
    credential = common_pb2.ProviderCredential(provider=PROVIDER_VALUES[provider])  # type: ignore[arg-type]
    if api_key is not None:
        credential.api_key = api_key
    if smtp is not None:
        credential.smtp.CopyFrom(
            common_pb2.SmtpSettings(
                host=smtp.host,
                port=smtp.port,
                username=smtp.username,
                password=smtp.password,
                tls_mode=TLS_VALUES[smtp.tls_mode],  # type: ignore[arg-type]
            )
        )
    return credential


def secret_status_out(status: common_pb2.WebhookSecretStatus) -> WebhookSecretStatusOut:
    return WebhookSecretStatusOut(
        exists=status.exists,
        created_at=when(status.created_at, status.HasField("created_at")),
        rotated_at=when(status.rotated_at, status.HasField("rotated_at")),
        previous_expires_at=when(status.previous_expires_at, status.HasField("previous_expires_at")),
    )


def tenant_out(tenant: common_pb2.Tenant) -> TenantOut:
    limits: dict[str, int | str] = {}
    for field in ("rate_per_min", "webhooks_per_month", "emails_per_month"):
        if tenant.HasField(field):
            value = getattr(tenant, field)
            limits[field] = "unlimited" if value < 0 else value
    return TenantOut(
        id=tenant.id,
        name=tenant.name,
        plan=PLAN_NAMES.get(tenant.plan, "free"),
        disabled=tenant.disabled,
        created_at=when(tenant.created_at, tenant.HasField("created_at")),
        limits=limits,
        contact_email=tenant.contact_email or None,
    )


class DomainIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: Text = Field(max_length=253, examples=["mail.example.com"])
    provider_id: Text = Field(max_length=64, description="One of your providers (SendGrid, Resend or Postmark).")
    account_token: HeaderSafe | None = Field(
        default=None,
        max_length=1024,
        repr=False,
        description="No longer taken: store Postmark's account token with the provider (PATCH /v1/providers/{id}).",
        deprecated=True,
    )


class DomainVerifyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    account_token: HeaderSafe | None = Field(
        default=None, max_length=1024, repr=False, deprecated=True, description="No longer taken (see DomainIn)."
    )


class DnsRecordOut(BaseModel):
    type: str
    name: str
    value: str
    status: str = Field(description="pending, verified or failed")
    purpose: str | None = None
    priority: int | None = None


class DomainOut(BaseModel):
    id: str
    domain: str
    provider_id: str | None
    provider: str
    verified: bool
    status: str = Field(description="verified, or pending until the provider has checked the records.")
    provider_status: str | None
    records: list[DnsRecordOut]
    created_at: datetime | None
    updated_at: datetime | None
    verified_at: datetime | None


class DomainList(BaseModel):
    data: list[DomainOut]


def domain_out(domain: common_pb2.SendingDomain) -> DomainOut:
    return DomainOut(
        id=domain.id,
        domain=domain.name,
        provider_id=domain.provider_id or None,
        provider=PROVIDER_NAMES.get(domain.provider, "unknown"),
        verified=domain.verified,
        status="verified" if domain.verified else "pending",
        provider_status=domain.provider_status or None,
        records=[
            DnsRecordOut(
                type=r.type,
                name=r.name,
                value=r.value,
                status=r.status,
                purpose=r.purpose or None,
                priority=r.priority or None,
            )
            for r in domain.records
        ],
        created_at=when(domain.created_at, domain.HasField("created_at")),
        updated_at=when(domain.updated_at, domain.HasField("updated_at")),
        verified_at=when(domain.verified_at, domain.HasField("verified_at")),
    )


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


class DeadLetterList(BaseModel):
    data: list[DeadLetterOut]
    next_cursor: str | None


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
        dead_lettered_at=when(entry.dead_lettered_at, entry.HasField("dead_lettered_at")),
        retried_at=when(entry.retried_at, entry.HasField("retried_at")),
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


class PlatformEmailList(BaseModel):
    data: list[PlatformEmailOut]
    next_cursor: str | None


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
        created_at=when(entry.created_at, entry.HasField("created_at")),
        finished_at=when(entry.finished_at, entry.HasField("finished_at")),
    )


class TargetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: Text = Field(max_length=2048, examples=["https://example.com/hooks/orders"])
    description: Text = Field(default="", max_length=1000)
    headers: dict[Text, Text] = Field(default_factory=dict)
    rate_limit_per_min: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000,
        description="Deliveries per minute, spaced evenly; deliveries over it wait (they are not failures).",
    )
    enabled: bool = True
    disabled_reason: Text | None = Field(default=None, max_length=1000)


class TargetPatch(BaseModel):
    """Only the fields given change. `headers` replaces all headers; `rate_limit_per_min`
    null removes the limit; `enabled: true` clears the reason."""

    model_config = ConfigDict(extra="forbid")

    url: Text | None = Field(default=None, max_length=2048)
    description: Text | None = Field(default=None, max_length=1000)
    headers: dict[Text, Text] | None = None
    rate_limit_per_min: int | None = Field(default=None, ge=1, le=1_000_000)
    enabled: bool | None = None
    disabled_reason: Text | None = Field(default=None, max_length=1000)


class TargetOut(BaseModel):
    id: str
    url: str
    description: str
    headers: dict[str, str]
    rate_limit_per_min: int | None
    enabled: bool
    disabled_reason: str | None
    created_at: datetime | None
    updated_at: datetime | None
    failing_since: datetime | None = Field(
        default=None, description="The first failed delivery since the last success; null when not failing."
    )


class TargetList(BaseModel):
    data: list[TargetOut]
    next_cursor: str | None


def target_out(target: common_pb2.WebhookTarget) -> TargetOut:
    return TargetOut(
        id=target.id,
        url=target.url,
        description=target.description,
        headers=dict(target.headers),
        rate_limit_per_min=target.rate_limit_per_min if target.HasField("rate_limit_per_min") else None,
        enabled=target.enabled,
        disabled_reason=target.disabled_reason or None,
        created_at=when(target.created_at, target.HasField("created_at")),
        updated_at=when(target.updated_at, target.HasField("updated_at")),
        failing_since=when(target.failing_since, target.HasField("failing_since")),
    )


class RecoverIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    since: datetime = Field(description="Replay the deliveries to this target that failed at or after this time.")


class RecoverOut(BaseModel):
    target_id: str
    recovered: int
    job_ids: list[str] = Field(description="The jobs run again (GET /v1/jobs/{id} follows each).")


class RetryScheduleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delays_s: list[float] | None = Field(
        default=None,
        max_length=20,
        description="Seconds before each retry (1 s to 24 h each, 3 days in all); null or []: the default.",
        examples=[[10, 60, 600, 3600]],
    )
    retry_statuses: list[int] = Field(
        default_factory=list, max_length=100, description="4xx codes (not 410) to retry like 5xx."
    )


class RetryScheduleOut(BaseModel):
    delays_s: list[float]
    retry_statuses: list[int]
    custom: bool = Field(description="False when the operator's default applies.")
    max_attempts: int


def retry_schedule_out(schedule: gateway_pb2.WebhookRetrySchedule) -> RetryScheduleOut:
    return RetryScheduleOut(
        delays_s=list(schedule.delays_s),
        retry_statuses=list(schedule.retry_statuses),
        custom=schedule.custom,
        max_attempts=schedule.max_attempts,
    )


class FilterIn(BaseModel):
    """Event types: exact (`orders.created.v1`), a prefix wildcard (`orders.*` matches any
    type with at least one more token after `orders.`), or `*` (every type)."""

    model_config = ConfigDict(extra="forbid")

    event_types: list[Text] = Field(min_length=1, max_length=100, examples=[["orders.created.v1", "payments.*"]])
    description: Text = Field(default="", max_length=1000)


class FilterPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event_types: list[Text] | None = Field(default=None, min_length=1, max_length=100)
    description: Text | None = Field(default=None, max_length=1000)


class FilterOut(BaseModel):
    id: str
    description: str
    event_types: list[str]
    created_at: datetime | None
    updated_at: datetime | None


class FilterList(BaseModel):
    data: list[FilterOut]
    next_cursor: str | None


def filter_out(event_filter: common_pb2.EventFilter) -> FilterOut:
    return FilterOut(
        id=event_filter.id,
        description=event_filter.description,
        event_types=list(event_filter.event_types),
        created_at=when(event_filter.created_at, event_filter.HasField("created_at")),
        updated_at=when(event_filter.updated_at, event_filter.HasField("updated_at")),
    )


class SubscriptionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_id: Text = Field(max_length=64)
    filter_id: Text = Field(max_length=64)
    active: bool = True


class SubscriptionPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_id: Text | None = Field(default=None, max_length=64)
    filter_id: Text | None = Field(default=None, max_length=64)
    active: bool | None = None


class SubscriptionOut(BaseModel):
    id: str
    target_id: str
    filter_id: str
    active: bool
    created_at: datetime | None
    updated_at: datetime | None


class SubscriptionList(BaseModel):
    data: list[SubscriptionOut]
    next_cursor: str | None


def subscription_out(subscription: common_pb2.Subscription) -> SubscriptionOut:
    return SubscriptionOut(
        id=subscription.id,
        target_id=subscription.target_id,
        filter_id=subscription.filter_id,
        active=subscription.active,
        created_at=when(subscription.created_at, subscription.HasField("created_at")),
        updated_at=when(subscription.updated_at, subscription.HasField("updated_at")),
    )


class EventIn(BaseModel):
    """Exactly one of `payload` (any JSON value, delivered as compact JSON) and
    `payload_base64` (opaque bytes, delivered exactly, with `content_type`) is required."""

    model_config = ConfigDict(extra="forbid")

    event_type: Text = Field(max_length=255, examples=["orders.created.v1"])
    payload: JsonValue = Field(default=None, examples=[{"order_id": 42}])
    payload_base64: Text | None = None
    content_type: Text | None = Field(default=None, max_length=255)
    event_id: Text | None = Field(
        default=None,
        max_length=255,
        description="De-duplicates for 24 h: a repeat answers the first result and creates nothing. "
        "Generated when absent.",
    )


class EventDeliveryOut(BaseModel):
    job_id: str
    target_id: str


class EventAccepted(BaseModel):
    event_id: str
    replayed: bool = Field(description="True when this event id was accepted before (the first result).")
    deliveries: list[EventDeliveryOut]
