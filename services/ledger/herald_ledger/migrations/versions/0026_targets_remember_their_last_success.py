"""A target remembers when its receiver last accepted a delivery (revision 0026).

`webhook_targets.last_success_at` is written with the success reports the webhook-sender
already sends, at most once a minute per target, so its health reads "last success" without
scanning the jobs table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"


def upgrade() -> None:
    op.add_column("webhook_targets", sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("webhook_targets", "last_success_at")
