from sqlalchemy import Boolean, Column, DateTime, ForeignKey, Integer, Table, Text, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata

# A tenant's webhook endpoint for event fan-out. `rate_limit_per_min` (NULL: no limit) is
# enforced by the webhook-sender. A disabled target receives nothing; `disabled_reason` says
# why. `failing_since` is the first failure since the last success (NULL: not failing); a
# streak older than HERALD_WEBHOOK_TARGET_DISABLE_AFTER_S disables the target.
webhook_targets = Table(
    "webhook_targets",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("url", Text, nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("headers", JSONB, nullable=False, server_default="{}"),
    Column("rate_limit_per_min", Integer),
    Column("enabled", Boolean, nullable=False, server_default="true"),
    Column("disabled_reason", Text),
    Column("failing_since", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
