"""Retention: a tenant's payloads and rows age out after its plan's days or the operator's override
(set over HTTP, gRPC and the CLI). Rows made days ago (old UUIDv7 ids, written straight into their
day's partition) go through one round of the ledger's retention: a payload past its retention is
gone from the API and the database while the job still answers; a row past its tenant's shorter
retention is gone while another tenant's of the same day stays; a day past the longest retention
in force is a dropped partition."""

from __future__ import annotations

import asyncio
import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import grpc
import httpx
from herald_ledger.db.engine import create_engine
from herald_ledger.partitions import PARTITIONED, day_sql, partition_name
from herald_ledger.retention import Retention, RoundReport

from herald.cli.stack import Stack
from herald.config import Settings
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant
from tests.support.infra import query
from tests.test_operators import Cli, cli  # noqa: F401 (the fixture)


def uuid7_at(moment: datetime) -> uuid.UUID:
    """A UUIDv7 made at `moment`: its first 48 bits are the milliseconds, then version and variant."""
    value = (int(moment.timestamp() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    return uuid.UUID(int=(value & ~(0x3 << 62)) | (0x2 << 62))


def old_job(database_url: str, tenant_id: str, days_ago: float, dead_letter: bool = False) -> str:
    """A delivered webhook job with an attempt (response excerpt and headers) and an event, made
    `days_ago`, in its day's partitions, in one transaction (the stack's retention may drop an
    old day's partition the moment it is committed, rows and all)."""
    made = datetime.now(UTC) - timedelta(days=days_ago)
    job_id, event_row, tenant = uuid7_at(made), uuid7_at(made), uuid.UUID(tenant_id)
    request = '{"url": "https://example.com/hook", "headers": {"x-card": "4242"}, "content_type": "application/json"}'
    statements: list[tuple[str, tuple[Any, ...]]] = [(sql, ()) for t in PARTITIONED for sql in day_sql(t, made.date())]
    statements += [
        (
            "INSERT INTO jobs (id, tenant_id, channel, status, priority, request, body, created_at, updated_at, "
            "event_id) VALUES ($1, $2, 'webhook', 'DELIVERED', 'normal', $3::jsonb, 'old secret', $4, $4, $5)",
            (job_id, tenant, request, made, f"old-{job_id}"),
        ),
        (
            "INSERT INTO attempts (job_id, number, target, outcome, status_code, duration_ms, started_at, "
            "response_excerpt, response_headers) VALUES "
            "($1, 1, 'https://example.com/hook', 'succeeded', 200, 5, $2, 'thanks for 4242', '{\"x\": \"y\"}')",
            (job_id, made),
        ),
        (
            "INSERT INTO events (id, tenant_id, event_id, event_type, payload, content_type, created_at) "
            "VALUES ($1, $2, $3, 'old.v1', 'old event secret', 'application/json', $4)",
            (event_row, tenant, f"old-{job_id}", made),
        ),
    ]
    if dead_letter:
        statements.append(
            (
                "INSERT INTO dead_letters (job_id, tenant_id, channel, run, attempts, error) "
                "VALUES ($1, $2, 'webhook', 0, 5, 'gave up')",
                (job_id, tenant),
            )
        )

    async def write() -> None:
        connection = await asyncpg.connect(database_url)
        try:
            async with connection.transaction():
                for sql, args in statements:
                    await connection.execute(sql, *args)
        finally:
            await connection.close()

    asyncio.run(write())
    return str(job_id)


def old_audit_entry(database_url: str, tenant_id: str, days_ago: float) -> uuid.UUID:
    entry = uuid7_at(datetime.now(UTC) - timedelta(days=days_ago))
    query(
        database_url,
        "INSERT INTO audit_log (id, tenant_id, actor_kind, actor_id, actor_name, action) "
        "VALUES ($1, $2, 'key', 'k', 'old key', 'POST /v1/webhooks/targets')",
        entry,
        uuid.UUID(tenant_id),
    )
    return entry


def run_retention(database_url: str) -> RoundReport:
    """One round, as a ledger replica's maintenance runs it (the stack's may run one as well: they
    take turns on an advisory lock and do the same)."""

    async def one_round() -> RoundReport:
        engine = create_engine(database_url, pool_size=2)
        try:
            retention = Retention(engine, Settings())
            while (report := await retention.run()).skipped:  # the stack's ledger holds the turn
                await asyncio.sleep(0.2)
            return report
        finally:
            await engine.dispose()

    return asyncio.run(one_round())


def stored(database_url: str, job_id: str) -> dict[str, Any] | None:
    rows = query(
        database_url,
        "SELECT j.body, j.request::text AS request, j.payload_expunged_at, a.response_excerpt, e.payload AS event "
        "FROM jobs j JOIN attempts a ON a.job_id = j.id LEFT JOIN events e ON e.event_id = j.event_id "
        "WHERE j.id = $1",
        uuid.UUID(job_id),
    )
    return dict(rows[0]) if rows else None


def set_retention(gateway: str, operator_token: str, tenant: TenantKey, **days: int | str) -> dict[str, Any]:
    response = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json=days,
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert response.status_code == 200, response.text
    limits: dict[str, Any] = response.json()["limits"]
    return limits


def test_overrides_are_set_over_http_grpc_and_the_cli(
    gateway: str,
    operator_token: str,
    stack: Stack,
    cli: Cli,  # noqa: F811
) -> None:
    tenant = create_tenant(gateway, operator_token, "retention-overrides", plan="free")
    assert set_retention(gateway, operator_token, tenant, payload_retention_days=2, row_retention_days=5) == {
        "payload_retention_days": 2,
        "row_retention_days": 5,
    }
    refused = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"row_retention_days": 0},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert refused.status_code == 422
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        answer = gateway_pb2_grpc.AdminServiceStub(channel).SetTenantLimits(
            gateway_pb2.AdminServiceSetTenantLimitsRequest(tenant_id=tenant.tenant_id, payload_retention_days=3),
            metadata=(("authorization", f"Bearer {operator_token}"),),
        )
    assert answer.tenant.payload_retention_days == 3 and answer.tenant.row_retention_days == 5
    shown = cli("tenant", "set-limits", tenant.tenant_id, "--row-retention-days", "plan")
    assert shown["payload_retention_days"] == 3 and "row_retention_days" not in shown


def test_payloads_and_rows_age_out_by_each_tenants_retention(
    gateway: str, operator_token: str, infra: dict[str, str]
) -> None:
    database_url = infra["database_url"]
    short = create_tenant(gateway, operator_token, "retention-short")
    kept = create_tenant(gateway, operator_token, "retention-kept")  # startup: 90 days of both
    recent, older, oldest = (old_job(database_url, short.tenant_id, days) for days in (0.01, 2, 4))
    neighbour = old_job(database_url, kept.tenant_id, 4)  # the same day as `oldest`
    audit = {tenant.tenant_id: old_audit_entry(database_url, tenant.tenant_id, 4) for tenant in (short, kept)}
    # Set once the rows are in: a round that ran before has passed its plan's 90 days only.
    set_retention(gateway, operator_token, short, payload_retention_days=1, row_retention_days=3)

    run_retention(database_url)

    # Past the short tenant's payload retention: the row answers, its payload is gone.
    job = httpx.get(f"{gateway}/v1/jobs/{older}", headers=short.headers).json()
    assert job["status"] == "delivered" and job["payload_expunged_at"] is not None
    assert [a["outcome"] for a in job["attempts"]] == ["succeeded"] and job["attempts"][0]["response_excerpt"] is None
    gone = stored(database_url, older)
    assert gone is not None and bytes(gone["body"]) == b"" and "4242" not in gone["request"]
    assert gone["response_excerpt"] is None and gone["event"] is None
    event = httpx.get(f"{gateway}/v1/events/old-{older}", headers=short.headers).json()
    assert event["payload_expunged_at"] is not None and event["payload_base64"] is None
    # Past its row retention: gone. Within both: untouched.
    assert httpx.get(f"{gateway}/v1/jobs/{oldest}", headers=short.headers).status_code == 404
    assert stored(database_url, oldest) is None
    assert httpx.get(f"{gateway}/v1/events/old-{oldest}", headers=short.headers).status_code == 404
    fresh = stored(database_url, recent)
    assert fresh is not None and bytes(fresh["body"]) == b"old secret" and fresh["payload_expunged_at"] is None
    # Another tenant's row of the same day keeps everything.
    other = stored(database_url, neighbour)
    assert other is not None and bytes(other["body"]) == b"old secret" and other["response_excerpt"]
    assert httpx.get(f"{gateway}/v1/jobs/{neighbour}", headers=kept.headers).json()["payload_expunged_at"] is None
    # The audit log is kept like rows.
    left = {r[0] for r in query(database_url, "SELECT id FROM audit_log WHERE id = ANY($1)", list(audit.values()))}
    assert left == {audit[kept.tenant_id]}


def test_a_day_past_the_longest_retention_is_a_dropped_partition(
    gateway: str, operator_token: str, infra: dict[str, str]
) -> None:
    database_url = infra["database_url"]
    tenant = create_tenant(gateway, operator_token, "retention-drop")
    days_ago = 200  # past every plan's default (startup keeps 90 days) and every override here
    job_id = old_job(database_url, tenant.tenant_id, days_ago, dead_letter=True)
    day = (datetime.now(UTC) - timedelta(days=days_ago)).date()
    names = [partition_name(table, day) for table in PARTITIONED]

    run_retention(database_url)
    assert _tables(database_url, names) == []
    assert httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers).status_code == 404
    assert query(database_url, "SELECT count(*) FROM dead_letters WHERE job_id = $1", uuid.UUID(job_id))[0][0] == 0
    # The coming days have their partitions.
    ahead = partition_name("jobs", (datetime.now(UTC) + timedelta(days=7)).date())
    assert _tables(database_url, [ahead]) == [ahead]


def _tables(database_url: str, names: list[str]) -> list[str]:
    return [r[0] for r in query(database_url, "SELECT relname FROM pg_class WHERE relname = ANY($1)", names)]
