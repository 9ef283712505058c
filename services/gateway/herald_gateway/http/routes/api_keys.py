"""A tenant's own API keys: create (shown once), list, revoke."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.tenants import ApiKeyCreated, ApiKeyIn, ApiKeyList, CurrentApiKey, api_key_out

router = APIRouter(prefix="/v1/api-keys", tags=["api keys"])


@router.post("", status_code=201, response_model=ApiKeyCreated)
async def create_api_key(body: ApiKeyIn, principal: Tenant, operations: OperationsDep) -> ApiKeyCreated:
    """`scopes` limits what the new key may do (none: every scope); a key may grant only the
    scopes it has itself (403 naming the first one it lacks)."""
    key, plaintext = await operations.create_api_key(
        principal.tenant_id, body.name, body.scopes or (), granted_by=principal.scopes
    )
    return ApiKeyCreated(**api_key_out(key).model_dump(), api_key=plaintext)


@router.get("/current", response_model=CurrentApiKey)
async def current_api_key(principal: Tenant) -> CurrentApiKey:
    """The key making the call and what it may do: the console's sign-in check (scope `console`)."""
    return CurrentApiKey(id=principal.key_id, name=principal.key_name, scopes=sorted(principal.scopes))


@router.get("", response_model=ApiKeyList)
async def list_api_keys(principal: Tenant, operations: OperationsDep) -> ApiKeyList:
    return ApiKeyList(data=[api_key_out(k) for k in await operations.list_api_keys(principal.tenant_id)])


@router.delete("/{key_id}", status_code=204)
async def revoke_api_key(key_id: str, principal: Tenant, operations: OperationsDep) -> Response:
    """Revoked keys stop working on every gateway within seconds."""
    await operations.revoke_api_key(principal.tenant_id, key_id)
    return Response(status_code=204)
