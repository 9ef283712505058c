from sqlalchemy import Boolean, Column, ForeignKey
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# A target + a filter. Deleting either deletes the subscriptions that use it.
subscriptions = tenant_rows(
    "subscriptions",
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
    created_at_column(),
    updated_at_column(),
    tenant_index=True,
)
