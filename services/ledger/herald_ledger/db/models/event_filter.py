from sqlalchemy import Column, Text
from sqlalchemy.dialects.postgresql import ARRAY

from herald_ledger.db.models.base import created_at_column, tenant_rows, updated_at_column

# A list of event types, exact ("orders.created.v1") or prefix wildcards ("orders.*", "*").
event_filters = tenant_rows(
    "event_filters",
    Column("description", Text, nullable=False, server_default=""),
    Column("event_types", ARRAY(Text), nullable=False),
    created_at_column(),
    updated_at_column(),
    tenant_index=True,
)
