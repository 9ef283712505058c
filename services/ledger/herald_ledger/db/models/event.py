from sqlalchemy import Column, DateTime, Index, LargeBinary, Text, func, text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import tenant_rows

# Tenant events, partitioned by day of id (herald_ledger.partitions): the event log (GET /v1/events)
# and de-duplication (through `event_claims`): a repeat of (tenant, event_id) within 24 h answers
# `deliveries` ([{job_id, target_id}], the fan-out's first result) and writes nothing; a repeat
# after the window is a new row. `payload` is the body as the tenant sent it (its jobs carry it
# too; the bus carries a large one through the payload store, as for any webhook; migration
# 0022) until expunged or aged out (`payload_expunged_at`, migration 0023).
events = tenant_rows(
    "events",
    Column("event_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("deliveries", JSONB, nullable=False, server_default="[]"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now(), index=True),
    Column("payload", LargeBinary),
    Column("content_type", Text),
    Column("ordering_key", Text),
    Column("payload_expunged_at", DateTime(timezone=True)),
    Index("ix_events_tenant_id_event_id", "tenant_id", "event_id"),
    Index("ix_events_tenant_id_id", "tenant_id", text("id DESC")),
)
