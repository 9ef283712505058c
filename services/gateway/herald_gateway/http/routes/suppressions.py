"""A tenant's suppression list: recipients Herald refuses to send to."""

from __future__ import annotations

from typing import Annotated

from email_validator import EmailNotValidError, validate_email
from fastapi import APIRouter, Query
from starlette.responses import Response

from herald_gateway.errors import Invalid
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.common import time_of
from herald_gateway.http.schemas.tenants import SuppressionIn, SuppressionList, SuppressionOut

router = APIRouter(prefix="/v1/suppressions", tags=["suppressions"])


@router.get("", response_model=SuppressionList)
async def list_suppressions(
    principal: Tenant,
    operations: OperationsDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Annotated[str | None, Query(max_length=320)] = None,
) -> SuppressionList:
    entries, next_cursor = await operations.list_suppressions(principal.tenant_id, limit, cursor or "")
    return SuppressionList(
        data=[
            SuppressionOut(
                address=e.address,
                reason=e.reason,
                source_event_id=e.source_event_id or None,
                created_at=time_of(e, "created_at"),
            )
            for e in entries
        ],
        next_cursor=next_cursor or None,
    )


@router.post("", status_code=201)
async def add_suppression(body: SuppressionIn, principal: Tenant, operations: OperationsDep) -> Response:
    """Suppresses an address by hand (reason `manual`)."""
    try:
        address = validate_email(body.address, check_deliverability=False).normalized
    except EmailNotValidError as error:
        raise Invalid([("address", str(error))]) from error
    added = await operations.add_suppression(principal.tenant_id, address)
    return Response(status_code=201 if added else 200)


@router.delete("/{address}", status_code=204)
async def remove_suppression(address: str, principal: Tenant, operations: OperationsDep) -> Response:
    await operations.remove_suppression(principal.tenant_id, address)
    return Response(status_code=204)
