"""jobs take their order from PostgreSQL (revision 0016).

Jobs sharing an ordering key were ordered by id, a UUIDv7 minted from the clock of
whichever ledger replica took the job: with two replicas whose clocks differ by more
than the time between two submissions, the later job could sort first and be
delivered first. `jobs.seq` comes from one sequence of the database instead, drawn
while the row is inserted (a column DEFAULT, so the hot path's COPY fills it without
naming it): a job accepted after another one committed always has the larger number,
whichever replica took either. The sequence keeps CACHE 1: cached blocks per
connection would hand two connections interleaved, out-of-time-order ranges.

Rows from before this migration that carry an ordering key are numbered in id order,
the order they had; the others keep NULL (no order is asked of them).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.execute("CREATE SEQUENCE jobs_seq AS bigint CACHE 1")
    op.add_column("jobs", sa.Column("seq", sa.BigInteger(), nullable=True))
    op.execute(
        """
        UPDATE jobs SET seq = numbered.n
        FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM jobs WHERE ordering_key IS NOT NULL) numbered
        WHERE jobs.id = numbered.id
        """
    )
    op.execute("SELECT setval('jobs_seq', COALESCE((SELECT max(seq) FROM jobs), 0) + 1, false)")
    op.execute("ALTER TABLE jobs ALTER COLUMN seq SET DEFAULT nextval('jobs_seq')")
    op.execute("ALTER SEQUENCE jobs_seq OWNED BY jobs.seq")
    op.create_index(
        "ix_jobs_tenant_id_ordering_key_seq",
        "jobs",
        ["tenant_id", "ordering_key", "seq"],
        postgresql_where=sa.text("ordering_key IS NOT NULL"),
    )
    op.drop_index(
        "ix_jobs_tenant_id_ordering_key_id", table_name="jobs", postgresql_where=sa.text("ordering_key IS NOT NULL")
    )


def downgrade() -> None:
    op.create_index(
        "ix_jobs_tenant_id_ordering_key_id",
        "jobs",
        ["tenant_id", "ordering_key", "id"],
        postgresql_where=sa.text("ordering_key IS NOT NULL"),
    )
    op.drop_index(
        "ix_jobs_tenant_id_ordering_key_seq", table_name="jobs", postgresql_where=sa.text("ordering_key IS NOT NULL")
    )
    op.drop_column("jobs", "seq")  # the sequence it owns goes with it
