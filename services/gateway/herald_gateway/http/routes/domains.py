"""Sending domains: registered with one of the tenant's providers through its domain API,
which answers the DNS records to publish; verified on request. While a registered domain
is not verified, emails from it are refused (422) before any provider is called."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from herald_gateway.access import Counted
from herald_gateway.errors import Invalid
from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.providers import DomainIn, DomainList, DomainOut, DomainVerifyIn, domain_out

router = APIRouter(prefix="/v1/domains", tags=["domains"])
MOVED_TO_PROVIDER = (
    "is no longer taken here: store Postmark's account token with the provider "
    '(PATCH /v1/providers/{id} {"account_token": ...}); domain calls use the stored one'
)


@router.post("", status_code=201, response_model=DomainOut)
async def register_domain(body: DomainIn, principal: Counted, operations: OperationsDep) -> DomainOut:
    """Registers the domain with the provider and answers the DNS records it asks for.
    Postmark's domain API needs the account token: store it with the provider
    (`account_token` on `POST`/`PATCH /v1/providers`), sealed like the server token."""
    if body.account_token is not None:
        raise Invalid([("account_token", MOVED_TO_PROVIDER)])
    return domain_out(await operations.register_domain(principal.tenant_id, body.domain, body.provider_id))


@router.post("/{domain_id}/verify", response_model=DomainOut)
async def verify_domain(
    domain_id: str, principal: Counted, operations: OperationsDep, body: DomainVerifyIn | None = None
) -> DomainOut:
    """Asks the provider to check the DNS records now. Some providers check
    asynchronously: a domain may read pending here and verified on a later call."""
    if body is not None and body.account_token is not None:
        raise Invalid([("account_token", MOVED_TO_PROVIDER)])
    return domain_out(await operations.verify_domain(principal.tenant_id, domain_id))


@router.get("", response_model=DomainList)
async def list_domains(principal: Tenant, operations: OperationsDep) -> DomainList:
    return DomainList(data=[domain_out(d) for d in await operations.list_domains(principal.tenant_id)])


@router.get("/{domain_id}", response_model=DomainOut)
async def get_domain(domain_id: str, principal: Tenant, operations: OperationsDep) -> DomainOut:
    return domain_out(await operations.get_domain(principal.tenant_id, domain_id))


@router.delete("/{domain_id}", status_code=204)
async def delete_domain(domain_id: str, principal: Tenant, operations: OperationsDep) -> Response:
    """Herald forgets the domain (sends from it are no longer checked); the provider keeps
    its own registration."""
    await operations.delete_domain(principal.tenant_id, domain_id)
    return Response(status_code=204)
