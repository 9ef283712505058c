"""Tenants' sending domains. The provider calls (register, verify) are the email-sender's;
this module keeps what they answered, and tells admission which from-domains to refuse."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, insert, select
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import sending_domains
from herald_ledger.store import rows


async def create_domain(conn: AsyncConnection, values: dict[str, Any]) -> Row[Any] | None:
    """None when the tenant already has this domain (one registration per name)."""
    existing = await find_by_name(conn, values["tenant_id"], values["name"])
    if existing is not None:
        return None
    if values.get("verified"):
        values = {**values, "verified_at": datetime.now(UTC)}
    return (await conn.execute(insert(sending_domains).values(**values).returning(*sending_domains.c))).one()


async def find_by_name(conn: AsyncConnection, tenant_id: uuid.UUID, name: str) -> Row[Any] | None:
    query = select(sending_domains).where(
        and_(sending_domains.c.tenant_id == tenant_id, sending_domains.c.name == name)
    )
    return (await conn.execute(query)).first()


async def get_domain(conn: AsyncConnection, tenant_id: uuid.UUID, domain_id: uuid.UUID) -> Row[Any] | None:
    return await rows.get(conn, tenant_id, domain_id, sending_domains)


async def list_domains(conn: AsyncConnection, tenant_id: uuid.UUID) -> list[Row[Any]]:
    query = select(sending_domains).where(sending_domains.c.tenant_id == tenant_id).order_by(sending_domains.c.name)
    return list((await conn.execute(query)).all())


async def update_domain(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    domain_id: uuid.UUID,
    verified: bool,
    records: list[dict[str, Any]],
    provider_status: str,
) -> Row[Any] | None:
    """The provider's latest word. Once verified, a domain stays verified: a later check
    that reads "pending" (Resend checks asynchronously) does not block sends again."""
    current = await get_domain(conn, tenant_id, domain_id)
    if current is None:
        return None
    now = datetime.now(UTC)
    values: dict[str, Any] = {"records": records, "provider_status": provider_status, "updated_at": now}
    if verified and not current.verified:
        values |= {"verified": True, "verified_at": now}
    return await rows.update_row(conn, tenant_id, domain_id, sending_domains, values)


async def delete_domain(conn: AsyncConnection, tenant_id: uuid.UUID, domain_id: uuid.UUID) -> bool:
    return await rows.delete_row(conn, tenant_id, domain_id, sending_domains)


async def unverified(conn: AsyncConnection, wanted: Sequence[tuple[uuid.UUID, str]]) -> set[tuple[uuid.UUID, str]]:
    """Which of these (tenant, domain) pairs are registered and not verified yet."""
    if not wanted:
        return set()
    tenants = sorted({t for t, _ in wanted})
    names = sorted({n for _, n in wanted})
    query = select(sending_domains.c.tenant_id, sending_domains.c.name).where(
        and_(
            sending_domains.c.tenant_id.in_(tenants),
            sending_domains.c.name.in_(names),
            sending_domains.c.verified.is_(False),
        )
    )
    found = {(row.tenant_id, row.name) for row in (await conn.execute(query)).all()}
    return found & set(wanted)
