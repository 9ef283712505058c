"""events keep their payload; jobs name their event (revision 0022).

The event log: an event row keeps the payload and content type it came with (written by the
same INSERT that claims the event id, no extra round trip), and the ordering key it asked
for. A job fanned out from an event names it (`jobs.event_id`, the tenant's event id), so
the event's deliveries (fan-out, skipped, replays, resends) are one indexed read; a resend
names the job it sends again (`jobs.origin_job_id`). A target's recovery finds its FAILED
and SKIPPED deliveries by one partial index (it replaces the FAILED-only one).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"


def upgrade() -> None:
    op.add_column("events", sa.Column("payload", sa.LargeBinary(), nullable=True))
    op.add_column("events", sa.Column("content_type", sa.Text(), nullable=True))
    op.add_column("events", sa.Column("ordering_key", sa.Text(), nullable=True))
    op.create_index("ix_events_tenant_id_id", "events", ["tenant_id", sa.text("id DESC")])
    op.add_column("jobs", sa.Column("event_id", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("origin_job_id", sa.UUID(), nullable=True))
    op.create_index(
        "ix_jobs_tenant_id_event_id",
        "jobs",
        ["tenant_id", "event_id"],
        postgresql_where=sa.text("event_id IS NOT NULL"),
    )
    op.create_index(
        "ix_jobs_recoverable_target_id_updated_at",
        "jobs",
        ["target_id", "updated_at"],
        postgresql_where=sa.text("status IN ('FAILED', 'SKIPPED') AND target_id IS NOT NULL"),
    )
    op.drop_index(
        "ix_jobs_failed_target_id_updated_at",
        table_name="jobs",
        postgresql_where=sa.text("status = 'FAILED' AND target_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.create_index(
        "ix_jobs_failed_target_id_updated_at",
        "jobs",
        ["target_id", "updated_at"],
        postgresql_where=sa.text("status = 'FAILED' AND target_id IS NOT NULL"),
    )
    op.drop_index("ix_jobs_recoverable_target_id_updated_at", table_name="jobs")
    op.drop_index("ix_jobs_tenant_id_event_id", table_name="jobs")
    op.drop_column("jobs", "origin_job_id")
    op.drop_column("jobs", "event_id")
    op.drop_index("ix_events_tenant_id_id", table_name="events")
    op.drop_column("events", "ordering_key")
    op.drop_column("events", "content_type")
    op.drop_column("events", "payload")
