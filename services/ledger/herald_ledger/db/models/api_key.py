from sqlalchemy import Column, DateTime, LargeBinary, Text, text
from sqlalchemy.dialects.postgresql import ARRAY

from herald_ledger.db.models.base import created_at_column, tenant_rows

ALL_SCOPES_SQL = "'{send,read,manage,keys,console}'::text[]"

# Only the SHA-256 of a key is stored; `public_id` names a key without revealing it.
api_keys = tenant_rows(
    "api_keys",
    Column("name", Text, nullable=False),
    Column("public_id", Text, nullable=False),
    Column("key_hash", LargeBinary, nullable=False, unique=True),
    created_at_column(),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
    # What the key may do (herald_gateway.scopes); a key made without naming any has them all.
    Column("scopes", ARRAY(Text), nullable=False, server_default=text(ALL_SCOPES_SQL)),
    tenant_index=True,
)
