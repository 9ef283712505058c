from sqlalchemy import Boolean, Column, DateTime, Index, Integer, Table, Text, text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import created_at_column, metadata, uuid_id_column

tenants = Table(
    "tenants",
    metadata,
    uuid_id_column(),
    Column("name", Text, nullable=False),
    Column("plan", Text, nullable=False),
    Column("disabled", Boolean, nullable=False, server_default="false"),
    created_at_column(),
    # Operator overrides of the plan's limits: NULL = the plan's, -1 = unlimited.
    Column("rate_per_min", Integer),
    Column("webhooks_per_month", Integer),
    Column("emails_per_month", Integer),
    # Where Herald's own mail to the tenant (quota warnings) goes; NULL: none is sent.
    Column("contact_email", Text),
    # The time of the payment event that last set the plan: an older event arriving late does not override it.
    Column("plan_event_at", DateTime(timezone=True)),
    # A cancellation at the period's end: the plan goes back to free then (ledger maintenance).
    Column("plan_ends_at", DateTime(timezone=True)),
    # The tenant's webhook delivery settings ({"retry_schedule_s": [...], "retry_statuses": [...]});
    # NULL or a missing key: the operator's default.
    Column("webhook_settings", JSONB),
    # Operator overrides of the plan's retention, in days (NULL: the plan's; herald_ledger.retention).
    Column("payload_retention_days", Integer),
    Column("row_retention_days", Integer),
    Index("tenants_plan_ends_at", "plan_ends_at", postgresql_where=text("plan_ends_at IS NOT NULL")),
)
