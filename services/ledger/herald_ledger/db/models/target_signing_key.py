from sqlalchemy import Column, DateTime, ForeignKey, Index, LargeBinary, Text, text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, tenant_rows

# A webhook target's own signing keys, sealed (`hmac`: a `whsec_` secret; `ed25519`: a
# `whsk_` private key, with its `whpk_` public key in clear). The current key of an
# algorithm has no `expires_at`; a rotated-out one keeps signing until it.
target_signing_keys = tenant_rows(
    "target_signing_keys",
    Column(
        "target_id",
        UUID(as_uuid=True),
        ForeignKey("webhook_targets.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("algorithm", Text, nullable=False),
    Column("sealed", LargeBinary, nullable=False),
    Column("key_id", Text, nullable=False),
    Column("public_key", Text),
    Column("expires_at", DateTime(timezone=True)),
    created_at_column(),
    Index(
        "uq_target_signing_keys_current",
        "target_id",
        "algorithm",
        unique=True,
        postgresql_where=text("expires_at IS NULL"),
    ),
)
