from sqlalchemy import Column, DateTime, Index, LargeBinary, Text, UniqueConstraint, func, text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import tenant_rows

# Tenant events: the event log (GET /v1/events) and de-duplication: a repeat of (tenant,
# event_id) within 24 h answers `deliveries` ([{job_id, target_id}], the fan-out's first
# result) and writes nothing. An older row is replaced by the repeat. `payload` is the body
# as the tenant sent it (its jobs carry it too; the bus carries a large one through the
# payload store, as for any webhook). Migration 0022.
events = tenant_rows(
    "events",
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("deliveries", JSONB, nullable=False, server_default="[]"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now(), index=True),
    Column("payload", LargeBinary),
    Column("content_type", Text),
    Column("ordering_key", Text),
    UniqueConstraint("tenant_id", "event_id"),
    Index("ix_events_tenant_id_id", "tenant_id", text("id DESC")),
)
