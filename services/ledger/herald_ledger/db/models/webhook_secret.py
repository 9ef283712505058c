from sqlalchemy import Column, DateTime, LargeBinary, Text

from herald_ledger.db.models.base import created_at_column, per_tenant

# One signing secret per tenant, sealed; after a rotation the previous one keeps
# signing until `previous_expires_at` so receivers can roll over.
webhook_secrets = per_tenant(
    "webhook_secrets",
    Column("sealed_current", LargeBinary, nullable=False),
    Column("current_key_id", Text, nullable=False),
    Column("sealed_previous", LargeBinary),
    Column("previous_key_id", Text),
    Column("previous_expires_at", DateTime(timezone=True)),
    created_at_column(),
    Column("rotated_at", DateTime(timezone=True)),
)
