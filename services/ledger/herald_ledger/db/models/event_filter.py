from sqlalchemy import Column, DateTime, ForeignKey, Table, Text, func
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from herald_ledger.db.models.base import metadata

# A list of event types, exact ("orders.created.v1") or prefix wildcards ("orders.*", "*").
event_filters = Table(
    "event_filters",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("description", Text, nullable=False, server_default=""),
    Column("event_types", ARRAY(Text), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
