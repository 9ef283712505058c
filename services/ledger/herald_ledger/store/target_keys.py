"""Webhook targets' own signing keys, sealed like the tenant's secret.

Each target has one current key per algorithm (`hmac`: a `whsec_` secret; `ed25519`: a
`whsk_` private key whose `whpk_` public key is kept in clear). A rotation gives the keys it
replaces an end (`expires_at`, at most the rotation's overlap from now: a rotation with no
overlap stops every older key at once, as after a leak) and keeps at most MAX_PREVIOUS of
them; the sender signs with every key not yet expired."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.ids import new_id
from herald.secrets import KeyRing, associated_data
from herald_ledger.db.models import target_signing_keys, webhook_targets

PURPOSE = "target-signing-key"
HMAC = "hmac"
ED25519 = "ed25519"
ALGORITHMS = (HMAC, ED25519)
MAX_PREVIOUS = 10
keys = target_signing_keys


def aad_row(target_id: uuid.UUID | str, key_row_id: uuid.UUID | str) -> str:
    return f"{target_id}:{key_row_id}"


def key_aad(tenant_id: uuid.UUID | str, row: str) -> bytes:
    """Binds a sealed key to its tenant, target and row: copied elsewhere, it fails to open."""
    return associated_data(PURPOSE, str(tenant_id), row)


@dataclass(frozen=True)
class NewKey:
    """A key sealed for its row, ready to insert."""

    id: uuid.UUID
    algorithm: str
    sealed: bytes
    key_id: str
    public_key: str | None = None


# Seals a plaintext key for (tenant, target): the row it will be stored in is chosen here.
KeyMaker = Callable[[uuid.UUID, uuid.UUID], NewKey]


def sealer(ring: KeyRing, algorithm: str, plaintext: str, public_key: str | None = None) -> KeyMaker:
    def make(tenant_id: uuid.UUID, target_id: uuid.UUID) -> NewKey:
        row_id = new_id()
        sealed = ring.seal(plaintext.encode(), key_aad(tenant_id, aad_row(target_id, row_id)))
        return NewKey(row_id, algorithm, sealed.envelope, sealed.key_id, public_key)

    return make


def _values(tenant_id: uuid.UUID, target_id: uuid.UUID, key: NewKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "tenant_id": tenant_id,
        "target_id": target_id,
        "algorithm": key.algorithm,
        "sealed": key.sealed,
        "key_id": key.key_id,
        "public_key": key.public_key,
    }


async def create_target(conn: AsyncConnection, values: dict[str, Any], make_key: KeyMaker | None) -> Row[Any]:
    """The target row and, with master keys, its first signing key, in one transaction."""
    target_id = new_id()
    row = (
        await conn.execute(webhook_targets.insert().values(id=target_id, **values).returning(*webhook_targets.c))
    ).one()
    if make_key is not None:
        await conn.execute(
            keys.insert().values(**_values(row.tenant_id, target_id, make_key(row.tenant_id, target_id)))
        )
    return row


async def target(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, lock: bool = False
) -> Row[Any] | None:
    """The tenant's target (None: not found, or another tenant's); `lock` holds it for the
    rest of the transaction, so two rotations of one target run one after the other."""
    query = select(webhook_targets).where(
        and_(webhook_targets.c.tenant_id == tenant_id, webhook_targets.c.id == target_id)
    )
    return (await conn.execute(query.with_for_update() if lock else query)).first()


async def live(conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID) -> list[Row[Any]]:
    """The target's keys that still sign, newest first."""
    query = (
        select(keys)
        .where(
            and_(
                keys.c.tenant_id == tenant_id,
                keys.c.target_id == target_id,
                or_(keys.c.expires_at.is_(None), keys.c.expires_at > func.now()),
            )
        )
        .order_by(keys.c.created_at.desc(), keys.c.id.desc())
    )
    return list((await conn.execute(query)).all())


async def ensure_current(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, make_key: KeyMaker
) -> list[Row[Any]]:
    """The target's live keys, after giving it a current HMAC key if it has none (a target
    from before targets had keys; two replicas racing insert one: the unique index decides)."""
    found = await live(conn, tenant_id, target_id)
    if any(k.algorithm == HMAC and k.expires_at is None for k in found):
        return found
    query = (
        insert(keys)
        .values(**_values(tenant_id, target_id, make_key(tenant_id, target_id)))
        .on_conflict_do_nothing(index_elements=["target_id", "algorithm"], index_where=keys.c.expires_at.is_(None))
    )
    await conn.execute(query)
    return await live(conn, tenant_id, target_id)


async def rotate(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, key: NewKey, overlap_s: float
) -> None:
    """`key` becomes the target's current key of its algorithm; the older ones sign on for at
    most `overlap_s`; beyond MAX_PREVIOUS, and once expired, they are deleted. A first HMAC
    rotation also ends the tenant's secret signing beside (see migration 0017)."""
    same = and_(keys.c.tenant_id == tenant_id, keys.c.target_id == target_id, keys.c.algorithm == key.algorithm)
    ends = func.now() + timedelta(seconds=overlap_s)
    await conn.execute(
        update(keys)
        .where(and_(same, or_(keys.c.expires_at.is_(None), keys.c.expires_at > ends)))
        .values(expires_at=ends)
    )
    await conn.execute(keys.insert().values(**_values(tenant_id, target_id, key)))
    await conn.execute(delete(keys).where(and_(same, keys.c.expires_at <= func.now())))
    kept = (
        select(keys.c.id)
        .where(and_(same, keys.c.expires_at.is_not(None)))
        .order_by(keys.c.created_at.desc(), keys.c.id.desc())
        .offset(MAX_PREVIOUS)
    )
    await conn.execute(delete(keys).where(keys.c.id.in_(kept.scalar_subquery())))
    if key.algorithm == HMAC:
        await conn.execute(
            update(webhook_targets).where(webhook_targets.c.id == target_id).values(tenant_secret_signs=False)
        )
