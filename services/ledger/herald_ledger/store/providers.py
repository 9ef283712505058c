"""Tenants' email providers. The credential is sealed before it reaches this module
and stays sealed here; only the masked preview is computed by opening it."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.secrets import KeyRing, associated_data
from herald_ledger.db.models import provider_credentials
from herald_ledger.store import rows

PURPOSE = "provider"


def credential_aad(tenant_id: uuid.UUID, provider: str, row_id: uuid.UUID) -> bytes:
    return associated_data(f"{PURPOSE}:{provider}", str(tenant_id), str(row_id))


async def create_provider(conn: AsyncConnection, values: dict[str, Any]) -> Row[Any]:
    query = insert(provider_credentials).values(**values).returning(*provider_credentials.c)
    return (await conn.execute(query)).one()


async def list_providers(conn: AsyncConnection, tenant_id: uuid.UUID) -> list[Row[Any]]:
    query = (
        select(provider_credentials)
        .where(provider_credentials.c.tenant_id == tenant_id)
        .order_by(provider_credentials.c.priority.desc(), provider_credentials.c.created_at)
    )
    return list((await conn.execute(query)).all())


async def get_provider(conn: AsyncConnection, tenant_id: uuid.UUID, provider_id: uuid.UUID) -> Row[Any] | None:
    return await rows.get(conn, tenant_id, provider_id, provider_credentials)


async def update_provider(
    conn: AsyncConnection, tenant_id: uuid.UUID, provider_id: uuid.UUID, values: dict[str, Any]
) -> Row[Any] | None:
    return await rows.update_row(conn, tenant_id, provider_id, provider_credentials, values)


async def delete_provider(conn: AsyncConnection, tenant_id: uuid.UUID, provider_id: uuid.UUID) -> bool:
    return await rows.delete_row(conn, tenant_id, provider_id, provider_credentials)


def seal_credential(ring: KeyRing, tenant_id: uuid.UUID, provider: str, row_id: uuid.UUID, plaintext: bytes) -> Any:
    return ring.seal(plaintext, credential_aad(tenant_id, provider, row_id))
