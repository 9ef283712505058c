"""The audit log: appended, read, never edited (the table's trigger refuses UPDATE and DELETE;
nothing here or elsewhere in the code issues either)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import audit_log


async def append(conn: AsyncConnection, tenant_id: uuid.UUID | None, entry: dict[str, Any]) -> Row[Any]:
    query = insert(audit_log).values(id=new_id(), tenant_id=tenant_id, **entry).returning(*audit_log.c)
    return (await conn.execute(query)).one()


async def page(
    conn: AsyncConnection, tenant_id: uuid.UUID | None, page_size: int, before: uuid.UUID | None
) -> tuple[list[Row[Any]], str]:
    """Newest first (ids are UUIDv7: time order); `tenant_id` None: every entry."""
    query = select(audit_log).order_by(audit_log.c.id.desc()).limit(page_size + 1)
    if tenant_id is not None:
        query = query.where(audit_log.c.tenant_id == tenant_id)
    if before is not None:
        query = query.where(audit_log.c.id < before)
    rows = list((await conn.execute(query)).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor
