"""secrets and provider credentials (revision 0002, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "provider_credentials",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("base_url", sa.Text(), server_default="", nullable=False),
        sa.Column("options", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False),
        sa.Column("smtp_host", sa.Text(), nullable=True),
        sa.Column("smtp_port", sa.Integer(), nullable=True),
        sa.Column("smtp_username", sa.Text(), nullable=True),
        sa.Column("smtp_tls_mode", sa.Text(), nullable=True),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_provider_credentials_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_credentials")),
    )
    op.create_index(op.f("ix_provider_credentials_tenant_id"), "provider_credentials", ["tenant_id"], unique=False)
    op.create_table(
        "webhook_secrets",
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("sealed_current", sa.LargeBinary(), nullable=False),
        sa.Column("current_key_id", sa.Text(), nullable=False),
        sa.Column("sealed_previous", sa.LargeBinary(), nullable=True),
        sa.Column("previous_key_id", sa.Text(), nullable=True),
        sa.Column("previous_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("rotated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name=op.f("fk_webhook_secrets_tenant_id_tenants"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_webhook_secrets")),
    )


def downgrade() -> None:
    op.drop_table("webhook_secrets")
    op.drop_index(op.f("ix_provider_credentials_tenant_id"), table_name="provider_credentials")
    op.drop_table("provider_credentials")
