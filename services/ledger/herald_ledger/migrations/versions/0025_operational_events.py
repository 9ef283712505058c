"""Herald's own events to the tenant: an outbox of operational events (revision 0025).

A state change the tenant should hear of (a target disabled or enabled, a failing level, a
dead-lettered job, a quota threshold) writes one `operational_events` row in its own
transaction; the ledger publishes it to the router's operational intake subject after the
commit and marks it published (`published_at`). `dedupe_key` makes "once per period" a
constraint (quota thresholds); published rows are pruned once no key can matter any more.
`webhook_targets.failing_level` is the highest failing level (50, 70, 90 % of the disable
threshold) announced in the target's current streak (0: none).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0025"
down_revision = "0023"


def upgrade() -> None:
    op.create_table(
        "operational_events",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("dedupe_key", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_operational_events_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operational_events")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_operational_events_dedupe_key")),
    )
    op.create_index(
        "ix_operational_events_unpublished",
        "operational_events",
        ["created_at"],
        postgresql_where=sa.text("published_at IS NULL"),
    )
    op.create_index(op.f("ix_operational_events_tenant_id"), "operational_events", ["tenant_id"], unique=False)
    op.add_column("webhook_targets", sa.Column("failing_level", sa.SmallInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("webhook_targets", "failing_level")
    op.drop_index("ix_operational_events_tenant_id", table_name="operational_events")
    op.drop_index("ix_operational_events_unpublished", table_name="operational_events")
    op.drop_table("operational_events")
