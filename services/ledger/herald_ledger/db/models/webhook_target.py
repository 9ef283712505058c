from sqlalchemy import Boolean, Column, DateTime, Integer, LargeBinary, SmallInteger, Text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# A tenant's webhook endpoint for event fan-out. `rate_limit_per_min` (NULL: no limit) and
# `max_in_flight` (calls at once per sender replica; NULL: the operator's default) are
# enforced by the webhook-sender. A disabled target receives nothing; `disabled_reason` says
# why. `failing_since` is the first failure since the last success (NULL: not failing); a
# streak older than HERALD_WEBHOOK_TARGET_DISABLE_AFTER_S disables the target; `failing_level`
# is the highest failing level (50, 70, 90 % of that threshold) announced in the streak.
# `last_success_at`: the last delivery the receiver accepted, kept to the minute (one row
# version per target per minute at most, whatever the delivery rate).
# `headers` shows the values masked; `sealed_headers` holds them (herald.webhooks.sealed_headers).
# `tenant_secret_signs`: a target from before targets had keys of their own; the tenant's
# secret signs beside the target's own key until the target's first rotation.
webhook_targets = tenant_rows(
    "webhook_targets",
    Column("url", Text, nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("headers", JSONB, nullable=False, server_default="{}"),
    Column("sealed_headers", LargeBinary),
    Column("rate_limit_per_min", Integer),
    Column("max_in_flight", Integer),
    Column("enabled", Boolean, nullable=False, server_default="true"),
    Column("disabled_reason", Text),
    Column("failing_since", DateTime(timezone=True)),
    Column("failing_level", SmallInteger, nullable=False, server_default="0"),
    Column("last_success_at", DateTime(timezone=True)),
    Column("tenant_secret_signs", Boolean, nullable=False, server_default="false"),
    created_at_column(),
    updated_at_column(),
    tenant_index=True,
)
