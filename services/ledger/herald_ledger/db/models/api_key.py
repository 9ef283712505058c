from sqlalchemy import Column, DateTime, ForeignKey, LargeBinary, Table, Text, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# Only the SHA-256 of a key is stored; `public_id` names a key without revealing it.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column(
        "tenant_id",
        UUID(as_uuid=True),
        ForeignKey("tenants.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("name", Text, nullable=False),
    Column("public_id", Text, nullable=False),
    Column("key_hash", LargeBinary, nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
)
