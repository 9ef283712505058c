from sqlalchemy import Column, DateTime, ForeignKey, Index, Table, Text, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata, uuid_id_column

# Who changed what, when, from where: appended by the gateway for every configuration change
# (herald_ledger.store.audit). Append-only: no code updates or deletes a row, and a trigger
# (migration 0021) refuses UPDATE always and DELETE unless the deleting transaction set
# `herald.audit_erasure` (a tenant's erasure, retention). The id is a UUIDv7: its order is time.
audit_log = Table(
    "audit_log",
    metadata,
    uuid_id_column(),
    # NULL: an operator's call about no tenant (creating an operator, rotating the master key).
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE")),
    Column("at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # key | operator
    Column("actor_kind", Text, nullable=False),
    # The API key's or the operator's id, and its name at the time.
    Column("actor_id", Text, nullable=False),
    Column("actor_name", Text, nullable=False),
    # The route template ("PATCH /v1/webhooks/targets/{target_id}") or the RPC ("grpc UpdateWebhookTarget").
    Column("action", Text, nullable=False),
    Column("resource_id", Text, nullable=False, server_default=""),
    # The fields the call set, with their new values; a secret's value is never here ("[secret]").
    Column("changes", JSONB, nullable=False, server_default="{}"),
    Column("address", Text, nullable=False, server_default=""),
    Index("ix_audit_log_tenant_id_id", "tenant_id", "id"),
)
