"""Tenants (admin), their API keys, limits, usage and suppression lists."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from herald.names import (
    PLAN_NAMES,
)
from herald.plans import MAX_RETENTION_DAYS, MIN_RETENTION_DAYS, TENANT_OVERRIDES
from herald.v1 import common_pb2
from herald_gateway.http.schemas.common import INT32_MAX, Page, Text, time_of


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


class SuppressionList(Page[SuppressionOut]):
    pass


# A tenant limit: the ledger keeps it in an int32 (protobuf) and an integer column.
Limit = Annotated[int, Field(ge=0, le=INT32_MAX)]


RetentionDays = Annotated[int, Field(ge=MIN_RETENTION_DAYS, le=MAX_RETENTION_DAYS)]


class LimitsPatch(BaseModel):
    """Per limit: a number, "unlimited", or "plan" to go back to the plan's value."""

    model_config = ConfigDict(extra="forbid")

    rate_per_min: Limit | Literal["unlimited", "plan"] | None = None
    webhooks_per_month: Limit | Literal["unlimited", "plan"] | None = None
    emails_per_month: Limit | Literal["unlimited", "plan"] | None = None
    # Retention in days (herald_ledger.retention): payloads (bodies, event payloads, attempts'
    # excerpts) and rows (jobs, attempts, events); "plan" goes back to the plan's.
    payload_retention_days: RetentionDays | Literal["plan"] | None = None
    row_retention_days: RetentionDays | Literal["plan"] | None = None


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


class TenantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=200)
    plan: Literal["free", "indie", "startup"]
    contact_email: Text | None = Field(
        default=None, max_length=320, description="Where Herald's own mail (quota warnings, key-created notices) goes."
    )
    allow_duplicate_name: bool = Field(
        default=False, description="Create it even if another tenant has this name (otherwise 409, naming that tenant)."
    )


class TenantCreated(BaseModel):
    tenant_id: str
    name: str
    plan: str
    api_key: str = Field(description="Shown once. Only its SHA-256 is stored.")


class ApiKeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(default="default", min_length=1, max_length=100)
    scopes: list[Literal["send", "read", "manage", "keys", "console"]] | None = Field(
        default=None,
        max_length=5,
        description="What the key may do: send (submit), read (every GET), manage (configuration), keys "
        "(API keys), console (sign in). Absent or empty: every scope. A key grants only scopes it has itself.",
    )


class ApiKeyOut(BaseModel):
    id: str
    name: str
    public_id: str = Field(description="Part of the key (hk_live_<public_id>_...): names it without revealing it.")
    scopes: list[str] = Field(default_factory=list, description="What the key may do.")
    created_at: datetime | None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


class CurrentApiKey(BaseModel):
    id: str
    name: str
    scopes: list[str]


class ApiKeyCreated(ApiKeyOut):
    api_key: str = Field(description="Shown once. Only its SHA-256 is stored.")


class ApiKeyList(BaseModel):
    data: list[ApiKeyOut]


class TenantOut(BaseModel):
    id: str
    name: str
    plan: str
    disabled: bool
    created_at: datetime | None
    limits: dict[str, int | str] = Field(default_factory=dict, description="Operator overrides of the plan.")
    contact_email: str | None = None


class TenantList(Page[TenantOut]):
    pass


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
        scopes=list(key.scopes),
        created_at=time_of(key, "created_at"),
        revoked_at=time_of(key, "revoked_at"),
        last_used_at=time_of(key, "last_used_at"),
    )


def tenant_out(tenant: common_pb2.Tenant) -> TenantOut:
    limits: dict[str, int | str] = {}
    for field in TENANT_OVERRIDES:
        if tenant.HasField(field):
            value = getattr(tenant, field)
            limits[field] = "unlimited" if value < 0 else value
    return TenantOut(
        id=tenant.id,
        name=tenant.name,
        plan=PLAN_NAMES.get(tenant.plan, "free"),
        disabled=tenant.disabled,
        created_at=time_of(tenant, "created_at"),
        limits=limits,
        contact_email=tenant.contact_email or None,
    )


class ErasureReceipt(BaseModel):
    """What a tenant's erasure removed (DELETE /admin/v1/tenants/{tenant_id})."""

    tenant_id: str
    tenant_hash: str = Field(description='"sha256:<hex>" of the tenant id: how the audit log names the erasure.')
    erased_at: datetime | None
    rows: dict[str, int] = Field(description="Rows removed, per table.")
    bus: dict[str, int] = Field(description="Bus messages and entries removed, per kind.")
    deliveries_awaited: int = Field(description="Deliveries under way at the erasure that ended before this answer.")
    deliveries_unfinished: int = Field(
        description="Started deliveries whose end was not heard before the wait gave up (see the runbook)."
    )
    bus_not_removed: list[str] = Field(description="Kinds of bus state that could not be removed (see the runbook).")


def erasure_receipt_out(receipt: common_pb2.ErasureReceipt) -> ErasureReceipt:
    return ErasureReceipt(
        tenant_id=receipt.tenant_id,
        tenant_hash=receipt.tenant_hash,
        erased_at=time_of(receipt, "erased_at"),
        rows=dict(receipt.rows),
        bus=dict(receipt.bus),
        deliveries_awaited=receipt.deliveries_awaited,
        deliveries_unfinished=receipt.deliveries_unfinished,
        bus_not_removed=list(receipt.bus_not_removed),
    )
