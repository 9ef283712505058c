from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Table, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# A target + a filter. Deleting either deletes the subscriptions that use it.
subscriptions = Table(
    "subscriptions",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False, index=True),
    Column(
        "target_id",
        UUID(as_uuid=True),
        ForeignKey("webhook_targets.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column(
        "filter_id", UUID(as_uuid=True), ForeignKey("event_filters.id", ondelete="CASCADE"), nullable=False, index=True
    ),
    Column("active", Boolean, nullable=False, server_default="true"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
