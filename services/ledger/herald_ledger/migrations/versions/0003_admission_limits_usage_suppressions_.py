"""admission: limits, usage, suppressions, idempotency, ordering (revision 0003, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "idempotency_keys",
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("request_hash", sa.LargeBinary(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_idempotency_keys_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", "key", name=op.f("pk_idempotency_keys")),
    )
    op.create_table(
        "suppressions",
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("address", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("source_event_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_suppressions_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", "address", name=op.f("pk_suppressions")),
    )
    op.create_table(
        "usage_counters",
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("period", sa.Text(), nullable=False),
        sa.Column("webhooks", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("emails", sa.BigInteger(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_usage_counters_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", "period", name=op.f("pk_usage_counters")),
    )
    op.add_column("jobs", sa.Column("ordering_key", sa.Text(), nullable=True))
    op.create_index(
        "ix_jobs_tenant_id_ordering_key_id",
        "jobs",
        ["tenant_id", "ordering_key", "id"],
        unique=False,
        postgresql_where=sa.text("ordering_key IS NOT NULL"),
    )
    op.add_column("tenants", sa.Column("rate_per_min", sa.Integer(), nullable=True))
    op.add_column("tenants", sa.Column("webhooks_per_month", sa.Integer(), nullable=True))
    op.add_column("tenants", sa.Column("emails_per_month", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("tenants", "emails_per_month")
    op.drop_column("tenants", "webhooks_per_month")
    op.drop_column("tenants", "rate_per_min")
    op.drop_index(
        "ix_jobs_tenant_id_ordering_key_id", table_name="jobs", postgresql_where=sa.text("ordering_key IS NOT NULL")
    )
    op.drop_column("jobs", "ordering_key")
    op.drop_table("usage_counters")
    op.drop_table("suppressions")
    op.drop_table("idempotency_keys")
