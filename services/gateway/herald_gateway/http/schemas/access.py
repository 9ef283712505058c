"""The audit log and the named operators, as the HTTP API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from herald.v1 import common_pb2
from herald_gateway.http.schemas.common import Page, Text, time_of


class AuditActor(BaseModel):
    kind: str = Field(description="key (a tenant's API key) or operator.")
    id: str
    name: str


class AuditEntryOut(BaseModel):
    id: str
    tenant_id: str | None
    at: datetime | None
    actor: AuditActor
    action: str = Field(description='The route or RPC: "PATCH /v1/webhooks/targets/{target_id}".')
    resource_id: str
    changes: dict[str, Any] = Field(description='The fields the call set; secret values show as "[secret]".')
    address: str = Field(description="Where the call came from.")


class AuditLog(Page[AuditEntryOut]):
    pass


def audit_entry_out(entry: common_pb2.AuditEntry) -> AuditEntryOut:
    return AuditEntryOut(
        id=entry.id,
        tenant_id=entry.tenant_id or None,
        at=time_of(entry, "at"),
        actor=AuditActor(kind=entry.actor_kind, id=entry.actor_id, name=entry.actor_name),
        action=entry.action,
        resource_id=entry.resource_id,
        changes=orjson.loads(entry.changes_json or "{}"),
        address=entry.address,
    )


class OperatorIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=100, pattern=r"^\S+$")


class OperatorOut(BaseModel):
    id: str
    name: str
    created_at: datetime | None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


class OperatorCreated(OperatorOut):
    token: str = Field(description="Shown once. Only its SHA-256 is stored.")


class OperatorList(BaseModel):
    data: list[OperatorOut]


def operator_out(operator: common_pb2.Operator) -> OperatorOut:
    return OperatorOut(
        id=operator.id,
        name=operator.name,
        created_at=time_of(operator, "created_at"),
        revoked_at=time_of(operator, "revoked_at"),
        last_used_at=time_of(operator, "last_used_at"),
    )
