"""Idempotency keys: a claim while the request is processed, then the stored response.

A claim older than IN_FLIGHT_TIMEOUT is taken to be from a gateway that died
mid-request and may be claimed again; a completed key replays for RETENTION.
"""

from __future__ import annotations

import hmac
import uuid
from dataclasses import dataclass

from sqlalchemy import and_, delete, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from herald_ledger.db.models import idempotency_keys

IN_FLIGHT_TIMEOUT_S = 60
RETENTION_S = 24 * 3600


@dataclass(frozen=True)
class Claim:
    state: str  # new | in_flight | completed | mismatch
    status_code: int = 0
    body: bytes = b""


_CLAIM = text(
    """
    INSERT INTO idempotency_keys (tenant_id, key, request_hash, state)
    VALUES (:tenant_id, :key, :hash, 'in_flight')
    ON CONFLICT (tenant_id, key) DO UPDATE SET
        request_hash = EXCLUDED.request_hash, state = 'in_flight', status_code = NULL, body = NULL,
        created_at = now(), updated_at = now()
    WHERE (idempotency_keys.state = 'in_flight'
           AND idempotency_keys.updated_at < now() - make_interval(secs => :in_flight_s))
       OR idempotency_keys.created_at < now() - make_interval(secs => :retention_s)
    RETURNING state
    """
)


async def claim(conn: AsyncConnection, tenant_id: uuid.UUID, key: str, request_hash: bytes) -> Claim:
    params = {
        "tenant_id": tenant_id,
        "key": key,
        "hash": request_hash,
        "in_flight_s": IN_FLIGHT_TIMEOUT_S,
        "retention_s": RETENTION_S,
    }
    if (await conn.execute(_CLAIM, params)).first() is not None:
        return Claim("new")
    row = (
        await conn.execute(
            idempotency_keys.select().where(
                and_(idempotency_keys.c.tenant_id == tenant_id, idempotency_keys.c.key == key)
            )
        )
    ).one()
    if not hmac.compare_digest(bytes(row.request_hash), request_hash):
        return Claim("mismatch")
    if row.state == "in_flight":
        return Claim("in_flight")
    return Claim("completed", row.status_code or 0, bytes(row.body or b""))


async def complete(conn: AsyncConnection, tenant_id: uuid.UUID, key: str, status_code: int, body: bytes) -> None:
    await conn.execute(
        update(idempotency_keys)
        .where(and_(idempotency_keys.c.tenant_id == tenant_id, idempotency_keys.c.key == key))
        .values(state="completed", status_code=status_code, body=body, updated_at=text("now()"))
    )


async def abandon(conn: AsyncConnection, tenant_id: uuid.UUID, key: str) -> None:
    await conn.execute(
        delete(idempotency_keys).where(
            and_(
                idempotency_keys.c.tenant_id == tenant_id,
                idempotency_keys.c.key == key,
                idempotency_keys.c.state == "in_flight",
            )
        )
    )


async def complete_many(conn: AsyncConnection, completions: list[tuple[uuid.UUID, str, int, bytes]]) -> None:
    """Stores many responses in one statement."""
    if not completions:
        return
    tenants, keys, codes, bodies = zip(*completions, strict=True)
    await conn.execute(
        text(
            """
            UPDATE idempotency_keys SET state = 'completed', status_code = u.code, body = u.body, updated_at = now()
            FROM unnest(
                CAST(:tenants AS uuid[]), CAST(:keys AS text[]), CAST(:codes AS int[]), CAST(:bodies AS bytea[])
            ) AS u(tenant_id, key, code, body)
            WHERE idempotency_keys.tenant_id = u.tenant_id AND idempotency_keys.key = u.key
            """
        ),
        {"tenants": list(tenants), "keys": list(keys), "codes": list(codes), "bodies": list(bodies)},
    )
