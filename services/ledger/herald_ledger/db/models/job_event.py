from sqlalchemy import BigInteger, Column, ForeignKey, Table, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, metadata

# The history of a job: every status change with its reason.
job_events = Table(
    "job_events",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("from_status", Text),
    Column("to_status", Text, nullable=False),
    Column("reason", Text),
    created_at_column(),
)
