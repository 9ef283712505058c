from sqlalchemy import Column, DateTime, ForeignKey, Table, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, metadata

# The platform email log: every email Herald sends on its own behalf (quota warnings,
# key-created notices, dead-letter alerts), one row per message, with its outcome. The
# message itself travels as a job of channel "platform_email" (same id), so it is queued,
# retried and dead-lettered like any job.
# `dedupe_key` makes "once per tenant, month and threshold" (and once per key, per alert)
# a constraint, not a hope.
platform_emails = Table(
    "platform_emails",
    metadata,
    Column("id", UUID(as_uuid=True), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("kind", Text, nullable=False),
    Column("dedupe_key", Text, nullable=False, unique=True),
    Column("recipient", Text, nullable=False),
    Column("subject", Text, nullable=False),
    # pending | delivered | failed
    Column("status", Text, nullable=False, server_default="pending"),
    Column("provider_message_id", Text),
    Column("error", Text),
    created_at_column(),
    Column("finished_at", DateTime(timezone=True)),
)
