from sqlalchemy import Column, DateTime, Index, Text, text
from sqlalchemy.dialects.postgresql import JSONB

from herald_ledger.db.models.base import created_at_column, tenant_rows

# Herald's own events to a tenant (herald.*), an outbox: written in the transaction of the
# state change they tell of, published by the ledger to the router's operational intake
# subject after the commit (`published_at`; `claimed_until` leases a row to one ledger
# replica while it publishes). The id is the event's id; the payload's `target_id` names the target
# the event is about, which never receives it. `dedupe_key` (quota thresholds: once per period)
# makes "once" a constraint. See herald_ledger.store.operational.
operational_events = tenant_rows(
    "operational_events",
    Column("event_type", Text, nullable=False),
    Column("payload", JSONB, nullable=False),
    Column("dedupe_key", Text, unique=True),
    created_at_column(),
    Column("claimed_until", DateTime(timezone=True)),
    Column("published_at", DateTime(timezone=True)),
    Index("ix_operational_events_unpublished", "created_at", postgresql_where=text("published_at IS NULL")),
    tenant_index=True,
)
