"""Re-sealing stored secrets under the active master key, in small batches with row
locks skipped, so it runs beside normal traffic and can be re-run after a crash."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, func, or_, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncEngine

from herald.inbound_keys import inbound_aad
from herald.secrets import KeyRing, SecretUnavailable, envelope_key_id
from herald.webhooks.sealed_headers import open_headers, seal_headers
from herald_ledger.db.models import (
    inbound_configs,
    provider_credentials,
    target_signing_keys,
    webhook_secrets,
    webhook_targets,
)
from herald_ledger.store.providers import credential_aad
from herald_ledger.store.target_keys import aad_row, key_aad
from herald_ledger.store.webhook_secrets import secret_aad


@dataclass
class Reencryption:
    resealed: int = 0
    already_current: int = 0
    unreadable: list[str] = field(default_factory=list)


async def reencrypt_all(engine: AsyncEngine, ring: KeyRing, batch_size: int) -> Reencryption:
    """Re-seals every secret not under the active key. One that does not open is
    left as it is and reported: a single bad row must not block a rotation."""
    active = ring.active_key_id
    result = Reencryption()
    pc = provider_credentials
    await _reseal_rows(
        engine,
        ring,
        batch_size,
        result,
        pc,
        "provider",
        lambda row: credential_aad(row.tenant_id, row.provider, row.id),
    )
    await _reseal_rows(
        engine,
        ring,
        batch_size,
        result,
        target_signing_keys,
        "target-key",
        lambda row: key_aad(row.tenant_id, aad_row(row.target_id, row.id)),
    )
    ws = webhook_secrets
    skipped_tenants: list[uuid.UUID] = []
    while True:
        async with engine.begin() as conn:
            query = select(ws).where(or_(ws.c.current_key_id != active, ws.c.previous_key_id != active))
            if skipped_tenants:
                query = query.where(ws.c.tenant_id.notin_(skipped_tenants))
            rows = (await conn.execute(query.limit(batch_size).with_for_update(skip_locked=True))).all()
            for row in rows:
                aad = secret_aad(row.tenant_id)
                values: dict[str, object] = {}
                try:
                    if row.current_key_id != active:
                        values["sealed_current"] = ring.seal(ring.open(row.sealed_current, aad), aad).envelope
                        values["current_key_id"] = active
                    if row.sealed_previous is not None and row.previous_key_id != active:
                        values["sealed_previous"] = ring.seal(ring.open(row.sealed_previous, aad), aad).envelope
                        values["previous_key_id"] = active
                except SecretUnavailable:
                    skipped_tenants.append(row.tenant_id)
                    result.unreadable.append(f"webhook-secret:{row.tenant_id}")
                    continue
                if values:
                    await conn.execute(update(ws).where(ws.c.tenant_id == row.tenant_id).values(**values))
                    result.resealed += 1
        if len(rows) < batch_size:
            break
    ic = inbound_configs
    skipped_configs: list[tuple[uuid.UUID, str]] = []
    while True:
        async with engine.begin() as conn:
            query = select(ic).where(ic.c.key_id != active)
            for tenant_id, provider in skipped_configs:
                query = query.where(or_(ic.c.tenant_id != tenant_id, ic.c.provider != provider))
            rows = (await conn.execute(query.limit(batch_size).with_for_update(skip_locked=True))).all()
            for row in rows:
                aad = inbound_aad(row.provider, str(row.tenant_id))
                try:
                    sealed = ring.seal(ring.open(row.sealed, aad), aad)
                except SecretUnavailable:
                    skipped_configs.append((row.tenant_id, row.provider))
                    result.unreadable.append(f"inbound:{row.provider}:{row.tenant_id}")
                    continue
                await conn.execute(
                    update(ic)
                    .where(ic.c.tenant_id == row.tenant_id, ic.c.provider == row.provider)
                    .values(sealed=sealed.envelope, key_id=active)
                )
                result.resealed += 1
        if len(rows) < batch_size:
            break
    await _reseal_target_headers(engine, ring, batch_size, result)
    async with engine.connect() as conn:
        current = (await conn.execute(select(func.count()).select_from(pc).where(pc.c.key_id == active))).scalar_one()
        current += (await conn.execute(select(func.count()).select_from(ic).where(ic.c.key_id == active))).scalar_one()
        current += (
            await conn.execute(select(func.count()).select_from(ws).where(ws.c.current_key_id == active))
        ).scalar_one()
    result.already_current = max(int(current) - result.resealed, 0)
    return result


async def _reseal_rows(
    engine: AsyncEngine,
    ring: KeyRing,
    batch_size: int,
    result: Reencryption,
    table: Table,
    label: str,
    aad_of: Callable[[Row[Any]], bytes],
) -> None:
    """Re-seals the `sealed` column of every row of `table` (keyed by `id`, its master key in
    `key_id`) not under the active key; a row that does not open is reported as `label:id`."""
    active = ring.active_key_id
    skipped: list[uuid.UUID] = []
    while True:
        async with engine.begin() as conn:
            query = select(table).where(table.c.key_id != active)
            if skipped:
                query = query.where(table.c.id.notin_(skipped))
            rows = (await conn.execute(query.limit(batch_size).with_for_update(skip_locked=True))).all()
            for row in rows:
                aad = aad_of(row)
                try:
                    sealed = ring.seal(ring.open(row.sealed, aad), aad)
                except SecretUnavailable:
                    skipped.append(row.id)
                    result.unreadable.append(f"{label}:{row.id}")
                    continue
                await conn.execute(
                    update(table).where(table.c.id == row.id).values(sealed=sealed.envelope, key_id=active)
                )
                result.resealed += 1
        if len(rows) < batch_size:
            break


async def _reseal_target_headers(engine: AsyncEngine, ring: KeyRing, batch_size: int, result: Reencryption) -> None:
    """Targets' sealed header values under the active key, and the headers of targets saved
    before headers were sealed sealed now (their values masked beside the envelope)."""
    wt = webhook_targets
    after: uuid.UUID | None = None
    while True:
        async with engine.begin() as conn:
            query = select(wt).where(or_(wt.c.sealed_headers.is_not(None), wt.c.headers != {}))
            if after is not None:
                query = query.where(wt.c.id > after)
            query = query.order_by(wt.c.id).limit(batch_size).with_for_update(skip_locked=True)
            rows = (await conn.execute(query)).all()
            for row in rows:
                after = row.id
                tenant = str(row.tenant_id)
                try:
                    if row.sealed_headers is None:
                        headers = dict(row.headers)
                    elif envelope_key_id(row.sealed_headers) != ring.active_key_id:
                        headers = open_headers(ring, tenant, row.sealed_headers)
                    else:
                        continue
                except SecretUnavailable:
                    result.unreadable.append(f"target-headers:{row.id}")
                    continue
                shown, envelope = seal_headers(ring, tenant, headers)
                await conn.execute(update(wt).where(wt.c.id == row.id).values(headers=shown, sealed_headers=envelope))
                result.resealed += 1
        if len(rows) < batch_size:
            break
