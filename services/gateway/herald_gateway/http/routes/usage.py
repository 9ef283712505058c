"""GET /v1/usage: this month's counts against the tenant's quotas."""

from __future__ import annotations

from fastapi import APIRouter

from herald_gateway.http.deps import HandlersDep, Tenant
from herald_gateway.http.schemas import UsageOut, usage_out

router = APIRouter(tags=["usage"])


@router.get("/v1/usage", response_model=UsageOut)
async def get_usage(principal: Tenant, handlers: HandlersDep) -> UsageOut:
    return usage_out(await handlers.usage(principal.tenant_id))
