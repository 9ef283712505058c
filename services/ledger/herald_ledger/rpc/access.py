"""The audit log and the named operators (the gateway decides who may do what; the ledger keeps
the record and the operators' token hashes)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.engine import Row

from herald.grpcio.errors import abort_already_exists, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import common_pb2, ledger_tenants_pb2
from herald_ledger.convert import timestamp
from herald_ledger.rpc.common import Context, Rpcs, id_page
from herald_ledger.store import audit as audit_store
from herald_ledger.store import operators as operator_store

ACTOR_KINDS = frozenset({"key", "operator"})


def audit_entry_to_proto(row: Row[Any]) -> common_pb2.AuditEntry:
    return common_pb2.AuditEntry(
        id=str(row.id),
        tenant_id=str(row.tenant_id) if row.tenant_id is not None else "",
        at=timestamp(row.at),
        actor_kind=row.actor_kind,
        actor_id=row.actor_id,
        actor_name=row.actor_name,
        action=row.action,
        resource_id=row.resource_id,
        changes_json=json.dumps(row.changes, separators=(",", ":"), sort_keys=True),
        address=row.address,
    )


def operator_to_proto(row: Row[Any]) -> common_pb2.Operator:
    return common_pb2.Operator(
        id=str(row.id),
        name=row.name,
        created_at=timestamp(row.created_at),
        revoked_at=timestamp(row.revoked_at),
        last_used_at=timestamp(row.last_used_at),
    )


class AccessRpcs(Rpcs):
    async def AppendAuditEntry(
        self, request: ledger_tenants_pb2.AppendAuditEntryRequest, context: Context
    ) -> ledger_tenants_pb2.AppendAuditEntryResponse:
        entry = request.entry
        tenant_id = parse_id(entry.tenant_id) if entry.tenant_id else None
        if entry.tenant_id and tenant_id is None:
            await abort_invalid(context, [("entry.tenant_id", "must be a UUID")])
        if entry.actor_kind not in ACTOR_KINDS or not entry.actor_id or not entry.action:
            await abort_invalid(context, [("entry", "actor_kind (key|operator), actor_id and action are required")])
        try:
            changes = json.loads(entry.changes_json or "{}")
        except ValueError:
            changes = None
        if not isinstance(changes, dict):
            await abort_invalid(context, [("entry.changes_json", "must be a JSON object")])
        row = await self.write(
            audit_store.append,
            tenant_id,
            {
                "actor_kind": entry.actor_kind,
                "actor_id": entry.actor_id,
                "actor_name": entry.actor_name,
                "action": entry.action,
                "resource_id": entry.resource_id,
                "changes": changes,
                "address": entry.address,
            },
        )
        return ledger_tenants_pb2.AppendAuditEntryResponse(entry=audit_entry_to_proto(row))

    async def ListAuditEntries(
        self, request: ledger_tenants_pb2.ListAuditEntriesRequest, context: Context
    ) -> ledger_tenants_pb2.ListAuditEntriesResponse:
        tenant_id = parse_id(request.tenant_id) if request.tenant_id else None
        if request.tenant_id and tenant_id is None:
            await abort_not_found(context, "tenant")
        page_size, before = await id_page(context, request.page_size, request.cursor)
        rows, next_cursor = await self.read(audit_store.page, tenant_id, page_size, before)
        return ledger_tenants_pb2.ListAuditEntriesResponse(
            entries=[audit_entry_to_proto(r) for r in rows], next_cursor=next_cursor
        )

    async def CreateOperator(
        self, request: ledger_tenants_pb2.CreateOperatorRequest, context: Context
    ) -> ledger_tenants_pb2.CreateOperatorResponse:
        name = request.name.strip()
        if not name or len(name) > 100 or any(c.isspace() for c in name):
            await abort_invalid(context, [("name", "1-100 characters, no spaces")])
        if len(request.token_hash) != 32:
            await abort_invalid(context, [("token_hash", "must be a SHA-256 digest")])
        row = await self.write(operator_store.create, name, request.token_hash)
        if row is None:
            await abort_already_exists(context, f"operator {name!r} (names are not reused)")
        return ledger_tenants_pb2.CreateOperatorResponse(operator=operator_to_proto(row))

    async def ListOperators(
        self, request: ledger_tenants_pb2.ListOperatorsRequest, context: Context
    ) -> ledger_tenants_pb2.ListOperatorsResponse:
        rows = await self.read(operator_store.list_all)
        return ledger_tenants_pb2.ListOperatorsResponse(operators=[operator_to_proto(r) for r in rows])

    async def RevokeOperator(
        self, request: ledger_tenants_pb2.RevokeOperatorRequest, context: Context
    ) -> ledger_tenants_pb2.RevokeOperatorResponse:
        row = await self.write(operator_store.revoke, request.name.strip())
        if row is None:
            await abort_not_found(context, "operator")
        return ledger_tenants_pb2.RevokeOperatorResponse(operator=operator_to_proto(row))

    async def AuthenticateOperator(
        self, request: ledger_tenants_pb2.AuthenticateOperatorRequest, context: Context
    ) -> ledger_tenants_pb2.AuthenticateOperatorResponse:
        row = await self.write(operator_store.authenticate, request.token_hash)
        if row is None:
            return ledger_tenants_pb2.AuthenticateOperatorResponse(found=False)
        return ledger_tenants_pb2.AuthenticateOperatorResponse(found=True, operator=operator_to_proto(row))
