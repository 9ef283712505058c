"""idempotency keys name their job (revision 0012).

A key sent with a job is written in the job's own transaction (state "job") and
names the job, so a repeat answers with that job instead of a stored response.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0010"


def upgrade() -> None:
    op.add_column("idempotency_keys", sa.Column("job_id", postgresql.UUID(as_uuid=True), nullable=True))


def downgrade() -> None:
    op.drop_column("idempotency_keys", "job_id")
