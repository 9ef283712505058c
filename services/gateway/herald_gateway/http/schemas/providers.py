"""A tenant's email providers, sending domains and webhook signing secret."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from herald.names import (
    PROVIDER_NAMES,
    PROVIDER_VALUES,
    TLS_NAMES,
    TLS_VALUES,
)
from herald.v1 import common_pb2
from herald_gateway.http.schemas.common import HeaderSafe, Text, time_of

ProviderName = Literal["sendgrid", "resend", "postmark", "smtp"]


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
        created_at=time_of(provider, "created_at"),
        updated_at=time_of(provider, "updated_at"),
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
        created_at=time_of(status, "created_at"),
        rotated_at=time_of(status, "rotated_at"),
        previous_expires_at=time_of(status, "previous_expires_at"),
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
        created_at=time_of(domain, "created_at"),
        updated_at=time_of(domain, "updated_at"),
        verified_at=time_of(domain, "verified_at"),
    )
