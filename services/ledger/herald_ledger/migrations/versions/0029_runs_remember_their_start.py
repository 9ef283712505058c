"""A rerun remembers when it began (revision 0029).

A delivery an open circuit holds fails when its retry window ends, counted from when the job
was accepted (its id's time). An explicit retry starts a new run of the same job, whose window
must count from the retry: `run_started_at`, set by the retry, carried in the work message.
NULL for the first run.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("run_started_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "run_started_at")
