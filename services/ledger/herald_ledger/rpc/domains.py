"""Sending domains: what the providers answered, kept for the tenant and for admission."""

from __future__ import annotations

from herald.grpcio.errors import abort_already_exists, abort_invalid, abort_not_found
from herald.ids import new_id
from herald.v1 import ledger_providers_pb2
from herald_ledger.convert import domain_to_proto, records_to_row
from herald_ledger.rpc.common import Context, Rpcs, require_id, row_rpc, tenant_list_rpc
from herald_ledger.store import domains as domain_store
from herald_ledger.store import providers as provider_store
from herald_ledger.store.codes import PROVIDER_FROM_PROTO


class DomainRpcs(Rpcs):
    GetDomain = row_rpc(
        "domain", "read", domain_store.get_domain, ledger_providers_pb2.GetDomainResponse, "domain", domain_to_proto
    )
    DeleteDomain = row_rpc("domain", "write", domain_store.delete_domain, ledger_providers_pb2.DeleteDomainResponse)
    ListDomains = tenant_list_rpc(
        domain_store.list_domains, ledger_providers_pb2.ListDomainsResponse, "domains", domain_to_proto
    )

    async def CreateDomain(
        self, request: ledger_providers_pb2.CreateDomainRequest, context: Context
    ) -> ledger_providers_pb2.CreateDomainResponse:
        domain = request.domain
        tenant_id = await require_id(context, domain.tenant_id, "domain.tenant_id")
        provider_id = await require_id(context, domain.provider_id, "domain.provider_id")
        name = domain.name.strip().lower().rstrip(".")
        provider = PROVIDER_FROM_PROTO.get(domain.provider)
        if not name or "." not in name or len(name) > 253:
            await abort_invalid(context, [("domain.name", "must be a domain name")])
        if provider is None or not domain.provider_domain_id:
            await abort_invalid(context, [("domain.provider", "the provider and its domain id are required")])
        async with self.engine.begin() as conn:
            if await provider_store.get_provider(conn, tenant_id, provider_id) is None:
                await abort_not_found(context, "provider")
            row = await domain_store.create_domain(
                conn,
                {
                    "id": new_id(),
                    "tenant_id": tenant_id,
                    "name": name,
                    "provider_id": provider_id,
                    "provider": provider,
                    "provider_domain_id": domain.provider_domain_id,
                    "verified": domain.verified,
                    "records": records_to_row(domain.records),
                    "provider_status": domain.provider_status,
                },
            )
        if row is None:
            await abort_already_exists(context, "domain")
        return ledger_providers_pb2.CreateDomainResponse(domain=domain_to_proto(row))

    async def UpdateDomain(
        self, request: ledger_providers_pb2.UpdateDomainRequest, context: Context
    ) -> ledger_providers_pb2.UpdateDomainResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        records = records_to_row(request.records)
        row = await self.one(
            context,
            "domain",
            tenant_id,
            request.domain_id,
            "write",
            domain_store.update_domain,
            request.verified,
            records,
            request.provider_status,
        )
        return ledger_providers_pb2.UpdateDomainResponse(domain=domain_to_proto(row))
