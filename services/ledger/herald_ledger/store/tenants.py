"""Tenants and their API keys."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import and_, insert, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import api_keys, tenants


async def create_tenant(conn: AsyncConnection, name: str, plan: str) -> Row[Any]:
    query = insert(tenants).values(id=new_id(), name=name, plan=plan).returning(*tenants.c)
    return (await conn.execute(query)).one()


async def get_tenant(conn: AsyncConnection, tenant_id: uuid.UUID) -> Row[Any] | None:
    return (await conn.execute(select(tenants).where(tenants.c.id == tenant_id))).first()


async def create_api_key(
    conn: AsyncConnection, tenant_id: uuid.UUID, name: str, key_hash: bytes, public_id: str
) -> Row[Any]:
    query = (
        insert(api_keys)
        .values(id=new_id(), tenant_id=tenant_id, name=name, key_hash=key_hash, public_id=public_id)
        .returning(api_keys.c.id, api_keys.c.created_at)
    )
    return (await conn.execute(query)).one()


async def authenticate(conn: AsyncConnection, key_hash: bytes) -> tuple[Row[Any], uuid.UUID] | None:
    """The tenant owning an active key with this hash (an exact-match index lookup:
    the hash of a random key leaks nothing through timing)."""
    query = (
        select(tenants, api_keys.c.id.label("key_id"))
        .join(api_keys, api_keys.c.tenant_id == tenants.c.id)
        .where(and_(api_keys.c.key_hash == key_hash, api_keys.c.revoked_at.is_(None)))
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return row, row.key_id
