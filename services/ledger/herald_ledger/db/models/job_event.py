from sqlalchemy import BigInteger, Column, ForeignKey, Table, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, metadata

# The history of a job: every status change with its reason; in its job's day partition, whose
# key refers to that day of `jobs` (migration 0027; the key below names the relation).
job_events = Table(
    "job_events",
    metadata,
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("from_status", Text),
    Column("to_status", Text, nullable=False),
    Column("reason", Text),
    created_at_column(),
)
