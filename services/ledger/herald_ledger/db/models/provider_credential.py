from sqlalchemy import Column, DateTime, ForeignKey, Integer, LargeBinary, Table, Text, func
from sqlalchemy.dialects.postgresql import JSONB, UUID

from herald_ledger.db.models.base import metadata

# The credential itself lives only in `sealed` (AES-256-GCM, bound to tenant, provider
# and row); the SMTP host, port, user and TLS mode are kept in clear for display.
provider_credentials = Table(
    "provider_credentials",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("tenant_id", UUID(as_uuid=True), ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("provider", Text, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("base_url", Text, nullable=False, server_default=""),
    Column("options", JSONB, nullable=False, server_default="{}"),
    Column("smtp_host", Text),
    Column("smtp_port", Integer),
    Column("smtp_username", Text),
    Column("smtp_tls_mode", Text),
    Column("sealed", LargeBinary, nullable=False),
    Column("key_id", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
