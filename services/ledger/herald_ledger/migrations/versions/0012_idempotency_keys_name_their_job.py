"""idempotency keys name their job

A key sent with a job is written in the job's own transaction (state "job") and
names the job, so a repeat answers with that job instead of a stored response.

Revision ID: 0012
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("idempotency_keys", sa.Column("job_id", postgresql.UUID(as_uuid=True), nullable=True))


def downgrade() -> None:
    op.drop_column("idempotency_keys", "job_id")
