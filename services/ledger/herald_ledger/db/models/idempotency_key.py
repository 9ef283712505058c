from sqlalchemy import Column, DateTime, ForeignKey, Integer, LargeBinary, Table, Text, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# One row per (tenant, Idempotency-Key): claimed while the request is processed,
# then holding the response to replay for 24 hours. A key sent with a job (state
# "job") is written in the job's own transaction and names the job instead.
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("key", Text, primary_key=True),
    Column("request_hash", LargeBinary, nullable=False),
    Column("state", Text, nullable=False),
    Column("status_code", Integer),
    Column("body", LargeBinary),
    Column("job_id", UUID(as_uuid=True)),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
