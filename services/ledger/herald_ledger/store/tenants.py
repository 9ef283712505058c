"""Tenants and their API keys."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, insert, select, text, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald_ledger.db.models import api_keys, tenants
from herald_ledger.store.platform_email import PLATFORM_TENANT_ID

API_KEY_COLUMNS = [c for c in api_keys.c if c.name != "key_hash"]
# The first key of the advisory locks on tenant names (the second is the name's hash).
NAME_LOCK = 0x7E4A


async def create_tenant(
    conn: AsyncConnection, name: str, plan: str, contact_email: str | None = None, allow_duplicate_name: bool = False
) -> Row[Any] | uuid.UUID:
    """The new tenant's row; or, unless `allow_duplicate_name`, the id of a tenant with this name
    already (names are for people: two alike are told apart by id only). A transaction-scoped lock
    on the name makes the look and the insert one step for creations of the same name at once."""
    if not allow_duplicate_name:
        await conn.execute(select(func.pg_advisory_xact_lock(NAME_LOCK, func.hashtext(name))))
        same = select(tenants.c.id).where(tenants.c.name == name, tenants.c.id != PLATFORM_TENANT_ID).limit(1)
        existing: uuid.UUID | None = (await conn.execute(same)).scalar()
        if existing is not None:
            return existing
    query = insert(tenants).values(id=new_id(), name=name, plan=plan, contact_email=contact_email).returning(*tenants.c)
    return (await conn.execute(query)).one()


async def get_tenant(conn: AsyncConnection, tenant_id: uuid.UUID) -> Row[Any] | None:
    """None for the platform's own tenant too: operators cannot give it keys or enable it."""
    if tenant_id == PLATFORM_TENANT_ID:
        return None
    return (await conn.execute(select(tenants).where(tenants.c.id == tenant_id))).first()


async def create_api_key(
    conn: AsyncConnection, tenant_id: uuid.UUID, name: str, key_hash: bytes, public_id: str, scopes: list[str]
) -> Row[Any]:
    """`scopes` empty: the column's default, every scope."""
    values: dict[str, Any] = {"scopes": scopes} if scopes else {}
    query = (
        insert(api_keys)
        .values(id=new_id(), tenant_id=tenant_id, name=name, key_hash=key_hash, public_id=public_id, **values)
        .returning(*API_KEY_COLUMNS)
    )
    return (await conn.execute(query)).one()


async def authenticate(conn: AsyncConnection, key_hash: bytes) -> tuple[Row[Any], Row[Any]] | None:
    """The tenant owning an active key with this hash, and the key (an exact-match index lookup:
    the hash of a random key leaks nothing through timing)."""
    query = (
        select(
            tenants,
            api_keys.c.id.label("key_id"),
            api_keys.c.name.label("key_name"),
            api_keys.c.scopes.label("key_scopes"),
        )
        .join(api_keys, api_keys.c.tenant_id == tenants.c.id)
        .where(and_(api_keys.c.key_hash == key_hash, api_keys.c.revoked_at.is_(None)))
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return row, row


async def list_tenants(conn: AsyncConnection, page_size: int, after: uuid.UUID | None) -> tuple[list[Row[Any]], str]:
    # The platform's own tenant (operator mail, see platform_email) is not a customer.
    query = select(tenants).where(tenants.c.id != PLATFORM_TENANT_ID).order_by(tenants.c.id).limit(page_size + 1)
    if after is not None:
        query = query.where(tenants.c.id > after)
    rows = list((await conn.execute(query)).all())
    next_cursor = str(rows[page_size - 1].id) if len(rows) > page_size else ""
    return rows[:page_size], next_cursor


async def update_tenant(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    plan: str | None,
    disabled: bool | None,
    contact_email: str | None = None,
) -> Row[Any] | None:
    """`contact_email`: None leaves it, "" clears it. The platform's own tenant is not found."""
    if tenant_id == PLATFORM_TENANT_ID:
        return None
    values: dict[str, Any] = {}
    if contact_email is not None:
        values["contact_email"] = contact_email or None
    if plan is not None:
        values["plan"] = plan
    if disabled is not None:
        values["disabled"] = disabled
    if not values:
        return await get_tenant(conn, tenant_id)
    query = update(tenants).where(tenants.c.id == tenant_id).values(**values).returning(*tenants.c)
    return (await conn.execute(query)).first()


async def list_api_keys(conn: AsyncConnection, tenant_id: uuid.UUID) -> list[Row[Any]]:
    query = select(*API_KEY_COLUMNS).where(api_keys.c.tenant_id == tenant_id).order_by(api_keys.c.created_at)
    return list((await conn.execute(query)).all())


async def revoke_api_key(conn: AsyncConnection, tenant_id: uuid.UUID, key_id: uuid.UUID) -> Row[Any] | None:
    query = (
        update(api_keys)
        .where(and_(api_keys.c.id == key_id, api_keys.c.tenant_id == tenant_id))
        .values(revoked_at=func.coalesce(api_keys.c.revoked_at, func.now()))
        .returning(*API_KEY_COLUMNS)
    )
    return (await conn.execute(query)).first()


async def touch_api_keys(conn: AsyncConnection, uses: dict[uuid.UUID, datetime]) -> None:
    """One statement for every key a gateway saw used since its last flush."""
    if not uses:
        return
    await conn.execute(
        text(
            """
            UPDATE api_keys SET last_used_at = GREATEST(COALESCE(api_keys.last_used_at, u.used_at), u.used_at)
            FROM unnest(CAST(:ids AS uuid[]), CAST(:times AS timestamptz[])) AS u(id, used_at)
            WHERE api_keys.id = u.id
            """
        ),
        {"ids": list(uses), "times": list(uses.values())},
    )
