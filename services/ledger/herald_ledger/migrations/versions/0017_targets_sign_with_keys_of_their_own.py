"""webhook targets sign with keys of their own (revision 0017).

Until now one secret per tenant signed every delivery, so a receiver able to verify could
also forge for the tenant's other targets. `target_signing_keys` holds each target's own
sealed keys (the current one per algorithm, and rotated-out ones until they expire).

A migration cannot seal (the master keys live with the ledger, not here), so a target
from before this revision gets its own key from the ledger the first time one is asked
for (its secret read, its rotation, or its first delivery). Such targets are marked
`tenant_secret_signs`: the migration cannot know which receivers hold the tenant's
secret, so it signs beside the target's own key until the target's first rotation.

Targets' custom header values are sealed too (`sealed_headers`, `headers` then masked). For
the same reason a target saved before keeps its headers as they were until they are next set
or `herald keys rotate` seals them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    op.add_column(
        "webhook_targets",
        sa.Column("tenant_secret_signs", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.execute("UPDATE webhook_targets SET tenant_secret_signs = true")
    op.add_column("webhook_targets", sa.Column("sealed_headers", sa.LargeBinary(), nullable=True))
    op.create_table(
        "target_signing_keys",
        sa.Column("id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("tenant_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("target_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("algorithm", sa.Text(), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.Column("public_key", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name="fk_target_signing_keys_tenant_id_tenants", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["webhook_targets.id"],
            name="fk_target_signing_keys_target_id_webhook_targets",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_target_signing_keys"),
    )
    op.create_index("ix_target_signing_keys_target_id", "target_signing_keys", ["target_id"])
    op.create_index(
        "uq_target_signing_keys_current",
        "target_signing_keys",
        ["target_id", "algorithm"],
        unique=True,
        postgresql_where=sa.text("expires_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_table("target_signing_keys")
    op.drop_column("webhook_targets", "sealed_headers")
    op.drop_column("webhook_targets", "tenant_secret_signs")
