"""A tenant's own limits (over its plan's), its usage row of a month, and its email
suppression list."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import suppressions, tenants, usage_counters
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID


async def set_limits(conn: AsyncConnection, tenant_id: uuid.UUID, values: dict[str, int | None]) -> Row[Any] | None:
    """The tenant after the change (never the platform's own tenant); None when there is none."""
    query = (
        update(tenants)
        .where(tenants.c.id == tenant_id, tenants.c.id != PLATFORM_TENANT_ID)
        .values(**values)
        .returning(*tenants.c)
    )
    return (await conn.execute(query)).first()


async def usage(conn: AsyncConnection, tenant_id: uuid.UUID, period: str) -> Row[Any] | None:
    query = select(usage_counters).where(
        and_(usage_counters.c.tenant_id == tenant_id, usage_counters.c.period == period)
    )
    return (await conn.execute(query)).first()


async def list_suppressions(conn: AsyncConnection, tenant_id: uuid.UUID, after: str, limit: int) -> Sequence[Row[Any]]:
    query = select(suppressions).where(suppressions.c.tenant_id == tenant_id)
    if after:
        query = query.where(suppressions.c.address > after)
    return (await conn.execute(query.order_by(suppressions.c.address).limit(limit))).all()


async def add_suppressions(conn: AsyncConnection, rows: list[dict[str, Any]]) -> int:
    """How many were new."""
    query = pg_insert(suppressions).values(rows).on_conflict_do_nothing().returning(suppressions.c.address)
    return len((await conn.execute(query)).all())


async def remove_suppression(conn: AsyncConnection, tenant_id: uuid.UUID, address: str) -> bool:
    query = suppressions.delete().where(and_(suppressions.c.tenant_id == tenant_id, suppressions.c.address == address))
    return bool((await conn.execute(query)).rowcount)
