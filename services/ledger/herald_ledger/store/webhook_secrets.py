"""Tenants' webhook signing secrets, sealed like provider credentials."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.secrets import Sealed, associated_data
from herald_ledger.db.models import webhook_secrets

PURPOSE = "webhook-secret"


def secret_aad(tenant_id: uuid.UUID) -> bytes:
    return associated_data(PURPOSE, str(tenant_id), "signing")


async def get(conn: AsyncConnection, tenant_id: uuid.UUID) -> Row[Any] | None:
    return (await conn.execute(select(webhook_secrets).where(webhook_secrets.c.tenant_id == tenant_id))).first()


async def create(conn: AsyncConnection, tenant_id: uuid.UUID, sealed: Sealed) -> Row[Any] | None:
    """Creates the tenant's secret; None when one already exists."""
    query = (
        insert(webhook_secrets)
        .values(tenant_id=tenant_id, sealed_current=sealed.envelope, current_key_id=sealed.key_id)
        .on_conflict_do_nothing(index_elements=["tenant_id"])
        .returning(*webhook_secrets.c)
    )
    return (await conn.execute(query)).first()


async def rotate(conn: AsyncConnection, tenant_id: uuid.UUID, sealed: Sealed, overlap_s: float) -> Row[Any] | None:
    """The current secret becomes the previous one, signing on for `overlap_s`."""
    query = text(
        """
        UPDATE webhook_secrets SET
            sealed_previous = sealed_current, previous_key_id = current_key_id,
            previous_expires_at = now() + make_interval(secs => :overlap_s),
            sealed_current = :sealed, current_key_id = :key_id, rotated_at = now()
        WHERE tenant_id = :tenant_id
        RETURNING *
        """
    )
    params = {"tenant_id": tenant_id, "sealed": sealed.envelope, "key_id": sealed.key_id, "overlap_s": overlap_s}
    return (await conn.execute(query, params)).first()


async def remove(conn: AsyncConnection, tenant_id: uuid.UUID) -> bool:
    return bool((await conn.execute(delete(webhook_secrets).where(webhook_secrets.c.tenant_id == tenant_id))).rowcount)


def previous_is_live(row: Row[Any], now: datetime) -> bool:
    return row.sealed_previous is not None and row.previous_expires_at is not None and row.previous_expires_at > now
