"""A tenant's inbound provider webhooks: the verification material per provider (SendGrid's public key,
Resend's signing secret, Postmark Basic credentials Herald issues), the provider events of a job, and the
billing history (payment events from Paystack and Polar)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from herald.ids import parse_id
from herald.inbound_keys import (
    issue_postmark_credentials,
    load_sendgrid_public_key,
    load_svix_secret,
    postmark_material,
    resend_material,
    sendgrid_material,
)
from herald.v1 import ledger_inbound_pb2
from herald_gateway.errors import Invalid, NotFound
from herald_gateway.http.deps import OperationsDep, Operator, Tenant
from herald_gateway.http.schemas.common import Text
from herald_gateway.operations import Operations

router = APIRouter(tags=["inbound webhooks"])
# Operators read any tenant's billing history.
admin_router = APIRouter(prefix="/admin/v1", tags=["admin"], dependencies=[Operator])

Provider = Literal["sendgrid", "resend", "postmark"]


class InboundConfigIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # SendGrid: the Event Webhook verification key (base64 DER, or PEM).
    public_key: Text | None = Field(default=None, max_length=4096)
    # Resend: the webhook signing secret (`whsec_...`).
    secret: Text | None = Field(default=None, max_length=1024)


class InboundConfigOut(BaseModel):
    provider: str
    # The path Herald receives this provider's webhooks on (behind the public ingress).
    webhook_path: str
    public_key: str | None = None
    username: str | None = None
    updated_at: datetime


class InboundConfigCreated(InboundConfigOut):
    # Postmark only, shown once: put `https://<username>:<password>@<host><webhook_path>` in Postmark.
    password: str | None = None


class InboundConfigList(BaseModel):
    data: list[InboundConfigOut]


class ProviderEventOut(BaseModel):
    event_id: str
    provider: str
    type: str
    recipient: str | None
    job_id: str | None
    occurred_at: datetime
    received_at: datetime


class ProviderEventList(BaseModel):
    data: list[ProviderEventOut]


class BillingEventOut(BaseModel):
    event_id: str
    provider: str
    type: str
    plan: str | None
    # Whether this event set the plan (false: it named none, or a newer event had already set it).
    applied: bool
    occurred_at: datetime
    received_at: datetime


class BillingEventList(BaseModel):
    data: list[BillingEventOut]


def _event_fields(event: ledger_inbound_pb2.ProviderEvent) -> dict[str, Any]:
    """The fields a provider event and a billing event answer alike."""
    return {
        "event_id": event.event_id,
        "provider": event.provider,
        "type": event.type,
        "occurred_at": event.occurred_at.ToDatetime(tzinfo=UTC),
        "received_at": event.received_at.ToDatetime(tzinfo=UTC),
    }


def _config_out(tenant_id: str, config: ledger_inbound_pb2.InboundConfig) -> InboundConfigOut:
    return InboundConfigOut(
        provider=config.provider,
        webhook_path=f"/inbound/{config.provider}/{tenant_id}",
        public_key=config.public_info if config.provider == "sendgrid" else None,
        username=config.public_info if config.provider == "postmark" else None,
        updated_at=config.updated_at.ToDatetime(tzinfo=UTC),
    )


def _loadable(field: str, given: str | None, other: str | None, needs: str, load: Callable[[str], object]) -> str:
    """The one field this provider takes, refused (422) unless it loads as the verifier will load it."""
    if not given or other is not None:
        raise Invalid([(field, needs)])
    try:
        load(given)
    except ValueError as error:
        raise Invalid([(field, str(error))]) from None
    return given


@router.put("/v1/inbound/{provider}", response_model=InboundConfigCreated, response_model_exclude_none=True)
async def put_config(
    provider: Provider, body: InboundConfigIn, principal: Tenant, operations: OperationsDep
) -> InboundConfigCreated:
    """Sets (or replaces) what Herald checks this provider's webhooks with. Postmark: new credentials each
    time, the password shown only in this answer."""
    password = None
    if provider == "sendgrid":
        needs = "SendGrid needs its verification public key (and nothing else)"
        public_key = _loadable("public_key", body.public_key, body.secret, needs, load_sendgrid_public_key)
        material, public_info = sendgrid_material(public_key), public_key.strip()
    elif provider == "resend":
        needs = "Resend needs its webhook signing secret (and nothing else)"
        secret = _loadable("secret", body.secret, body.public_key, needs, load_svix_secret)
        material, public_info = resend_material(secret), ""
    else:
        if body.secret is not None or body.public_key is not None:
            raise Invalid([("body", "Postmark credentials are issued by Herald; send an empty object")])
        issued = issue_postmark_credentials()
        material = postmark_material(issued.stored)
        public_info = issued.username
        password = issued.password
    saved = await operations.put_inbound_config(principal.tenant_id, provider, material, public_info)
    out = _config_out(principal.tenant_id, saved)
    return InboundConfigCreated(**out.model_dump(), password=password)


@router.get("/v1/inbound", response_model=InboundConfigList, response_model_exclude_none=True)
async def list_configs(principal: Tenant, operations: OperationsDep) -> InboundConfigList:
    """Which providers are configured; never a secret."""
    found = await operations.list_inbound_configs(principal.tenant_id)
    return InboundConfigList(data=[_config_out(principal.tenant_id, c) for c in found])


@router.get("/v1/inbound/{provider}", response_model=InboundConfigOut, response_model_exclude_none=True)
async def get_config(provider: Provider, principal: Tenant, operations: OperationsDep) -> InboundConfigOut:
    listed = await list_configs(principal, operations)
    for config in listed.data:
        if config.provider == provider:
            return config
    raise NotFound("inbound configuration not found")


@router.delete("/v1/inbound/{provider}", status_code=204)
async def delete_config(provider: Provider, principal: Tenant, operations: OperationsDep) -> Response:
    """This provider's webhooks are refused (401 unknown_tenant) from then on (within the verifier's cache TTL)."""
    await operations.delete_inbound_config(principal.tenant_id, provider)
    return Response(status_code=204)


@router.get("/v1/jobs/{job_id}/events", response_model=ProviderEventList)
async def job_events(job_id: str, principal: Tenant, operations: OperationsDep) -> ProviderEventList:
    """The provider events (delivered, bounced, opened, ...) recorded against this job, oldest first."""
    found = await operations.job_events(principal.tenant_id, job_id)
    return ProviderEventList(
        data=[
            ProviderEventOut(**_event_fields(e), recipient=e.recipient or None, job_id=e.job_id or None) for e in found
        ]
    )


@router.get("/v1/billing", response_model=BillingEventList)
async def billing(principal: Tenant, operations: OperationsDep) -> BillingEventList:
    """Payment events naming this tenant, newest first."""
    return await _billing(operations, principal.tenant_id)


@admin_router.get("/tenants/{tenant_id}/billing", response_model=BillingEventList)
async def tenant_billing(tenant_id: str, operations: OperationsDep) -> BillingEventList:
    """A tenant's payment events, newest first (empty for an unknown tenant)."""
    if parse_id(tenant_id) is None:
        raise NotFound("tenant not found")
    return await _billing(operations, tenant_id)


async def _billing(operations: Operations, tenant_id: str) -> BillingEventList:
    found = await operations.billing_events(tenant_id)
    return BillingEventList(
        data=[BillingEventOut(**_event_fields(e), plan=e.plan or None, applied=e.applied) for e in found]
    )
