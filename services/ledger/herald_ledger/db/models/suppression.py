from sqlalchemy import Column, Text

from herald_ledger.db.models.base import created_at_column, per_tenant

# Recipients a tenant must not send to; addresses are stored lower-cased.
suppressions = per_tenant(
    "suppressions",
    Column("address", Text, primary_key=True),
    Column("reason", Text, nullable=False),
    Column("source_event_id", Text),
    created_at_column(),
)
