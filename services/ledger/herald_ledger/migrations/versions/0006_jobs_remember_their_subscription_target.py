"""jobs remember their subscription target (revision 0006, 2026-11-30)."""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("target_id", sa.UUID(), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "target_id")
