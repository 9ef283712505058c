"""Tenants (operators), their API keys, limits, usage and suppression lists."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grpc

from herald.crypto import issue_api_key
from herald.ids import TenantId, parse_id
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_gateway.errors import Conflict, NotFound, OutOfScope, Overrides, ask, refuse_invalid
from herald_gateway.operations.base import OperationsBase
from herald_gateway.operations.crud import Resource
from herald_gateway.scopes import ALL_SCOPES

NAME_TAKEN: Overrides = {grpc.StatusCode.ALREADY_EXISTS: lambda e: Conflict(e.details() or "tenant already exists")}
API_KEYS: Resource[common_pb2.ApiKey] = Resource("api key", "tenants", "ApiKey", "key", "keys", "key_id")


class TenantOperations(OperationsBase):
    # What this gateway forgets of an erased tenant as soon as the ledger answers (its cached
    # keys, its rate-limit window; set by main); the other gateways hear the ledger's notice.
    on_erased: tuple[Callable[[str], None], ...] = ()

    async def create_tenant(
        self, name: str, plan: int, contact_email: str = "", allow_duplicate_name: bool = False
    ) -> tuple[common_pb2.Tenant, str]:
        """Creates the tenant and its first API key; the key is returned once, never stored. A name
        another tenant has is a Conflict naming that tenant, unless `allow_duplicate_name`."""
        request = ledger_tenants_pb2.CreateTenantRequest(
            name=name,
            plan=plan,  # type: ignore[arg-type]
            contact_email=contact_email,
            allow_duplicate_name=allow_duplicate_name,
        )
        created = await ask(self.ledger.tenants.CreateTenant(request), "tenant", NAME_TAKEN)
        tenant: common_pb2.Tenant = created.tenant
        _key, plaintext = await self.create_api_key(tenant.id, "initial")
        return tenant, plaintext

    async def list_tenants(self, page_size: int, cursor: str) -> tuple[list[common_pb2.Tenant], str]:
        page = await ask(
            self.ledger.tenants.ListTenants(ledger_tenants_pb2.ListTenantsRequest(page_size=page_size, cursor=cursor)),
            "tenants",
        )
        return list(page.tenants), page.next_cursor

    async def get_tenant(self, tenant_id: str) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        tenant: common_pb2.Tenant = (
            await ask(self.ledger.tenants.GetTenant(ledger_tenants_pb2.GetTenantRequest(tenant_id=tenant_id)), "tenant")
        ).tenant
        return tenant

    async def update_tenant(
        self, tenant_id: str, plan: int, disabled: bool | None, contact_email: str | None = None
    ) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        request = ledger_tenants_pb2.UpdateTenantRequest(tenant_id=tenant_id, plan=plan)  # type: ignore[arg-type]
        if disabled is not None:
            request.disabled = disabled
        if contact_email is not None:
            request.contact_email = contact_email
        tenant: common_pb2.Tenant = (await ask(self.ledger.tenants.UpdateTenant(request), "tenant")).tenant
        return tenant

    async def set_limits(self, tenant_id: str, request: ledger_tenants_pb2.SetTenantLimitsRequest) -> common_pb2.Tenant:
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        request.tenant_id = tenant_id
        tenant: common_pb2.Tenant = (await ask(self.ledger.tenants.SetTenantLimits(request), "tenant")).tenant
        return tenant

    async def usage(self, tenant_id: str) -> common_pb2.Usage:
        found = await ask(
            self.ledger.tenants.GetUsage(ledger_tenants_pb2.GetUsageRequest(tenant_id=tenant_id)), "tenant"
        )
        usage: common_pb2.Usage = found.usage
        return usage

    async def create_api_key(
        self, tenant_id: str, name: str, scopes: Iterable[str] = (), granted_by: frozenset[str] = ALL_SCOPES
    ) -> tuple[common_pb2.ApiKey, str]:
        """A new key for the tenant; its plaintext is returned once and never stored. `scopes`
        (empty: every scope) must be scopes `granted_by` (the creating key's) has: a key cannot
        make a key that may do more than itself."""
        wanted = frozenset(scopes) or ALL_SCOPES
        refuse_invalid([("scopes", f"unknown scope {s!r}") for s in sorted(wanted - ALL_SCOPES)])
        beyond = sorted(wanted - granted_by)
        if beyond:
            raise OutOfScope(beyond[0])
        key = issue_api_key()
        created = await ask(
            self.ledger.tenants.CreateApiKey(
                ledger_tenants_pb2.CreateApiKeyRequest(
                    tenant_id=tenant_id,
                    name=name,
                    key_hash=key.sha256,
                    public_id=key.public_id,
                    scopes=sorted(wanted) if wanted != ALL_SCOPES else [],
                )
            ),
            "tenant",
        )
        described = common_pb2.ApiKey(
            id=created.key_id, tenant_id=tenant_id, name=name, public_id=key.public_id, scopes=created.scopes
        )
        described.created_at.CopyFrom(created.created_at)
        return described, key.plaintext

    async def erase_tenant(self, tenant_id: str, erased_by: common_pb2.AuditEntry) -> common_pb2.ErasureReceipt:
        """Removes the tenant and everything of it (herald_ledger.rpc.erasure); `erased_by`: who,
        from where, by which route or RPC (the ledger records it with the erasure)."""
        if parse_id(tenant_id) is None:
            raise NotFound("tenant not found")
        erased = await ask(
            self.ledger.tenants.EraseTenant(
                ledger_tenants_pb2.EraseTenantRequest(tenant_id=tenant_id, erased_by=erased_by)
            ),
            "tenant",
        )
        for forget in self.on_erased:
            forget(tenant_id)
        receipt: common_pb2.ErasureReceipt = erased.receipt
        return receipt

    async def list_api_keys(self, tenant_id: TenantId) -> list[common_pb2.ApiKey]:
        return await self.crud(API_KEYS).all(tenant_id)

    async def revoke_api_key(self, tenant_id: TenantId, key_id: str) -> common_pb2.ApiKey:
        if parse_id(key_id) is None:
            raise NotFound("api key not found")
        revoked = await ask(
            self.ledger.tenants.RevokeApiKey(
                ledger_tenants_pb2.RevokeApiKeyRequest(tenant_id=tenant_id, key_id=key_id)
            ),
            "api key",
        )
        key: common_pb2.ApiKey = revoked.key
        return key

    async def list_suppressions(
        self, tenant_id: str, page_size: int, cursor: str
    ) -> tuple[list[common_pb2.SuppressionEntry], str]:
        page = await ask(
            self.ledger.tenants.ListSuppressions(
                ledger_tenants_pb2.ListSuppressionsRequest(tenant_id=tenant_id, page_size=page_size, cursor=cursor)
            ),
            "suppressions",
        )
        return list(page.entries), page.next_cursor

    async def add_suppression(self, tenant_id: str, address: str) -> bool:
        entry = common_pb2.SuppressionEntry(address=address, reason="manual")
        added = await ask(
            self.ledger.tenants.AddSuppressions(
                ledger_tenants_pb2.AddSuppressionsRequest(tenant_id=tenant_id, entries=[entry])
            ),
            "suppression",
        )
        return added.added > 0

    async def remove_suppression(self, tenant_id: str, address: str) -> None:
        await ask(
            self.ledger.tenants.RemoveSuppression(
                ledger_tenants_pb2.RemoveSuppressionRequest(tenant_id=tenant_id, address=address)
            ),
            "suppression",
        )
