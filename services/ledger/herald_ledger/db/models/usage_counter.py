from sqlalchemy import BigInteger, Column, Text

from herald_ledger.db.models.base import per_tenant

# Jobs admitted per tenant and calendar month (UTC, "YYYY-MM"). Admission locks the
# row inside the job-creating transaction, so concurrent requests never overshoot.
usage_counters = per_tenant(
    "usage_counters",
    Column("period", Text, primary_key=True),
    Column("webhooks", BigInteger, nullable=False, server_default="0"),
    Column("emails", BigInteger, nullable=False, server_default="0"),
)
