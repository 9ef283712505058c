"""Webhook targets' own signing keys: read, rotated, and handed sealed to the senders with
the tenant's secret where it still signs (GetSigningSecrets).

Each target signs with keys of its own, so a receiver that can verify one target's
deliveries cannot forge another's. A target from before that gets its own key the first
time one is asked for (store.target_keys.ensure_current)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from herald.crypto import new_ed25519_key_pair, new_webhook_secret, webhook_secret_problem
from herald.grpcio.errors import abort_failed_precondition, abort_invalid
from herald.secrets import KeyRing, SecretUnavailable
from herald.v1 import ledger_providers_pb2
from herald_ledger.notifications import WEBHOOK_SECRETS, Notifier
from herald_ledger.rpc.common import Context, Rpcs, found, require_id
from herald_ledger.store import target_keys
from herald_ledger.store import webhook_secrets as secret_store

DEFAULT_OVERLAP_S = 24 * 3600.0
MAX_OVERLAP_S = 7 * 24 * 3600.0


def _sealed_key(row: Row[Any]) -> ledger_providers_pb2.TargetSigningKey:
    key = ledger_providers_pb2.TargetSigningKey(
        algorithm=row.algorithm, sealed=row.sealed, aad_row=target_keys.aad_row(row.target_id, row.id)
    )
    if row.expires_at is not None:
        key.expires_at.FromDatetime(row.expires_at)
    return key


async def _keys_and_tenant_secret(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, make_key: target_keys.KeyMaker | None
) -> tuple[list[Row[Any]], Row[Any] | None]:
    """The target's live keys (given a first one if it has none and `make_key` can), and the
    tenant's secret row when it signs for this target too. A target since deleted signs
    as a direct webhook would: its queued deliveries still go out."""
    target = await target_keys.target(conn, tenant_id, target_id)
    if target is None:
        return [], await secret_store.get(conn, tenant_id)
    if make_key is None:
        rows = await target_keys.live(conn, tenant_id, target_id)
    else:
        rows = await target_keys.ensure_current(conn, tenant_id, target_id, make_key)
    return rows, (await secret_store.get(conn, tenant_id)) if target.tenant_secret_signs else None


class TargetSecretRpcs(Rpcs):
    notifier: Notifier
    ring: KeyRing | None

    async def _target_ring(self, context: Context, request: Any) -> tuple[uuid.UUID, uuid.UUID, KeyRing]:
        """The request's tenant and target ids, and the key ring (FAILED_PRECONDITION without one)."""
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        target_id = await require_id(context, request.target_id, "target_id")
        if self.ring is None:
            await abort_failed_precondition(context, "master keys are not configured (HERALD_MASTER_KEYS)")
        return tenant_id, target_id, self.ring

    async def GetSigningSecrets(
        self, request: ledger_providers_pb2.GetSigningSecretsRequest, context: Context
    ) -> ledger_providers_pb2.GetSigningSecretsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        keys: list[Row[Any]] = []
        if request.target_id:
            target_id = await require_id(context, request.target_id, "target_id")
            make_key = (
                None if self.ring is None else target_keys.sealer(self.ring, target_keys.HMAC, new_webhook_secret())
            )
            keys, row = await self.write(_keys_and_tenant_secret, tenant_id, target_id, make_key)
        else:
            row = await self.read(secret_store.get, tenant_id)
        response = ledger_providers_pb2.GetSigningSecretsResponse(target_keys=[_sealed_key(k) for k in keys])
        if row is not None:
            response.sealed_current = row.sealed_current
            if secret_store.previous_is_live(row, datetime.now(UTC)):
                response.sealed_previous = row.sealed_previous
                response.previous_expires_at.FromDatetime(row.previous_expires_at)
        return response

    async def GetTargetSecret(
        self, request: ledger_providers_pb2.GetTargetSecretRequest, context: Context
    ) -> ledger_providers_pb2.GetTargetSecretResponse:
        tenant_id, target_id, ring = await self._target_ring(context, request)
        make_key = target_keys.sealer(ring, target_keys.HMAC, new_webhook_secret())
        keys = await found(context, "target", await self.write(_current_keys, tenant_id, target_id, make_key))
        current = {k.algorithm: k for k in keys if k.expires_at is None}
        try:
            secret = ring.open(current[target_keys.HMAC].sealed, _aad(tenant_id, current[target_keys.HMAC])).decode()
        except SecretUnavailable:
            await abort_failed_precondition(context, "the target's stored key cannot be opened; rotate it")
        signing = current.get(target_keys.ED25519)
        return ledger_providers_pb2.GetTargetSecretResponse(
            key=secret, public_key=signing.public_key if signing is not None else ""
        )

    async def RotateTargetSecret(
        self, request: ledger_providers_pb2.RotateTargetSecretRequest, context: Context
    ) -> ledger_providers_pb2.RotateTargetSecretResponse:
        tenant_id, target_id, ring = await self._target_ring(context, request)
        algorithm = request.algorithm or target_keys.HMAC
        problems = []
        if algorithm not in target_keys.ALGORITHMS:
            problems.append(("algorithm", "must be hmac or ed25519"))
        overlap_s = request.overlap_s if request.HasField("overlap_s") else DEFAULT_OVERLAP_S
        if not 0 <= overlap_s <= MAX_OVERLAP_S:
            problems.append(("overlap_s", f"must be 0-{MAX_OVERLAP_S:.0f} seconds (7 days)"))
        if request.HasField("key"):
            why = webhook_secret_problem(request.key) if algorithm == target_keys.HMAC else "only an hmac key is given"
            if why is not None:
                problems.append(("key", why))
        if problems:
            await abort_invalid(context, problems)
        if algorithm == target_keys.ED25519:
            private_key, shown = new_ed25519_key_pair()
            make_key = target_keys.sealer(ring, algorithm, private_key, shown)
        else:
            shown = request.key if request.HasField("key") else new_webhook_secret()
            make_key = target_keys.sealer(ring, algorithm, shown)
        rotated = await self.write(_rotate, tenant_id, target_id, make_key, overlap_s)
        await found(context, "target", rotated)
        await self.notifier.publish(WEBHOOK_SECRETS, tenant_id=str(tenant_id))
        return ledger_providers_pb2.RotateTargetSecretResponse(key=shown)


def _aad(tenant_id: uuid.UUID, row: Row[Any]) -> bytes:
    return target_keys.key_aad(tenant_id, target_keys.aad_row(row.target_id, row.id))


async def _current_keys(
    conn: AsyncConnection, tenant_id: uuid.UUID, target_id: uuid.UUID, make_key: target_keys.KeyMaker
) -> list[Row[Any]] | None:
    """The target's live keys, with a current HMAC key; None when the tenant has no such target."""
    if await target_keys.target(conn, tenant_id, target_id, lock=True) is None:
        return None
    return await target_keys.ensure_current(conn, tenant_id, target_id, make_key)


async def _rotate(
    conn: AsyncConnection,
    tenant_id: uuid.UUID,
    target_id: uuid.UUID,
    make_key: target_keys.KeyMaker,
    overlap_s: float,
) -> bool | None:
    """None when the tenant has no such target."""
    if await target_keys.target(conn, tenant_id, target_id, lock=True) is None:
        return None
    await target_keys.rotate(conn, tenant_id, target_id, make_key(tenant_id, target_id), overlap_s)
    return True
