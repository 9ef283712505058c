"""A tenant's email providers. Credentials are checked with the provider before they
are stored, stored encrypted, and only ever shown masked."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from herald.v1 import ledger_providers_pb2
from herald_gateway.errors import Invalid
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.providers import (
    ProviderIn,
    ProviderList,
    ProviderOut,
    ProviderPatch,
    credential_from,
    provider_out,
)

router = APIRouter(prefix="/v1/providers", tags=["providers"])


@router.post("", status_code=201, response_model=ProviderOut)
async def create_provider(body: ProviderIn, principal: Tenant, operations: OperationsDep) -> ProviderOut:
    if (body.provider == "smtp") != (body.smtp is not None) or (body.provider != "smtp") != bool(body.api_key):
        raise Invalid([("api_key/smtp", "give api_key for sendgrid, resend and postmark; smtp settings for smtp")])
    if body.account_token is not None and body.provider != "postmark":
        raise Invalid([("account_token", "only Postmark providers take an account token")])
    credential = credential_from(body.provider, body.api_key, body.smtp)
    if body.account_token:
        credential.account_token = body.account_token
    created = await operations.create_provider(
        principal.tenant_id, credential, body.priority, body.base_url, body.options
    )
    return provider_out(created)


@router.get("", response_model=ProviderList)
async def list_providers(principal: Tenant, operations: OperationsDep) -> ProviderList:
    """Highest priority first: the order a send walks them."""
    return ProviderList(data=[provider_out(p) for p in await operations.list_providers(principal.tenant_id)])


@router.patch("/{provider_id}", response_model=ProviderOut)
async def update_provider(
    provider_id: str, body: ProviderPatch, principal: Tenant, operations: OperationsDep
) -> ProviderOut:
    request = ledger_providers_pb2.UpdateProviderRequest()
    if body.priority is not None:
        request.priority = body.priority
    if body.base_url is not None:
        request.base_url = body.base_url
    if body.options is not None:
        request.replace_options = True
        request.options.update(body.options)
    if body.api_key is not None and body.smtp is not None:
        raise Invalid([("api_key/smtp", "give one of them")])
    if body.api_key is not None or body.smtp is not None:
        request.credential.CopyFrom(credential_from("smtp" if body.smtp else "sendgrid", body.api_key, body.smtp))
    if body.account_token is not None:
        request.account_token = body.account_token
    return provider_out(await operations.update_provider(principal.tenant_id, provider_id, request))


@router.delete("/{provider_id}", status_code=204)
async def delete_provider(provider_id: str, principal: Tenant, operations: OperationsDep) -> Response:
    await operations.delete_provider(principal.tenant_id, provider_id)
    return Response(status_code=204)
