"""Inbound provider webhooks in the database: tenants' sealed verification material per
provider, and the provider events (claimed once per provider, tenant and event id)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from sqlalchemy import and_, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import inbound_configs, inbound_events, jobs, suppressions, tenants


async def tenant_exists(conn: AsyncConnection, tenant_id: uuid.UUID) -> bool:
    return (await conn.execute(select(tenants.c.id).where(tenants.c.id == tenant_id))).first() is not None


async def put_config(conn: AsyncConnection, values: dict[str, Any]) -> Row[Any]:
    query = (
        pg_insert(inbound_configs)
        .values(**values)
        .on_conflict_do_update(
            index_elements=[inbound_configs.c.tenant_id, inbound_configs.c.provider],
            set_={k: v for k, v in values.items() if k not in ("tenant_id", "provider")},
        )
        .returning(*inbound_configs.c)
    )
    return (await conn.execute(query)).one()


async def list_configs(conn: AsyncConnection, tenant_id: uuid.UUID) -> list[Row[Any, Any, Any]]:
    query = (
        select(inbound_configs.c.provider, inbound_configs.c.public_info, inbound_configs.c.updated_at)
        .where(inbound_configs.c.tenant_id == tenant_id)
        .order_by(inbound_configs.c.provider)
    )
    return list((await conn.execute(query)).all())


async def delete_config(conn: AsyncConnection, tenant_id: uuid.UUID, provider: str) -> bool:
    query = delete(inbound_configs).where(
        and_(inbound_configs.c.tenant_id == tenant_id, inbound_configs.c.provider == provider)
    )
    return bool((await conn.execute(query)).rowcount)


async def sealed_key(conn: AsyncConnection, tenant_id: uuid.UUID, provider: str) -> bytes | None:
    """The sealed material of an enabled tenant's provider, or None."""
    query = (
        select(inbound_configs.c.sealed)
        .select_from(inbound_configs.join(tenants, tenants.c.id == inbound_configs.c.tenant_id))
        .where(
            and_(
                inbound_configs.c.tenant_id == tenant_id,
                inbound_configs.c.provider == provider,
                tenants.c.disabled.is_(False),
            )
        )
    )
    sealed: bytes | None = (await conn.execute(query)).scalar_one_or_none()
    return sealed


async def job_of_message(conn: AsyncConnection, tenant_id: uuid.UUID, provider_message_id: str) -> uuid.UUID | None:
    job_id: uuid.UUID | None = (
        await conn.execute(
            select(jobs.c.id)
            .where(and_(jobs.c.tenant_id == tenant_id, jobs.c.provider_message_id == provider_message_id))
            .limit(1)
        )
    ).scalar_one_or_none()
    return job_id


async def claim_event(conn: AsyncConnection, values: dict[str, Any]) -> int | None:
    """The new event's row id; None when this provider, tenant and event id were seen before."""
    claim = (
        pg_insert(inbound_events)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["provider", "tenant_id", "event_id"])
        .returning(inbound_events.c.id)
    )
    row_id: int | None = (await conn.execute(claim)).scalar_one_or_none()
    return row_id


async def suppress(conn: AsyncConnection, tenant_id: uuid.UUID, address: str, reason: str, source: str) -> None:
    await conn.execute(
        pg_insert(suppressions)
        .values(tenant_id=tenant_id, address=address, reason=reason, source_event_id=source)
        .on_conflict_do_nothing()
    )


async def mark_applied(conn: AsyncConnection, row_id: int, plan: str) -> None:
    await conn.execute(update(inbound_events).where(inbound_events.c.id == row_id).values(applied=True, plan=plan))


async def owns_job(conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID) -> bool:
    query = select(jobs.c.id).where(and_(jobs.c.id == job_id, jobs.c.tenant_id == tenant_id))
    return (await conn.execute(query)).first() is not None


async def job_events(conn: AsyncConnection, tenant_id: uuid.UUID, job_id: uuid.UUID) -> list[Row[Any]]:
    query = (
        select(inbound_events)
        .where(and_(inbound_events.c.tenant_id == tenant_id, inbound_events.c.job_id == job_id))
        .order_by(inbound_events.c.occurred_at, inbound_events.c.id)
        .limit(1000)
    )
    return list((await conn.execute(query)).all())


async def billing_events(conn: AsyncConnection, tenant_id: uuid.UUID, providers: Collection[str]) -> list[Row[Any]]:
    query = (
        select(inbound_events)
        .where(and_(inbound_events.c.tenant_id == tenant_id, inbound_events.c.provider.in_(sorted(providers))))
        .order_by(inbound_events.c.occurred_at.desc(), inbound_events.c.id.desc())
        .limit(500)
    )
    return list((await conn.execute(query)).all())
