"""webhook attempts detail, target failing streaks, tenant webhook settings (revision 0009, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0007"


def upgrade() -> None:
    op.add_column("attempts", sa.Column("error_class", sa.Text(), nullable=True))
    op.add_column("attempts", sa.Column("response_headers", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column("attempts", sa.Column("response_excerpt", sa.Text(), nullable=True))
    op.create_index(
        "ix_jobs_failed_target_id_updated_at",
        "jobs",
        ["target_id", "updated_at"],
        unique=False,
        postgresql_where=sa.text("status = 'FAILED' AND target_id IS NOT NULL"),
    )
    op.add_column("tenants", sa.Column("webhook_settings", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column("webhook_targets", sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("webhook_targets", "failing_since")
    op.drop_column("tenants", "webhook_settings")
    op.drop_index(
        "ix_jobs_failed_target_id_updated_at",
        table_name="jobs",
        postgresql_where=sa.text("status = 'FAILED' AND target_id IS NOT NULL"),
    )
    op.drop_column("attempts", "response_excerpt")
    op.drop_column("attempts", "response_headers")
    op.drop_column("attempts", "error_class")
