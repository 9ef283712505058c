from sqlalchemy import BigInteger, Boolean, Column, DateTime, ForeignKey, Index, Table, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata, tenant_id_column

# Verified provider events (delivery events, bounces, complaints, payments), normalised. The unique key is the
# replay guard: a provider event is acted on once, whatever the number of deliveries.
inbound_events = Table(
    "inbound_events",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("provider", Text, nullable=False),
    tenant_id_column(),
    Column("event_id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="SET NULL"), index=True),
    Column("provider_message_id", Text),
    Column("recipient", Text),
    Column("plan", Text),
    Column("applied", Boolean, nullable=False, server_default="false"),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("raw", JSONB),
    UniqueConstraint("provider", "tenant_id", "event_id"),
    Index("ix_inbound_events_tenant_type", "tenant_id", "type"),
)
