from sqlalchemy import Column, DateTime, ForeignKey, Table, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata

# Tenant events, kept for de-duplication: a repeat of (tenant, event_id) within 24 h
# answers `deliveries` ([{job_id, target_id}]) and writes nothing. An older row is
# replaced by the repeat.
events = Table(
    "events",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("deliveries", JSONB, nullable=False, server_default="[]"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now(), index=True),
    UniqueConstraint("tenant_id", "event_id"),
)
