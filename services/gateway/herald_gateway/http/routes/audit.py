"""The audit log: a tenant reads its own (GET /v1/audit-log), an operator every tenant's and
the operators' own (GET /admin/v1/audit-log), newest first in cursor pages; and the named
operators whose changes it records (/admin/v1/operators)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from herald_gateway.http.crud import Cursor, Limit
from herald_gateway.http.deps import OperationsDep, Operator, Tenant
from herald_gateway.http.schemas.access import (
    AuditLog,
    OperatorCreated,
    OperatorIn,
    OperatorList,
    OperatorOut,
    audit_entry_out,
    operator_out,
)

router = APIRouter(tags=["audit log"])
admin_router = APIRouter(prefix="/admin/v1", tags=["admin"], dependencies=[Operator])


@router.get("/v1/audit-log", response_model=AuditLog)
async def tenant_audit_log(
    principal: Tenant, operations: OperationsDep, limit: Limit = 50, cursor: Cursor = None
) -> AuditLog:
    """Who changed the tenant's configuration (targets, keys, providers ...), and when."""
    entries, next_cursor = await operations.auditor.page(principal.tenant_id, limit, cursor or "")
    return AuditLog(data=[audit_entry_out(e) for e in entries], next_cursor=next_cursor or None)


@admin_router.get("/audit-log", response_model=AuditLog)
async def operator_audit_log(
    operations: OperationsDep,
    limit: Limit = 50,
    cursor: Cursor = None,
    tenant_id: Annotated[str | None, Query(max_length=64, description="One tenant's entries only.")] = None,
) -> AuditLog:
    """Every change, by tenants' keys and by operators (or one tenant's)."""
    entries, next_cursor = await operations.auditor.page(tenant_id or "", limit, cursor or "")
    return AuditLog(data=[audit_entry_out(e) for e in entries], next_cursor=next_cursor or None)


@router.post(
    "/admin/v1/operators", status_code=201, response_model=OperatorCreated, dependencies=[Operator], tags=["admin"]
)
async def create_operator(body: OperatorIn, operations: OperationsDep) -> OperatorCreated:
    """A named operator with a token of its own, shown once (only its SHA-256 is stored)."""
    operator, token = await operations.create_operator(body.name)
    return OperatorCreated(**operator_out(operator).model_dump(), token=token)


@admin_router.get("/operators", response_model=OperatorList)
async def list_operators(operations: OperationsDep) -> OperatorList:
    return OperatorList(data=[operator_out(o) for o in await operations.list_operators()])


@admin_router.delete("/operators/{name}", response_model=OperatorOut)
async def revoke_operator(name: str, operations: OperationsDep) -> OperatorOut:
    """The operator's token stops working at once (operators are not cached)."""
    return operator_out(await operations.revoke_operator(name))
