"""plans end at the period's end; idempotency keys pruned by age (revision 0015).

A cancellation that lets the paid period run out (Paystack subscription.not_renew, Polar
subscription.canceled) keeps the plan until then: `tenants.plan_ends_at` says when the
ledger's maintenance puts the tenant back on free. The same maintenance deletes idempotency
keys past their 24 hours, by `created_at` (indexed, so it never scans the table).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0012"


def upgrade() -> None:
    op.add_column("tenants", sa.Column("plan_ends_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "tenants_plan_ends_at", "tenants", ["plan_ends_at"], postgresql_where=sa.text("plan_ends_at IS NOT NULL")
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_index("tenants_plan_ends_at", table_name="tenants")
    op.drop_column("tenants", "plan_ends_at")
