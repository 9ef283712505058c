"""Migration 0023 on a database with rows made by the schema before it: jobs, attempts, job events
and events move into the day partitions of their ids, every row and key is kept, the foreign keys
hold again, an event id seen within the window is still de-duplicated, and new rows of today
find their partition."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from alembic import command
from herald_ledger.migrate import alembic_config
from herald_ledger.partitions import JOB_CHILDREN, PARTITIONED, create_partition_sql, partition_name

from tests.support.infra import query, separate_database
from tests.test_retention import uuid7_at

NEW_ATTEMPT = (
    "INSERT INTO attempts (job_id, number, target, outcome, duration_ms, started_at) "
    "VALUES ($1, 2, 'https://example.com', 'succeeded', 1, now())"
)


def test_an_existing_database_moves_into_day_partitions(infra: dict[str, str]) -> None:
    with separate_database(infra["database_url"], "partition_migration") as database_url:
        command.upgrade(alembic_config(database_url), "0022")
        tenant = uuid.uuid4()
        query(database_url, "INSERT INTO tenants (id, name, plan) VALUES ($1, 'before', 'startup')", tenant)
        days = {3: datetime.now(UTC) - timedelta(days=3), 0: datetime.now(UTC)}
        jobs = {age: uuid7_at(moment) for age, moment in days.items()}
        for age, job_id in jobs.items():
            query(
                database_url,
                "INSERT INTO jobs (id, tenant_id, channel, status, priority, request, body, idempotency_key) "
                "VALUES ($1, $2, 'webhook', 'FAILED', 'normal', '{\"url\": \"https://example.com\"}', $3, $4)",
                job_id,
                tenant,
                f"body-{age}".encode(),
                f"key-{age}",
            )
            query(
                database_url,
                "INSERT INTO attempts (job_id, number, target, outcome, duration_ms, started_at) "
                "VALUES ($1, 1, 'https://example.com', 'permanent_failure', 3, now())",
                job_id,
            )
            query(database_url, "INSERT INTO job_events (job_id, to_status) VALUES ($1, 'FAILED')", job_id)
            query(
                database_url,
                "INSERT INTO events (id, tenant_id, event_id, event_type, payload, created_at) "
                "VALUES ($1, $2, $3, 't.v1', 'p', $4)",
                uuid7_at(days[age]),
                tenant,
                f"event-{age}",
                days[age],
            )
        query(
            database_url,
            "INSERT INTO dead_letters (job_id, tenant_id, channel, run, attempts, error) "
            "VALUES ($1, $2, 'webhook', 0, 3, 'gave up')",
            jobs[3],
            tenant,
        )
        [before] = query(database_url, "SELECT max(id) FROM attempts")

        command.upgrade(alembic_config(database_url), "0023")

        for age, job_id in jobs.items():
            expected = partition_name("jobs", days[age].date())
            [row] = query(database_url, "SELECT tableoid::regclass::text, body FROM jobs WHERE id = $1", job_id)
            assert row[0] == expected and bytes(row[1]) == f"body-{age}".encode()
            [attempt] = query(database_url, "SELECT tableoid::regclass::text FROM attempts WHERE job_id = $1", job_id)
            assert attempt[0] == partition_name("attempts", days[age].date())
            assert query(database_url, "SELECT count(*) FROM job_events WHERE job_id = $1", job_id)[0][0] == 1
        [event] = query(database_url, "SELECT tableoid::regclass::text FROM events WHERE event_id = 'event-3'")
        assert event[0] == partition_name("events", days[3].date())
        # The keys and foreign keys hold: an attempt of no job is refused, the sequence goes on.
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            query(database_url, NEW_ATTEMPT, uuid7_at(datetime.now(UTC)))
        query(database_url, NEW_ATTEMPT, jobs[0])
        assert query(database_url, "SELECT max(id) FROM attempts")[0][0] > before[0]
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            query(
                database_url,
                "INSERT INTO dead_letters (job_id, tenant_id, channel, run, attempts, error) "
                "VALUES ($1, $2, 'webhook', 0, 3, 'x')",
                uuid7_at(datetime.now(UTC)),
                tenant,
            )
        # Deleting a job still takes its attempts, history and dead letters with it.
        query(database_url, "DELETE FROM jobs WHERE id = $1", jobs[3])
        assert query(database_url, "SELECT count(*) FROM attempts WHERE job_id = $1", jobs[3])[0][0] == 0
        assert query(database_url, "SELECT count(*) FROM dead_letters")[0][0] == 0
        # Today's event is claimed for the de-duplication window; the one of 3 days ago is past it.
        claims = query(database_url, "SELECT event_id FROM event_claims WHERE tenant_id = $1", tenant)
        assert [c[0] for c in claims] == ["event-0"]
        # Today's and the coming days' partitions exist.
        ahead = partition_name("jobs", (datetime.now(UTC) + timedelta(days=7)).date())
        assert query(database_url, "SELECT count(*) FROM pg_class WHERE relname = $1", ahead)[0][0] == 1

        # And back: the plain tables again, with every row left.
        command.downgrade(alembic_config(database_url), "0022")
        assert query(database_url, "SELECT count(*) FROM jobs")[0][0] == 1
        assert query(database_url, "SELECT relkind::text FROM pg_class WHERE relname = 'jobs'")[0][0] == "r"


JOB_KEYS = """
    SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent FROM pg_constraint
    WHERE contype = 'f' AND conrelid::regclass::text ~ '^(attempts|job_events)' AND conparentid = 0
"""


def test_a_jobs_rows_refer_to_its_day_of_jobs(infra: dict[str, str]) -> None:
    """Migration 0027: the keys of attempts and job events go from day to day (each day's rows to
    that day of jobs) and still refuse a row of no job and go with their job; and back."""
    with separate_database(infra["database_url"], "job_keys") as database_url:
        command.upgrade(alembic_config(database_url), "0026")
        tenant = uuid.uuid4()
        query(database_url, "INSERT INTO tenants (id, name, plan) VALUES ($1, 'keys', 'startup')", tenant)
        made = datetime.now(UTC) - timedelta(days=3)
        for table in PARTITIONED:
            query(database_url, create_partition_sql(table, made.date()))
        job_id = uuid7_at(made)
        query(
            database_url,
            "INSERT INTO jobs (id, tenant_id, channel, status, priority, request, body) "
            "VALUES ($1, $2, 'webhook', 'FAILED', 'normal', '{}', 'x')",
            job_id,
            tenant,
        )
        query(database_url, NEW_ATTEMPT, job_id)
        query(database_url, "INSERT INTO job_events (job_id, to_status) VALUES ($1, 'FAILED')", job_id)

        command.upgrade(alembic_config(database_url), "0027")
        keys = {(row["child"], row["parent"]) for row in query(database_url, JOB_KEYS)}
        for day in (made.date(), datetime.now(UTC).date()):
            for child in JOB_CHILDREN:
                assert (partition_name(child, day), partition_name("jobs", day)) in keys
        assert not {parent for _, parent in keys} & {"jobs"}, "no key from parent to parent is left"
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            query(database_url, NEW_ATTEMPT, uuid7_at(datetime.now(UTC)))
        query(database_url, "DELETE FROM jobs WHERE id = $1", job_id)
        for child in JOB_CHILDREN:
            assert query(database_url, f"SELECT count(*) FROM {child} WHERE job_id = $1", job_id)[0][0] == 0

        command.downgrade(alembic_config(database_url), "0026")
        assert {row["parent"] for row in query(database_url, JOB_KEYS)} == {"jobs"}
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            query(database_url, NEW_ATTEMPT, uuid7_at(datetime.now(UTC)))
