from sqlalchemy import Column, DateTime, ForeignKey, LargeBinary, Table, Text, func
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import metadata

# What the verifier needs to check a tenant's inbound provider webhooks: the SendGrid public key, the Resend
# signing secret, the Postmark username and password digests; sealed (AES-256-GCM, associated data
# `herald:inbound:<provider>:<tenant>`). `public_info` is what a tenant may read back.
inbound_configs = Table(
    "inbound_configs",
    metadata,
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), primary_key=True),
    Column("provider", Text, primary_key=True),
    Column("sealed", LargeBinary, nullable=False),
    Column("key_id", Text, nullable=False),
    Column("public_info", Text, nullable=False, server_default=""),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
