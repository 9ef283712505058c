"""Jobs, attempts, job events and events partitioned by day; retention settings (revision 0023).

`jobs` and `events` become range-partitioned by their UUIDv7 id, `attempts` and `job_events`
by `job_id` over the same day ranges (herald_ledger.partitions), so ageing out a day is dropping
its partitions. An existing database is converted: each table is renamed aside, its partitioned
successor made with the same columns, a partition made for every day its rows hold (and the
days around today), the rows copied across, the old table dropped and the keys, indexes and
foreign keys (those of dead letters, provider events and platform emails included) made again.
The primary keys of `attempts` and `job_events` become (job_id, id): a partitioned table's keys
hold its partition column.

`events` can no longer hold (tenant, event id) unique across days, so de-duplication moves to
`event_claims`, one row per (tenant, event id) seen within the 24-hour window (the ledger's
maintenance prunes older ones). A job and an event say when their payload went
(`payload_expunged_at`); a tenant may have its own payload and row retention in days
(`tenants.payload_retention_days`, `row_retention_days`; NULL: its plan's); `payload_expiry`
keeps, per tenant, how far retention has expired payloads (ids below are done).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import sqlalchemy as sa
from alembic import op
from herald_ledger.partitions import DAY_OF_ID_SQL, PARTITIONED, create_partition_sql, days_ahead
from sqlalchemy.dialects import postgresql

revision = "0023"
down_revision = "0022"

# Keys and indexes made again on each table once its rows are in, as (partitioned, plain).
_PRIMARY = {
    "jobs": ("id", "id"),
    "attempts": ("job_id, id", "id"),
    "job_events": ("job_id, id", "id"),
    "events": ("id", "id"),
}
_INDEXES = {
    "jobs": [
        "CREATE INDEX ix_jobs_pending_updated_at ON jobs (updated_at) WHERE status = 'PENDING'",
        "CREATE INDEX ix_jobs_provider_message_id ON jobs (provider_message_id) WHERE provider_message_id IS NOT NULL",
        "CREATE INDEX ix_jobs_recoverable_target_id_updated_at ON jobs (target_id, updated_at) "
        "WHERE status IN ('FAILED', 'SKIPPED') AND target_id IS NOT NULL",
        "CREATE INDEX ix_jobs_tenant_id_event_id ON jobs (tenant_id, event_id) WHERE event_id IS NOT NULL",
        "CREATE INDEX ix_jobs_tenant_id_id ON jobs (tenant_id, id DESC)",
        "CREATE INDEX ix_jobs_tenant_id_idempotency_key ON jobs (tenant_id, idempotency_key)",
        "CREATE INDEX ix_jobs_tenant_id_ordering_key_seq ON jobs (tenant_id, ordering_key, seq) "
        "WHERE ordering_key IS NOT NULL",
        "CREATE INDEX ix_jobs_unsettled_due ON jobs (COALESCE(next_attempt_at, updated_at)) "
        "WHERE status IN ('QUEUED', 'DELIVERING')",
        "ALTER TABLE jobs ADD CONSTRAINT fk_jobs_tenant_id_tenants FOREIGN KEY (tenant_id) "
        "REFERENCES tenants (id) ON DELETE CASCADE",
    ],
    "attempts": [
        "CREATE INDEX ix_attempts_provider_message_id ON attempts (provider_message_id) "
        "WHERE provider_message_id IS NOT NULL",
        "ALTER TABLE attempts ADD CONSTRAINT fk_attempts_job_id_jobs FOREIGN KEY (job_id) "
        "REFERENCES jobs (id) ON DELETE CASCADE",
    ],
    "job_events": [
        "ALTER TABLE job_events ADD CONSTRAINT fk_job_events_job_id_jobs FOREIGN KEY (job_id) "
        "REFERENCES jobs (id) ON DELETE CASCADE",
    ],
    "events": [
        "CREATE INDEX ix_events_created_at ON events (created_at)",
        "CREATE INDEX ix_events_tenant_id_id ON events (tenant_id, id DESC)",
        "ALTER TABLE events ADD CONSTRAINT fk_events_tenant_id_tenants FOREIGN KEY (tenant_id) "
        "REFERENCES tenants (id) ON DELETE CASCADE",
    ],
}
# The plain tables' indexes the partitioned ones do without (the primary key leads with job_id),
# and the other way round.
_PLAIN_ONLY = {
    "attempts": ["CREATE INDEX ix_attempts_job_id ON attempts (job_id)"],
    "job_events": ["CREATE INDEX ix_job_events_job_id ON job_events (job_id)"],
    "events": ["ALTER TABLE events ADD CONSTRAINT uq_events_tenant_id_event_id UNIQUE (tenant_id, event_id)"],
}
_PARTITIONED_ONLY = {"events": ["CREATE INDEX ix_events_tenant_id_event_id ON events (tenant_id, event_id)"]}
# Foreign keys of unpartitioned tables to jobs: dropped with the old table, made again.
_REFERENCES_TO_JOBS = [
    "ALTER TABLE dead_letters ADD CONSTRAINT fk_dead_letters_job_id_jobs FOREIGN KEY (job_id) "
    "REFERENCES jobs (id) ON DELETE CASCADE",
    "ALTER TABLE inbound_events ADD CONSTRAINT fk_inbound_events_job_id_jobs FOREIGN KEY (job_id) "
    "REFERENCES jobs (id) ON DELETE SET NULL",
    "ALTER TABLE platform_emails ADD CONSTRAINT fk_platform_emails_id_jobs FOREIGN KEY (id) "
    "REFERENCES jobs (id) ON DELETE CASCADE",
]
_SEQUENCES = {
    "jobs": ("jobs_seq", "seq"),
    "attempts": ("attempts_id_seq", "id"),
    "job_events": ("job_events_id_seq", "id"),
}
_ORDER = ("jobs", "attempts", "job_events", "events")  # parents first when made, last when dropped


def _days(table: str, column: str) -> set[int]:
    """Days (since the epoch) the table's rows are in."""
    found = op.get_bind().execute(sa.text(f"SELECT DISTINCT {DAY_OF_ID_SQL.format(column=column)} FROM {table}"))  # noqa: S608
    return {int(day) for (day,) in found}


def _convert(partitioned: bool) -> None:
    """Every table of `_ORDER` made again, partitioned or plain, with its rows."""
    for table in _ORDER:
        op.execute(f"ALTER TABLE {table} RENAME TO {table}_before")
        shape = f" PARTITION BY RANGE ({PARTITIONED[table]})" if partitioned else ""
        op.execute(f"CREATE TABLE {table} (LIKE {table}_before INCLUDING DEFAULTS){shape}")
    if partitioned:
        epoch = date(1970, 1, 1)
        today = datetime.now(UTC).date()
        ahead = {(day - epoch).days for day in days_ahead(today)}
        job_days = ahead | _days("jobs_before", "id")
        for table, days in (
            ("jobs", job_days),
            ("attempts", job_days),
            ("job_events", job_days),
            ("events", ahead | _days("events_before", "id")),
        ):
            for day in sorted(days):
                op.execute(create_partition_sql(table, epoch + timedelta(days=day)))
    for table in _ORDER:
        columns = ", ".join(
            name
            for (name,) in op.get_bind().execute(
                sa.text(
                    "SELECT attname FROM pg_attribute WHERE attrelid = CAST(:t AS regclass) "
                    "AND attnum > 0 AND NOT attisdropped ORDER BY attnum"
                ),
                {"t": f"{table}_before"},
            )
        )
        op.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {table}_before")  # noqa: S608
    for sequence, _ in _SEQUENCES.values():
        op.execute(f"ALTER SEQUENCE {sequence} OWNED BY NONE")
    for table in reversed(_ORDER):
        op.execute(f"DROP TABLE {table}_before CASCADE")
    for table in _ORDER:
        key = _PRIMARY[table][0 if partitioned else 1]
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY ({key})")
        extra = _PARTITIONED_ONLY if partitioned else _PLAIN_ONLY
        for statement in _INDEXES[table] + extra.get(table, []):
            op.execute(statement)
    for statement in _REFERENCES_TO_JOBS:
        op.execute(statement)
    for table, (sequence, column) in _SEQUENCES.items():
        op.execute(f"ALTER SEQUENCE {sequence} OWNED BY {table}.{column}")


def upgrade() -> None:
    _convert(partitioned=True)
    op.add_column("jobs", sa.Column("payload_expunged_at", sa.DateTime(timezone=True)))
    op.add_column("events", sa.Column("payload_expunged_at", sa.DateTime(timezone=True)))
    op.add_column("tenants", sa.Column("payload_retention_days", sa.Integer()))
    op.add_column("tenants", sa.Column("row_retention_days", sa.Integer()))
    op.create_table(
        "event_claims",
        sa.Column("tenant_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name="fk_event_claims_tenant_id_tenants", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", "event_id", name="pk_event_claims"),
    )
    op.create_index("ix_event_claims_created_at", "event_claims", ["created_at"])
    op.execute(
        "INSERT INTO event_claims (tenant_id, event_id, id, created_at) "
        "SELECT tenant_id, event_id, id, created_at FROM events WHERE created_at > now() - interval '24 hours'"
    )
    op.create_table(
        "payload_expiry",
        sa.Column("tenant_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("jobs_before", postgresql.UUID(as_uuid=True)),
        sa.Column("events_before", postgresql.UUID(as_uuid=True)),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenants.id"], name="fk_payload_expiry_tenant_id_tenants", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("tenant_id", name="pk_payload_expiry"),
    )


def downgrade() -> None:
    op.drop_table("payload_expiry")
    op.drop_table("event_claims")
    op.drop_column("tenants", "row_retention_days")
    op.drop_column("tenants", "payload_retention_days")
    op.drop_column("events", "payload_expunged_at")
    op.drop_column("jobs", "payload_expunged_at")
    _convert(partitioned=False)
