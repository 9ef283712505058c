"""A job's attempts and history refer to its day of `jobs`, not to `jobs` (revision 0027).

The foreign keys of `attempts` and `job_events` to `jobs` become one per day, from each day's
partition to that day's partition of `jobs` (`herald_ledger.partitions.job_key_sql`): checking a
parent-to-parent key looked every inserted row's job up through a plan over every day of `jobs`,
and PostgreSQL 15 locks all of them at each check, so every attempt cost more the more days were
kept. The rows are the same (a job's rows live in its day); the existing days are checked as
their keys are made, which reads each day's rows once.
"""

from __future__ import annotations

from alembic import op
from herald_ledger.partitions import JOB_CHILDREN, day_of_partition, job_key_sql
from sqlalchemy import text

revision = "0027"
down_revision = "0026"

_DAYS = (
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = CAST(:t AS regclass)"
)


def upgrade() -> None:
    for table in JOB_CHILDREN:
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT fk_{table}_job_id_jobs")
        for name in op.get_bind().execute(text(_DAYS), {"t": table}).scalars().all():
            day = day_of_partition(table, name)
            if day is not None:
                op.execute(job_key_sql(table, day))


def downgrade() -> None:
    for table in JOB_CHILDREN:
        for name in op.get_bind().execute(text(_DAYS), {"t": table}).scalars().all():
            op.execute(f"ALTER TABLE {name} DROP CONSTRAINT IF EXISTS fk_{name}_job_id")
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT fk_{table}_job_id_jobs FOREIGN KEY (job_id) "
            "REFERENCES jobs (id) ON DELETE CASCADE"
        )
