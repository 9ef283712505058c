from sqlalchemy import BigInteger, Column, ForeignKey, Table, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# Jobs admitted per tenant and calendar month (UTC, "YYYY-MM"). Admission locks the
# row inside the job-creating transaction, so concurrent requests never overshoot.
usage_counters = Table(
    "usage_counters",
    metadata,
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("period", Text, primary_key=True),
    Column("webhooks", BigInteger, nullable=False, server_default="0"),
    Column("emails", BigInteger, nullable=False, server_default="0"),
)
