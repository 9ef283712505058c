"""provider events move email jobs (revision 0010, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("provider_delivered_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("status_event_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("jobs", sa.Column("status_event_id", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "status_event_id")
    op.drop_column("jobs", "status_event_at")
    op.drop_column("jobs", "provider_delivered_at")
