from sqlalchemy import Column, DateTime, ForeignKey, LargeBinary, Table, Text, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# One signing secret per tenant, sealed; after a rotation the previous one keeps
# signing until `previous_expires_at` so receivers can roll over.
webhook_secrets = Table(
    "webhook_secrets",
    metadata,
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("sealed_current", LargeBinary, nullable=False),
    Column("current_key_id", Text, nullable=False),
    Column("sealed_previous", LargeBinary),
    Column("previous_key_id", Text),
    Column("previous_expires_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("rotated_at", DateTime(timezone=True)),
)
