"""The operators' surface: authenticated by the operator token, never a tenant key."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from email_validator import EmailNotValidError, validate_email
from fastapi import APIRouter, Query, Request
from google.protobuf import json_format
from starlette.responses import Response

from herald.ids import TenantId
from herald.names import PLAN_NAMES, PLAN_VALUES, STATUS_NAMES
from herald.plans import TENANT_OVERRIDES
from herald.v1 import common_pb2, email_sender_pb2, ledger_tenants_pb2, webhook_sender_pb2
from herald_gateway.audit import Actor, entry_by
from herald_gateway.errors import Invalid, Unavailable
from herald_gateway.http.crud import Limit
from herald_gateway.http.deps import OperationsDep, Operator
from herald_gateway.http.schemas.jobs import job_out
from herald_gateway.http.schemas.operator import (
    CircuitList,
    CircuitOut,
    DeadLetterDetail,
    DeadLetterList,
    PlatformEmailKind,
    PlatformEmailList,
    RetryIn,
    RetryOutcomeList,
    RetryOutcomeOut,
    StreamList,
    StreamOut,
    dead_letter_out,
    platform_email_out,
)
from herald_gateway.http.schemas.tenants import (
    ApiKeyCreated,
    ApiKeyIn,
    ApiKeyList,
    ErasureReceipt,
    LimitsPatch,
    MasterKeyRotation,
    TenantCreated,
    TenantIn,
    TenantList,
    TenantOut,
    TenantPatch,
    UsageOut,
    api_key_out,
    erasure_receipt_out,
    tenant_out,
    usage_out,
)
from herald_gateway.invalidation import Bus

router = APIRouter(prefix="/admin/v1", tags=["admin"], dependencies=[Operator])


def contact(value: str | None) -> str | None:
    """A validated contact address; "" (clear) and None (leave) pass through."""
    if not value:
        return value
    try:
        return str(validate_email(value, check_deliverability=False).normalized)
    except EmailNotValidError as error:
        raise Invalid([("contact_email", str(error))]) from error


@router.post("/tenants", status_code=201, response_model=TenantCreated)
async def create_tenant(body: TenantIn, operations: OperationsDep) -> TenantCreated:
    tenant, api_key = await operations.create_tenant(
        body.name, PLAN_VALUES[body.plan], contact(body.contact_email) or "", body.allow_duplicate_name
    )
    return TenantCreated(tenant_id=tenant.id, name=tenant.name, plan=PLAN_NAMES[tenant.plan], api_key=api_key)


@router.get("/tenants", response_model=TenantList)
async def list_tenants(
    operations: OperationsDep,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> TenantList:
    tenants, next_cursor = await operations.list_tenants(limit, cursor or "")
    return TenantList(data=[tenant_out(t) for t in tenants], next_cursor=next_cursor or None)


@router.get("/tenants/{tenant_id}", response_model=TenantOut)
async def get_tenant(tenant_id: str, operations: OperationsDep) -> TenantOut:
    return tenant_out(await operations.get_tenant(tenant_id))


@router.patch("/tenants/{tenant_id}", response_model=TenantOut)
async def update_tenant(tenant_id: str, body: TenantPatch, operations: OperationsDep) -> TenantOut:
    plan = PLAN_VALUES[body.plan] if body.plan else 0
    return tenant_out(await operations.update_tenant(tenant_id, plan, body.disabled, contact(body.contact_email)))


@router.delete("/tenants/{tenant_id}", response_model=ErasureReceipt)
async def erase_tenant(tenant_id: str, request: Request, operations: OperationsDep) -> ErasureReceipt:
    """Removes the tenant and everything of it: every row (jobs, attempts, events, configuration,
    keys, usage, audit entries), its work waiting on the bus, its rate-limit and pacing state.
    Answers with what went; its keys are refused and its id is 404 from then on."""
    operator: Actor = request.state.operator
    address = request.client.host if request.client else ""
    erased_by = entry_by(operator, "DELETE /admin/v1/tenants/{tenant_id}", address)
    return erasure_receipt_out(await operations.erase_tenant(tenant_id, erased_by))


@router.post("/tenants/{tenant_id}/api-keys", status_code=201, response_model=ApiKeyCreated)
async def create_api_key(tenant_id: str, body: ApiKeyIn, operations: OperationsDep) -> ApiKeyCreated:
    await operations.get_tenant(tenant_id)
    key, plaintext = await operations.create_api_key(tenant_id, body.name, body.scopes or ())
    return ApiKeyCreated(**api_key_out(key).model_dump(), api_key=plaintext)


@router.get("/tenants/{tenant_id}/api-keys", response_model=ApiKeyList)
async def list_api_keys(tenant_id: str, operations: OperationsDep) -> ApiKeyList:
    await operations.get_tenant(tenant_id)
    return ApiKeyList(data=[api_key_out(k) for k in await operations.list_api_keys(TenantId(tenant_id))])


@router.delete("/tenants/{tenant_id}/api-keys/{key_id}", status_code=204)
async def revoke_api_key(tenant_id: str, key_id: str, operations: OperationsDep) -> Response:
    await operations.get_tenant(tenant_id)
    await operations.revoke_api_key(TenantId(tenant_id), key_id)
    return Response(status_code=204)


@router.patch("/tenants/{tenant_id}/limits", response_model=TenantOut)
async def set_limits(tenant_id: str, body: LimitsPatch, operations: OperationsDep) -> TenantOut:
    """Overrides the plan's limits for one tenant (a number, "unlimited", or "plan")."""
    request = ledger_tenants_pb2.SetTenantLimitsRequest()
    for field in TENANT_OVERRIDES:
        value = getattr(body, field)
        if value is None:
            continue
        if isinstance(value, int) and value < 0:
            raise Invalid([(field, 'must be >= 0, "unlimited" or "plan"')])
        setattr(
            request, field, {"unlimited": -1, "plan": -2}.get(str(value), value) if isinstance(value, str) else value
        )
    return tenant_out(await operations.set_limits(tenant_id, request))


@router.get("/tenants/{tenant_id}/usage", response_model=UsageOut)
async def get_usage(tenant_id: str, operations: OperationsDep) -> UsageOut:
    await operations.get_tenant(tenant_id)
    return usage_out(await operations.usage(tenant_id))


@router.post("/master-key/rotate", response_model=MasterKeyRotation)
async def rotate_master_key(operations: OperationsDep) -> MasterKeyRotation:
    """Re-encrypts every stored secret under the active master key, while serving."""
    result = await operations.rotate_master_key()
    return MasterKeyRotation(
        reencrypted=result.reencrypted,
        already_current=result.already_current,
        active_key_id=result.active_key_id,
        unreadable_ids=list(result.unreadable_ids),
    )


@router.get("/dead-letters", response_model=DeadLetterList)
async def list_dead_letters(
    operations: OperationsDep,
    since: datetime | None = None,
    tenant_id: Annotated[str | None, Query(max_length=64)] = None,
    include_retried: bool = False,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
) -> DeadLetterList:
    """Jobs that exhausted their attempts, newest first; by default only those still
    waiting (not retried). The ledger is the source of truth for this list."""
    entries, next_cursor = await operations.list_dead_letters(
        tenant_id or "", since, include_retried, limit, cursor or ""
    )
    return DeadLetterList(data=[dead_letter_out(e) for e in entries], next_cursor=next_cursor or None)


@router.get("/dead-letters/{job_id}", response_model=DeadLetterDetail)
async def get_dead_letter(job_id: str, operations: OperationsDep) -> DeadLetterDetail:
    """One entry with the job and the work message as it was queued (from the stream)."""
    entry, job = await operations.get_dead_letter(job_id)
    return DeadLetterDetail(
        **dead_letter_out(entry).model_dump(),
        job=job_out(job),
        work_subject=entry.work_subject or None,
        payload=work_payload(entry),
    )


@router.post("/dead-letters/retry", response_model=RetryOutcomeList)
async def retry_dead_letters(body: RetryIn, operations: OperationsDep) -> RetryOutcomeList:
    """Runs dead-lettered jobs again from PENDING: the ones named, or all that wait
    (dead-lettered since `since`, when given). Nothing leaves the queue by itself."""
    outcomes = await operations.retry_dead_letters(body.job_ids, body.all, body.since)
    return RetryOutcomeList(
        data=[
            RetryOutcomeOut(
                job_id=o.job_id,
                retried=o.retried,
                status=STATUS_NAMES.get(o.status),
                detail=o.detail or None,
            )
            for o in outcomes
        ]
    )


@router.get("/platform-emails", response_model=PlatformEmailList)
async def list_platform_emails(
    operations: OperationsDep,
    kind: PlatformEmailKind | None = None,
    tenant_id: Annotated[str | None, Query(max_length=64)] = None,
    limit: Limit = 50,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
) -> PlatformEmailList:
    """The platform email log (quota warnings, dead-letter alerts, key-created notices),
    newest first, with each message's status and the attempts its job spent."""
    entries, next_cursor = await operations.list_platform_emails(tenant_id or "", kind or "", limit, cursor or "")
    return PlatformEmailList(data=[platform_email_out(e) for e in entries], next_cursor=next_cursor or None)


@router.get("/circuits", response_model=CircuitList)
async def list_circuits(operations: OperationsDep) -> CircuitList:
    """Providers' circuit breakers that are open or half-open (per tenant and provider). Breakers
    live in each email-sender process: this is the view of the replica that answered."""
    return CircuitList(
        data=[
            CircuitOut(tenant_id=c.tenant_id, provider_id=c.provider_id, provider=c.provider, state=c.state)
            for c in await operations.provider_circuits()
        ]
    )


@router.get("/streams", response_model=StreamList)
async def list_streams(request: Request) -> StreamList:
    """Depth and lag of the JetStream streams (intake, work, dead letters, inbound events)."""
    bus: Bus | None = getattr(request.app.state, "bus", None)
    reports = await bus.stream_reports() if bus is not None else None
    if reports is None:
        raise Unavailable("the gateway is not connected to NATS yet")
    return StreamList(data=[StreamOut(**vars(r)) for r in reports])


def work_payload(entry: common_pb2.DeadLetter) -> dict[str, object] | None:
    if not entry.work_message:
        return None
    message: email_sender_pb2.EmailDelivery | webhook_sender_pb2.WebhookDelivery
    if entry.channel == common_pb2.CHANNEL_WEBHOOK:
        message = webhook_sender_pb2.WebhookDelivery()
    else:
        message = email_sender_pb2.EmailDelivery()
    try:
        message.ParseFromString(entry.work_message)
    except Exception:
        return None
    if isinstance(message, webhook_sender_pb2.WebhookDelivery):
        # The headers show masked; their envelope means nothing to a reader.
        message.request.ClearField("sealed_headers")
    payload: dict[str, object] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return payload
