"""GET /v1/usage: this month's counts against the tenant's quotas."""

from __future__ import annotations

from fastapi import APIRouter

from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.tenants import UsageOut, usage_out

router = APIRouter(tags=["usage"])


@router.get("/v1/usage", response_model=UsageOut)
async def get_usage(principal: Tenant, operations: OperationsDep) -> UsageOut:
    return usage_out(await operations.usage(principal.tenant_id))
