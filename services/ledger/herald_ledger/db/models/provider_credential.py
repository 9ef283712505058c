from sqlalchemy import Column, Integer, LargeBinary, Text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# The credential itself lives only in `sealed` (AES-256-GCM, bound to tenant, provider
# and row); the SMTP host, port, user and TLS mode are kept in clear for display.
provider_credentials = tenant_rows(
    "provider_credentials",
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
    created_at_column(),
    updated_at_column(),
    tenant_index=True,
)
