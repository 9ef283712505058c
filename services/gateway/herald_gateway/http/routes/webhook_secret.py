"""A tenant's webhook signing secret: generate (shown once), status, rotate, delete."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.providers import WebhookSecretCreated, WebhookSecretStatusOut, secret_status_out

router = APIRouter(prefix="/v1/webhook-secret", tags=["webhook secret"])


@router.post("", status_code=201, response_model=WebhookSecretCreated)
async def generate(principal: Tenant, operations: OperationsDep) -> WebhookSecretCreated:
    """From now on every delivery is signed. 409 when a secret exists: rotate it instead."""
    secret, status = await operations.generate_webhook_secret(principal.tenant_id)
    return WebhookSecretCreated(**secret_status_out(status).model_dump(), secret=secret)


@router.get("", response_model=WebhookSecretStatusOut)
async def status(principal: Tenant, operations: OperationsDep) -> WebhookSecretStatusOut:
    """Whether a secret exists and when it was made or rotated; never the value."""
    return secret_status_out(await operations.webhook_secret_status(principal.tenant_id))


@router.post("/rotate", response_model=WebhookSecretCreated)
async def rotate(principal: Tenant, operations: OperationsDep) -> WebhookSecretCreated:
    """A new secret; the previous one keeps signing beside it for 24 hours."""
    secret, status = await operations.rotate_webhook_secret(principal.tenant_id)
    return WebhookSecretCreated(**secret_status_out(status).model_dump(), secret=secret)


@router.delete("", status_code=204)
async def delete(principal: Tenant, operations: OperationsDep) -> Response:
    """Webhooks then go out unsigned."""
    await operations.delete_webhook_secret(principal.tenant_id)
    return Response(status_code=204)
