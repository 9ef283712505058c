from sqlalchemy import Boolean, Column, DateTime, Integer, Text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# A tenant's webhook endpoint for event fan-out. `rate_limit_per_min` (NULL: no limit) and
# `max_in_flight` (calls at once per sender replica; NULL: the operator's default) are
# enforced by the webhook-sender. A disabled target receives nothing; `disabled_reason` says
# why. `failing_since` is the first failure since the last success (NULL: not failing); a
# streak older than HERALD_WEBHOOK_TARGET_DISABLE_AFTER_S disables the target.
webhook_targets = tenant_rows(
    "webhook_targets",
    Column("url", Text, nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("headers", JSONB, nullable=False, server_default="{}"),
    Column("rate_limit_per_min", Integer),
    Column("max_in_flight", Integer),
    Column("enabled", Boolean, nullable=False, server_default="true"),
    Column("disabled_reason", Text),
    Column("failing_since", DateTime(timezone=True)),
    created_at_column(),
    updated_at_column(),
    tenant_index=True,
)
