"""Tenants and their API keys."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC
from typing import Any, TypeVar

from google.protobuf.message import Message
from sqlalchemy.engine import Row

from herald.grpcio.errors import abort_already_exists, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import ledger_tenants_pb2
from herald_ledger.convert import api_key_to_proto, tenant_to_proto
from herald_ledger.notifications import API_KEYS, TENANTS, Notifier
from herald_ledger.rpc.common import Context, Rpcs, found, id_page, require_id, tenant_get_rpc, tenant_list_rpc
from herald_ledger.store import tenants as tenant_store
from herald_ledger.store.codes import PLAN_FROM_PROTO
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID, PlatformMail, queue_key_created

M = TypeVar("M", bound=Message)


def valid_contact(address: str) -> bool:
    """A plausible address (the gateway validates properly; this guards the column)."""
    local, _, domain = address.partition("@")
    return bool(local) and "." in domain and len(address) <= 320 and not any(c.isspace() for c in address)


async def changed_tenant(notifier: Notifier, context: Context, row: Row[Any] | None, answer: Callable[..., M]) -> M:
    """`answer(tenant=...)` for a tenant row just changed (NOT_FOUND `tenant` when there is none),
    announced so that the services caching the tenant (plan, limits, disabled) reload it."""
    changed = await found(context, "tenant", row)
    await notifier.publish(TENANTS, tenant_id=str(changed.id))
    return answer(tenant=tenant_to_proto(changed))


class TenantRpcs(Rpcs):
    notifier: Notifier
    platform: PlatformMail | None

    ListApiKeys = tenant_list_rpc(
        tenant_store.list_api_keys, ledger_tenants_pb2.ListApiKeysResponse, "keys", api_key_to_proto
    )

    async def CreateTenant(
        self, request: ledger_tenants_pb2.CreateTenantRequest, context: Context
    ) -> ledger_tenants_pb2.CreateTenantResponse:
        plan = PLAN_FROM_PROTO.get(request.plan)
        name = request.name.strip()
        if plan is None or not name or len(name) > 200:
            await abort_invalid(context, [("name/plan", "a name of 1-200 characters and a plan are required")])
        contact = request.contact_email.strip()
        if contact and not valid_contact(contact):
            await abort_invalid(context, [("contact_email", "must be an email address")])
        row = await self.write(tenant_store.create_tenant, name, plan, contact or None, request.allow_duplicate_name)
        if isinstance(row, uuid.UUID):
            await abort_already_exists(context, f"a tenant named {name!r} ({row})")
        return ledger_tenants_pb2.CreateTenantResponse(tenant=tenant_to_proto(row))

    GetTenant = tenant_get_rpc(tenant_store.get_tenant, ledger_tenants_pb2.GetTenantResponse, "tenant", tenant_to_proto)

    async def CreateApiKey(
        self, request: ledger_tenants_pb2.CreateApiKeyRequest, context: Context
    ) -> ledger_tenants_pb2.CreateApiKeyResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if tenant_id == PLATFORM_TENANT_ID:
            await abort_not_found(context, "tenant")
        if len(request.key_hash) != 32:
            await abort_invalid(context, [("key_hash", "must be a SHA-256 digest")])
        async with self.engine.begin() as conn:
            row = await tenant_store.create_api_key(
                conn, tenant_id, request.name or "default", request.key_hash, request.public_id, list(request.scopes)
            )
            # The tenant hears about every new key (name and prefix, never the secret).
            await queue_key_created(conn, self.platform, tenant_id, row.id, row.name, request.public_id)
        response = ledger_tenants_pb2.CreateApiKeyResponse(key_id=str(row.id), scopes=row.scopes)
        response.created_at.FromDatetime(row.created_at)
        return response

    async def AuthenticateApiKey(
        self, request: ledger_tenants_pb2.AuthenticateApiKeyRequest, context: Context
    ) -> ledger_tenants_pb2.AuthenticateApiKeyResponse:
        async with self.engine.connect() as conn:
            found = await tenant_store.authenticate(conn, request.key_hash)
        if found is None:
            return ledger_tenants_pb2.AuthenticateApiKeyResponse(found=False)
        row, key = found
        return ledger_tenants_pb2.AuthenticateApiKeyResponse(
            found=True,
            tenant=tenant_to_proto(row),
            key_id=str(key.key_id),
            key_name=key.key_name,
            scopes=key.key_scopes,
        )

    async def ListTenants(
        self, request: ledger_tenants_pb2.ListTenantsRequest, context: Context
    ) -> ledger_tenants_pb2.ListTenantsResponse:
        page_size, after = await id_page(context, request.page_size, request.cursor)
        rows, next_cursor = await self.read(tenant_store.list_tenants, page_size, after)
        return ledger_tenants_pb2.ListTenantsResponse(
            tenants=[tenant_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def UpdateTenant(
        self, request: ledger_tenants_pb2.UpdateTenantRequest, context: Context
    ) -> ledger_tenants_pb2.UpdateTenantResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        plan = PLAN_FROM_PROTO.get(request.plan) if request.plan else None
        disabled = request.disabled if request.HasField("disabled") else None
        contact = request.contact_email.strip() if request.HasField("contact_email") else None
        if contact and not valid_contact(contact):
            await abort_invalid(context, [("contact_email", "must be an email address")])
        row = await self.write(tenant_store.update_tenant, tenant_id, plan, disabled, contact)
        return await changed_tenant(self.notifier, context, row, ledger_tenants_pb2.UpdateTenantResponse)

    async def RevokeApiKey(
        self, request: ledger_tenants_pb2.RevokeApiKeyRequest, context: Context
    ) -> ledger_tenants_pb2.RevokeApiKeyResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        row = await self.one(context, "api key", tenant_id, request.key_id, "write", tenant_store.revoke_api_key)
        await self.notifier.publish(API_KEYS, key_id=str(row.id), tenant_id=str(tenant_id))
        return ledger_tenants_pb2.RevokeApiKeyResponse(key=api_key_to_proto(row))

    async def TouchApiKeys(
        self, request: ledger_tenants_pb2.TouchApiKeysRequest, context: Context
    ) -> ledger_tenants_pb2.TouchApiKeysResponse:
        uses = {}
        for use in request.uses:
            key_id = parse_id(use.key_id)
            if key_id is not None:
                uses[key_id] = use.used_at.ToDatetime(tzinfo=UTC)
        async with self.engine.begin() as conn:
            await tenant_store.touch_api_keys(conn, uses)
        return ledger_tenants_pb2.TouchApiKeysResponse()
