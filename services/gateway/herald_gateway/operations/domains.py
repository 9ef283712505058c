"""Sending domains: registered with a provider through the email-sender, verified there, kept
in the ledger; sends from a domain are refused until it is verified."""

from __future__ import annotations

from herald.ids import TenantId, parse_id
from herald.v1 import common_pb2, email_sender_pb2, ledger_providers_pb2
from herald_gateway.errors import PROVIDER_OVERRIDES, Conflict, Invalid, ask
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.crud import Resource
from herald_gateway.operations.validation import domain_name

DOMAINS: Resource[common_pb2.SendingDomain] = Resource(
    "domain", "providers", "Domain", "domain", "domains", "domain_id"
)


class DomainOperations(OperationsBase):
    async def register_domain(self, tenant_id: TenantId, name: str, provider_id: str) -> common_pb2.SendingDomain:
        """Registers the domain with the chosen provider (through the email-sender) and keeps
        the DNS records it answered. Sends from it are refused until it is verified. Postmark's
        domains API uses the account token stored (sealed) with that provider's credential."""
        domain = domain_name(name)
        problems = [] if domain else [("domain", "must be a domain name such as mail.example.com")]
        if parse_id(provider_id) is None:
            problems.append(("provider_id", "must be one of your provider ids"))
        if problems or domain is None:
            raise Invalid(problems)
        if any(d.name == domain for d in await self.list_domains(tenant_id)):
            raise Conflict(f"domain {domain} is registered already; verify it or delete it first")
        registered = await ask(
            self.email_sender.RegisterDomain(
                email_sender_pb2.RegisterDomainRequest(tenant_id=tenant_id, provider_id=provider_id, domain=domain),
                timeout=60,
            ),
            "provider",
            PROVIDER_OVERRIDES,
        )
        record = registered.domain
        record.tenant_id = tenant_id
        record.name = domain
        return await self.crud(DOMAINS).create(tenant_id, record)

    async def verify_domain(self, tenant_id: TenantId, domain_id: str) -> common_pb2.SendingDomain:
        current = await self.get_domain(tenant_id, domain_id)
        if not current.provider_id:
            raise Conflict(
                "the provider this domain was registered with was deleted; delete the domain and register it again"
            )
        checked = await ask(
            self.email_sender.VerifyDomain(
                email_sender_pb2.VerifyDomainRequest(
                    tenant_id=tenant_id,
                    provider_id=current.provider_id,
                    provider_domain_id=current.provider_domain_id,
                ),
                timeout=60,
            ),
            "provider",
            PROVIDER_OVERRIDES,
        )
        state = checked.domain
        updated: common_pb2.SendingDomain = (
            await ask(
                self.ledger.providers.UpdateDomain(
                    ledger_providers_pb2.UpdateDomainRequest(
                        tenant_id=tenant_id,
                        domain_id=domain_id,
                        verified=state.verified,
                        records=state.records,
                        provider_status=state.provider_status,
                    )
                ),
                "domain",
            )
        ).domain
        return updated

    async def get_domain(self, tenant_id: TenantId, domain_id: str) -> common_pb2.SendingDomain:
        return await self.crud(DOMAINS).get(tenant_id, domain_id)

    async def list_domains(self, tenant_id: TenantId) -> list[common_pb2.SendingDomain]:
        return await self.crud(DOMAINS).all(tenant_id)

    async def delete_domain(self, tenant_id: TenantId, domain_id: str) -> None:
        await self.crud(DOMAINS).delete(tenant_id, domain_id)
