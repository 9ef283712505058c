"""A tenant's erasure in the database: every row of the tenant, in one transaction, counted.

The tenant's row is locked first (FOR UPDATE): a transaction writing a row that refers to the
tenant (a job, a key) holds a key-share lock on it, so the erasure waits for those to commit and
every later one fails on its foreign key; nothing of the tenant is written behind the erasure.

Rows go children first, each table by its own statement, so each kind's count is its own rows
(not a cascade's). `TENANT_TABLES` lists every table with a `tenant_id` column and `JOB_TABLES`
every table whose rows belong to a job; tests/test_tenant_erasure.py compares both with the
database's catalogue, so a new table of a tenant's rows cannot be left out unnoticed.

Two kinds of rows name the tenant without being its own: the operators' audit entries about it
(its creation, a plan change: `tenant_id` set, so they go with the tenant's entries, and any
entry whose resource or changes name its id), and the operators' dead-letter alert emails (jobs
of the platform tenant whose text lists the tenant's jobs). Both go too: after the erasure the
id appears in no row. The erasure itself is recorded once, naming the tenant by `tenant_hash`.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.job_status import TERMINAL
from herald_ledger.store import audit as audit_store
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID

# Rows of a job (its `job_id`), removed with the tenant's jobs, before them.
JOB_TABLES = ("attempts", "job_events")
# Rows of the tenant by their `tenant_id`, in the order they go: what refers to a job or to
# another of the tenant's rows before what it refers to; `jobs` after every job's dependant.
TENANT_TABLES = (
    "dead_letters",
    "inbound_events",
    "platform_emails",
    "jobs",
    "events",
    "operational_events",
    "event_claims",
    "payload_expiry",
    "idempotency_keys",
    "subscriptions",
    "target_signing_keys",
    "webhook_targets",
    "event_filters",
    "webhook_secrets",
    "sending_domains",
    "provider_credentials",
    "inbound_configs",
    "suppressions",
    "usage_counters",
    "api_keys",
    "audit_log",
)
OPERATOR_EMAILS = "operator_emails"
_FINISHED = ", ".join(f"'{status.value}'" for status in sorted(TERMINAL))


def tenant_hash(tenant_id: uuid.UUID | str) -> str:
    """How the audit log names an erased tenant: whoever holds the id (the tenant, a backup)
    can find the erasure's entry; the entry alone does not give the id back (a UUIDv7 holds
    74 random bits)."""
    return "sha256:" + hashlib.sha256(str(tenant_id).encode()).hexdigest()


@dataclass
class ErasedRows:
    rows: dict[str, int] = field(default_factory=dict)
    # The jobs that had not ended: their messages may be on the bus, their large bodies in the
    # payload store, their deliveries under way.
    unfinished_job_ids: list[uuid.UUID] = field(default_factory=list)
    # The tenant's webhook targets (their pacing state on the bus is keyed by target id).
    target_ids: list[uuid.UUID] = field(default_factory=list)


async def _count(conn: AsyncConnection, statement: str, params: dict[str, Any]) -> int:
    return int((await conn.execute(text(statement), params)).rowcount or 0)


async def _operator_email_jobs(conn: AsyncConnection, tenant: str) -> list[uuid.UUID]:
    """The platform tenant's jobs (operators' alert mail) whose request names the tenant."""
    found = await conn.execute(
        text("SELECT id FROM jobs WHERE tenant_id = :platform AND strpos(request::text, :tenant) > 0"),
        {"platform": PLATFORM_TENANT_ID, "tenant": tenant},
    )
    return [row.id for row in found]


async def erase_rows(conn: AsyncConnection, tenant_id: uuid.UUID, erased_by: dict[str, Any]) -> ErasedRows | None:
    """Removes every row of the tenant and records the erasure (`erased_by`: the audit entry's
    actor, action and address). None: no such tenant (or the platform's own)."""
    if tenant_id == PLATFORM_TENANT_ID:
        return None
    locked = await conn.execute(text("SELECT id FROM tenants WHERE id = :t FOR UPDATE"), {"t": tenant_id})
    if locked.first() is None:
        return None
    erased = ErasedRows()
    params: dict[str, Any] = {"t": tenant_id, "text_id": str(tenant_id)}
    params["alerts"] = await _operator_email_jobs(conn, str(tenant_id))
    erased.unfinished_job_ids = [
        row.id
        for row in await conn.execute(
            text(f"SELECT id FROM jobs WHERE tenant_id = :t AND status NOT IN ({_FINISHED})"),  # noqa: S608
            params,
        )
    ]
    erased.target_ids = [
        row.id for row in await conn.execute(text("SELECT id FROM webhook_targets WHERE tenant_id = :t"), params)
    ]
    jobs_of = "SELECT id FROM jobs WHERE tenant_id = :t OR id = ANY(CAST(:alerts AS uuid[]))"
    for table in JOB_TABLES:
        erased.rows[table] = await _count(conn, f"DELETE FROM {table} WHERE job_id IN ({jobs_of})", params)  # noqa: S608
    erased.rows[OPERATOR_EMAILS] = len(params["alerts"])
    for statement in (
        "DELETE FROM dead_letters WHERE job_id = ANY(CAST(:alerts AS uuid[]))",
        "DELETE FROM platform_emails WHERE id = ANY(CAST(:alerts AS uuid[]))",
        "DELETE FROM jobs WHERE id = ANY(CAST(:alerts AS uuid[]))",
    ):
        await conn.execute(text(statement), params)
    # The audit log refuses DELETE unless the transaction says it erases (migration 0021).
    await conn.execute(text("SET LOCAL herald.audit_erasure = 'on'"))
    for table in TENANT_TABLES:
        where = "tenant_id = :t"
        if table == "audit_log":
            # Operators' entries about the tenant recorded without its id as their tenant.
            where += " OR resource_id = :text_id OR strpos(changes::text, :text_id) > 0"
        erased.rows[table] = await _count(conn, f"DELETE FROM {table} WHERE {where}", params)  # noqa: S608
    await conn.execute(text("SET LOCAL herald.audit_erasure = 'off'"))
    erased.rows["tenants"] = await _count(conn, "DELETE FROM tenants WHERE id = :t", params)
    await audit_store.append(
        conn,
        None,
        {**erased_by, "resource_id": tenant_hash(tenant_id), "changes": {"erased_rows": erased.rows}},
    )
    return erased
