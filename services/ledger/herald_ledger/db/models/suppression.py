from sqlalchemy import Column, DateTime, ForeignKey, Table, Text, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# Recipients a tenant must not send to; addresses are stored lower-cased.
suppressions = Table(
    "suppressions",
    metadata,
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("address", Text, primary_key=True),
    Column("reason", Text, nullable=False),
    Column("source_event_id", Text),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
