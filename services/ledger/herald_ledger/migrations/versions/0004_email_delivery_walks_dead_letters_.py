"""email delivery: walks, dead letters, sending domains, platform email (revision 0004, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "dead_letters",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("channel", sa.Text(), nullable=False),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("stream_sequence", sa.BigInteger(), nullable=True),
        sa.Column("dead_lettered_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("retried_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"], name=op.f("fk_dead_letters_job_id_jobs"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_dead_letters_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dead_letters")),
    )
    op.create_index(op.f("ix_dead_letters_job_id"), "dead_letters", ["job_id"], unique=False)
    op.create_index(
        "ix_dead_letters_waiting",
        "dead_letters",
        ["dead_lettered_at"],
        unique=False,
        postgresql_where=sa.text("retried_at IS NULL"),
    )
    op.create_table(
        "platform_emails",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("dedupe_key", sa.Text(), nullable=False),
        sa.Column("recipient", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("provider_message_id", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["id"], ["jobs.id"], name=op.f("fk_platform_emails_id_jobs"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_platform_emails_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_platform_emails")),
        sa.UniqueConstraint("dedupe_key", name=op.f("uq_platform_emails_dedupe_key")),
    )
    op.create_index(op.f("ix_platform_emails_tenant_id"), "platform_emails", ["tenant_id"], unique=False)
    op.create_table(
        "sending_domains",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("provider_id", sa.UUID(), nullable=True),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("provider_domain_id", sa.Text(), nullable=False),
        sa.Column("verified", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("records", postgresql.JSONB(astext_type=sa.Text()), server_default="[]", nullable=False),
        sa.Column("provider_status", sa.Text(), server_default="", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("verified_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["provider_id"],
            ["provider_credentials.id"],
            name=op.f("fk_sending_domains_provider_id_provider_credentials"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_sending_domains_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sending_domains")),
        sa.UniqueConstraint("tenant_id", "name", name=op.f("uq_sending_domains_tenant_id_name")),
    )
    op.add_column("attempts", sa.Column("provider_id", sa.Text(), nullable=True))
    op.add_column("attempts", sa.Column("provider_message_id", sa.Text(), nullable=True))
    op.add_column("attempts", sa.Column("walk", sa.Integer(), nullable=True))
    op.create_index(
        "ix_attempts_provider_message_id",
        "attempts",
        ["provider_message_id"],
        unique=False,
        postgresql_where=sa.text("provider_message_id IS NOT NULL"),
    )
    op.add_column("jobs", sa.Column("run", sa.Integer(), server_default="0", nullable=False))
    op.add_column("jobs", sa.Column("provider_id", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("provider_message_id", sa.Text(), nullable=True))
    op.create_index(
        "ix_jobs_provider_message_id",
        "jobs",
        ["provider_message_id"],
        unique=False,
        postgresql_where=sa.text("provider_message_id IS NOT NULL"),
    )
    op.add_column("tenants", sa.Column("contact_email", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("tenants", "contact_email")
    op.drop_index(
        "ix_jobs_provider_message_id", table_name="jobs", postgresql_where=sa.text("provider_message_id IS NOT NULL")
    )
    op.drop_column("jobs", "provider_message_id")
    op.drop_column("jobs", "provider_id")
    op.drop_column("jobs", "run")
    op.drop_index(
        "ix_attempts_provider_message_id",
        table_name="attempts",
        postgresql_where=sa.text("provider_message_id IS NOT NULL"),
    )
    op.drop_column("attempts", "walk")
    op.drop_column("attempts", "provider_message_id")
    op.drop_column("attempts", "provider_id")
    op.drop_table("sending_domains")
    op.drop_index(op.f("ix_platform_emails_tenant_id"), table_name="platform_emails")
    op.drop_table("platform_emails")
    op.drop_index("ix_dead_letters_waiting", table_name="dead_letters", postgresql_where=sa.text("retried_at IS NULL"))
    op.drop_index(op.f("ix_dead_letters_job_id"), table_name="dead_letters")
    op.drop_table("dead_letters")
