"""Tenants and API keys."""

from __future__ import annotations

from datetime import UTC

from sqlalchemy.ext.asyncio import AsyncEngine

from herald.grpcio.errors import abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import ledger_pb2
from herald_ledger.convert import api_key_to_proto, tenant_to_proto
from herald_ledger.notifications import API_KEYS, TENANTS, Notifier
from herald_ledger.rpc.common import Context, require_id
from herald_ledger.store import tenants as tenant_store
from herald_ledger.store.codes import PLAN_FROM_PROTO

MAX_PAGE_SIZE = 200


def valid_contact(address: str) -> bool:
    """A plausible address (the gateway validates properly; this guards the column)."""
    local, _, domain = address.partition("@")
    return bool(local) and "." in domain and len(address) <= 320 and not any(c.isspace() for c in address)


class AccessRpcs:
    engine: AsyncEngine
    notifier: Notifier

    async def ListTenants(
        self, request: ledger_pb2.ListTenantsRequest, context: Context
    ) -> ledger_pb2.ListTenantsResponse:
        page_size = request.page_size or 50
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            await abort_invalid(context, [("page_size", f"must be between 1 and {MAX_PAGE_SIZE}")])
        after = parse_id(request.cursor) if request.cursor else None
        if request.cursor and after is None:
            await abort_invalid(context, [("cursor", "is not a cursor this API returned")])
        async with self.engine.connect() as conn:
            rows, next_cursor = await tenant_store.list_tenants(conn, page_size, after)
        return ledger_pb2.ListTenantsResponse(tenants=[tenant_to_proto(r) for r in rows], next_cursor=next_cursor)

    async def UpdateTenant(
        self, request: ledger_pb2.UpdateTenantRequest, context: Context
    ) -> ledger_pb2.UpdateTenantResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        plan = PLAN_FROM_PROTO.get(request.plan) if request.plan else None
        disabled = request.disabled if request.HasField("disabled") else None
        contact = request.contact_email.strip() if request.HasField("contact_email") else None
        if contact and not valid_contact(contact):
            await abort_invalid(context, [("contact_email", "must be an email address")])
        async with self.engine.begin() as conn:
            row = await tenant_store.update_tenant(conn, tenant_id, plan, disabled, contact)
        if row is None:
            await abort_not_found(context, "tenant")
        await self.notifier.publish(TENANTS, tenant_id=str(tenant_id))
        return ledger_pb2.UpdateTenantResponse(tenant=tenant_to_proto(row))

    async def ListApiKeys(
        self, request: ledger_pb2.ListApiKeysRequest, context: Context
    ) -> ledger_pb2.ListApiKeysResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        async with self.engine.connect() as conn:
            rows = await tenant_store.list_api_keys(conn, tenant_id)
        return ledger_pb2.ListApiKeysResponse(keys=[api_key_to_proto(r) for r in rows])

    async def RevokeApiKey(
        self, request: ledger_pb2.RevokeApiKeyRequest, context: Context
    ) -> ledger_pb2.RevokeApiKeyResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        key_id = parse_id(request.key_id)
        row = None
        if key_id is not None:
            async with self.engine.begin() as conn:
                row = await tenant_store.revoke_api_key(conn, tenant_id, key_id)
        if row is None:
            await abort_not_found(context, "api key")
        await self.notifier.publish(API_KEYS, key_id=str(row.id), tenant_id=str(tenant_id))
        return ledger_pb2.RevokeApiKeyResponse(key=api_key_to_proto(row))

    async def TouchApiKeys(
        self, request: ledger_pb2.TouchApiKeysRequest, context: Context
    ) -> ledger_pb2.TouchApiKeysResponse:
        uses = {}
        for use in request.uses:
            key_id = parse_id(use.key_id)
            if key_id is not None:
                uses[key_id] = use.used_at.ToDatetime(tzinfo=UTC)
        async with self.engine.begin() as conn:
            await tenant_store.touch_api_keys(conn, uses)
        return ledger_pb2.TouchApiKeysResponse()
