from sqlalchemy import Boolean, Column, DateTime, Integer, Table, Text, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata

tenants = Table(
    "tenants",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False),
    Column("plan", Text, nullable=False),
    Column("disabled", Boolean, nullable=False, server_default="false"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # Operator overrides of the plan's limits: NULL = the plan's, -1 = unlimited.
    Column("rate_per_min", Integer),
    Column("webhooks_per_month", Integer),
    Column("emails_per_month", Integer),
    # Where Herald's own mail to the tenant (quota warnings) goes; NULL: none is sent.
    Column("contact_email", Text),
    # The time of the payment event that last set the plan: an older event arriving late does not override it.
    Column("plan_event_at", DateTime(timezone=True)),
    # The tenant's webhook delivery settings ({"retry_schedule_s": [...], "retry_statuses": [...]});
    # NULL or a missing key: the operator's default.
    Column("webhook_settings", JSONB),
)
