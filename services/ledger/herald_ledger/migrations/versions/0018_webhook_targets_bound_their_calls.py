"""webhook targets bound their calls in flight (revision 0018).

`webhook_targets.max_in_flight`: how many calls to the target a webhook-sender replica makes at
once; NULL means the operator's default (HERALD_WEBHOOK_TARGET_IN_FLIGHT). A nullable column
without a default: adding it rewrites nothing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0016"


def upgrade() -> None:
    op.add_column("webhook_targets", sa.Column("max_in_flight", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("webhook_targets", "max_in_flight")
