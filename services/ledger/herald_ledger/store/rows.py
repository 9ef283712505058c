"""One of a tenant's rows by its id, in any table with `id` and `tenant_id`: read, changed or
deleted. Another tenant's id reads as missing (None, False)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, select, update
from sqlalchemy import Table as Table  # re-exported: the RPC layer names a table to these helpers
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection


def _the_row(table: Table, tenant_id: uuid.UUID, row_id: uuid.UUID) -> ColumnElement[bool]:
    return and_(table.c.id == row_id, table.c.tenant_id == tenant_id)


async def get(conn: AsyncConnection, tenant_id: uuid.UUID, row_id: uuid.UUID, table: Table) -> Row[Any] | None:
    return (await conn.execute(select(table).where(_the_row(table, tenant_id, row_id)))).first()


async def update_row(
    conn: AsyncConnection, tenant_id: uuid.UUID, row_id: uuid.UUID, table: Table, values: dict[str, Any]
) -> Row[Any] | None:
    """The row changed by `values` (its `updated_at` now, unless `values` sets it)."""
    query = (
        update(table)
        .where(_the_row(table, tenant_id, row_id))
        .values(**{"updated_at": datetime.now(UTC), **values})
        .returning(*table.c)
    )
    return (await conn.execute(query)).first()


async def delete_row(conn: AsyncConnection, tenant_id: uuid.UUID, row_id: uuid.UUID, table: Table) -> bool:
    return bool((await conn.execute(delete(table).where(_the_row(table, tenant_id, row_id)))).rowcount)
