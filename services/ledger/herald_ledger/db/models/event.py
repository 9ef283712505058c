from sqlalchemy import Column, DateTime, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import tenant_rows

# Tenant events, kept for de-duplication: a repeat of (tenant, event_id) within 24 h
# answers `deliveries` ([{job_id, target_id}]) and writes nothing. An older row is
# replaced by the repeat.
events = tenant_rows(
    "events",
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("deliveries", JSONB, nullable=False, server_default="[]"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now(), index=True),
    UniqueConstraint("tenant_id", "event_id"),
)
