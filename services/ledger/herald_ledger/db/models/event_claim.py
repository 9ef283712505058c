from sqlalchemy import Column, Text
from sqlalchemy.dialects.postgresql import UUID

from herald_ledger.db.models.base import created_at_column, per_tenant

# The de-duplication of tenant events: one row per (tenant, event id) within the 24-hour window,
# naming the event row (`events` is partitioned by day, so it cannot hold the pair unique
# itself). The ledger's maintenance deletes claims past the window. Migration 0023.
event_claims = per_tenant(
    "event_claims",
    Column("event_id", Text, primary_key=True),
    Column("id", UUID(as_uuid=True), nullable=False),
    created_at_column(),
)
