"""Dependencies every route shares: who is calling, and the operations."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from herald_gateway.audit import Actor
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator, Principal
from herald_gateway.operations import Operations
from herald_gateway.scopes import require_route_scope


async def current_tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    """The calling key, which must have the scope the matched route needs (herald_gateway.scopes)."""
    authenticator: ApiKeyAuthenticator = request.app.state.tenants
    principal = await authenticator.authenticate(authorization)
    request.state.principal = principal
    require_route_scope(request.scope, principal.scopes)
    return principal


async def current_operator(request: Request, authorization: Annotated[str | None, Header()] = None) -> Actor:
    """The named operator calling (the audit log's `who`)."""
    authenticator: OperatorAuthenticator = request.app.state.operators
    operator = await authenticator.authenticate(authorization)
    request.state.operator = operator
    return operator


async def operations(request: Request) -> Operations:
    found: Operations = request.app.state.operations
    return found


Tenant = Annotated[Principal, Depends(current_tenant)]
OperationsDep = Annotated[Operations, Depends(operations)]
Operator = Depends(current_operator)
