"""webhook targets bound their calls in flight, and jobs say why they wait (revision 0018).

`webhook_targets.max_in_flight`: how many calls to the target a webhook-sender replica makes at
once; NULL means the operator's default (HERALD_WEBHOOK_TARGET_IN_FLIGHT).
`jobs.waiting_reason` and `jobs.waiting_noted_at`: why a sender holds a QUEUED job back without
a call (its target at its bound, its circuit open), and when it said so; shown until the job's
next attempt is recorded (`updated_at` after it). Nullable columns without defaults: adding them
rewrites nothing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.add_column("webhook_targets", sa.Column("max_in_flight", sa.Integer(), nullable=True))
    op.add_column("jobs", sa.Column("waiting_reason", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("waiting_noted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "waiting_noted_at")
    op.drop_column("jobs", "waiting_reason")
    op.drop_column("webhook_targets", "max_in_flight")
