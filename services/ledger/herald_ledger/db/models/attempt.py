from sqlalchemy import BigInteger, Column, DateTime, ForeignKey, Index, Integer, Table, Text, text
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import created_at_column, metadata

# Partitioned by the day of its job's id, beside its job (herald_ledger.partitions); a day's key
# refers to that day of `jobs` (migration 0027; the key below names the relation).
# One row per call to a receiver or provider. Email rows also name the tenant's provider
# config, the provider's message id when it accepted, and the walk (pass over the
# providers) they belong to; a provider skipped by its open circuit is a row with outcome
# "skipped" and no call behind it. Webhook rows also keep the failure's class, the
# receiver's response headers and the start of its body (both capped by the sender).
attempts = Table(
    "attempts",
    metadata,
    Column("job_id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("number", Integer, nullable=False),
    Column("target", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("status_code", Integer),
    Column("duration_ms", Integer, nullable=False),
    Column("error", Text),
    Column("started_at", DateTime(timezone=True), nullable=False),
    created_at_column(),
    Column("provider_id", Text),
    Column("provider_message_id", Text),
    Column("walk", Integer),
    Column("error_class", Text),
    Column("response_headers", JSONB),
    Column("response_excerpt", Text),
    Index(
        "ix_attempts_provider_message_id",
        "provider_message_id",
        postgresql_where=text("provider_message_id IS NOT NULL"),
    ),
)
