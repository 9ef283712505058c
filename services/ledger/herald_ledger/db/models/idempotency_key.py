from sqlalchemy import Column, Index, Integer, LargeBinary, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, per_tenant, updated_at_column

# One row per (tenant, Idempotency-Key): claimed while the request is processed,
# then holding the response to replay for 24 hours. A key sent with a job (state
# "job") is written in the job's own transaction and names the job instead.
idempotency_keys = per_tenant(
    "idempotency_keys",
    Column("key", Text, primary_key=True),
    Column("request_hash", LargeBinary, nullable=False),
    Column("state", Text, nullable=False),
    Column("status_code", Integer),
    Column("body", LargeBinary),
    Column("job_id", UUID(as_uuid=True)),
    created_at_column(),
    updated_at_column(),
    # The ledger's maintenance deletes keys past their 24 hours by age (migration 0015).
    Index("ix_idempotency_keys_created_at", "created_at"),
)
