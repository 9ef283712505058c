from sqlalchemy import Column, DateTime, LargeBinary, Table, Text

from herald_ledger.db.models.base import created_at_column, metadata, uuid_id_column

# The people who run Herald, by name. As with API keys, only a token's SHA-256 is stored.
operators = Table(
    "operators",
    metadata,
    uuid_id_column(),
    Column("name", Text, nullable=False, unique=True),
    Column("token_hash", LargeBinary, nullable=False, unique=True),
    created_at_column(),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
)
