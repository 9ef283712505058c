"""Jobs that must wait long are held by the ledger, off the bus (revision 0028).

A work message NAKed with a delay stays unacknowledged on its consumer, and a consumer (one
fairness lane) delivers nothing new while `max_ack_pending` of its messages are unacknowledged:
one tenant's backlog to a dead target, cycling through retries and breaker holds, stopped every
tenant on its lane. A long retry, and a delivery held by its target's open circuit, are now
acknowledged and parked here instead: `parked_on` says so ('' for a retry, the sender's call
lane for a circuit hold, so a lane that answers again releases its jobs at once), and
`next_attempt_at` says when the reconciler publishes the job again at the latest.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("parked_on", sa.Text(), nullable=True))
    op.create_index(
        "ix_jobs_parked_due", "jobs", ["next_attempt_at"], postgresql_where=sa.text("parked_on IS NOT NULL")
    )
    op.create_index(
        "ix_jobs_tenant_id_parked_on",
        "jobs",
        ["tenant_id", "parked_on"],
        postgresql_where=sa.text("parked_on IS NOT NULL AND parked_on <> ''"),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_tenant_id_parked_on", table_name="jobs")
    op.drop_index("ix_jobs_parked_due", table_name="jobs")
    op.drop_column("jobs", "parked_on")
