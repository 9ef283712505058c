from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Index, Integer, Table, Text, func, text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata, tenant_id_column

# Jobs that exhausted their attempts: the source of truth for "dead-lettered" (the job row
# says FAILED with the same reason; the dead-letter stream holds the payload at
# `stream_sequence`). An explicit retry sets `retried_at`; a job dead-lettered again in a
# later run gets a new row, so the table is also the history.
dead_letters = Table(
    "dead_letters",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False, index=True),
    tenant_id_column(),
    Column("channel", Text, nullable=False),
    Column("run", Integer, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=False),
    Column("stream_sequence", BigInteger),
    Column("dead_lettered_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("retried_at", DateTime(timezone=True)),
    # What operators list: the entries still waiting, newest first.
    Index("ix_dead_letters_waiting", "dead_lettered_at", postgresql_where=text("retried_at IS NULL")),
)
