from sqlalchemy import Column, LargeBinary, Text

from herald_ledger.db.models.base import created_at_column, per_tenant, updated_at_column

# What the verifier needs to check a tenant's inbound provider webhooks: the SendGrid public key, the Resend
# signing secret, the Postmark username and password digests; sealed (AES-256-GCM, associated data
# `herald:inbound:<provider>:<tenant>`). `public_info` is what a tenant may read back.
inbound_configs = per_tenant(
    "inbound_configs",
    Column("provider", Text, primary_key=True),
    Column("sealed", LargeBinary, nullable=False),
    Column("key_id", Text, nullable=False),
    Column("public_info", Text, nullable=False, server_default=""),
    created_at_column(),
    updated_at_column(),
)
