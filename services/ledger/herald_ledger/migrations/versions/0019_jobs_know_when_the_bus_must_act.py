"""jobs know when the bus must have acted on them (revision 0019).

A job's row says QUEUED once the bus acknowledged its work message, and JetStream keeps
the message; the ledger trusted that. A purged, deleted or expired stream loses messages
the rows still call QUEUED, and nothing brought them back. The reconciler
(`herald_ledger.reconciler`) finds jobs the bus should have acted on by now and publishes
them again. It needs to know, per job, when that is: a fresh job's work is due at once
(its `updated_at`, the commit), a retry's at `next_attempt_at` (written with the retry).
The index orders the unsettled jobs by that time, so a pass reads only the overdue ones.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_jobs_unsettled_due",
        "jobs",
        [sa.text("COALESCE(next_attempt_at, updated_at)")],
        postgresql_where=sa.text("status IN ('QUEUED', 'DELIVERING')"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_jobs_unsettled_due", table_name="jobs", postgresql_where=sa.text("status IN ('QUEUED', 'DELIVERING')")
    )
    op.drop_column("jobs", "next_attempt_at")
