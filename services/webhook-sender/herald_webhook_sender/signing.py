"""Signing deliveries: a target's with its own keys (and the tenant's secret where it still
signs beside them), a direct webhook's with the tenant's secret, when it has one.

The sealed keys are cached per tenant and target (the ledger's change notifications on
`control.webhook_secrets` evict a tenant's at once; the TTL bounds staleness if one is lost)
and opened only right before signing, so plaintext keys never sit in the cache. A rotated-out
key carries its end, so it stops signing then even while cached.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from herald.crypto import sign_payload, sign_standard_webhook, sign_standard_webhook_ed25519
from herald.expiring import ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import CALL_DEADLINE_S
from herald.secrets import KeyRing, associated_data
from herald.v1 import ledger_providers_pb2

CACHE_TTL_S = 30.0
# Must match how the ledger sealed them (herald_ledger.store.webhook_secrets, .target_keys).
TENANT_PURPOSE = "webhook-secret"
TARGET_PURPOSE = "target-signing-key"


@dataclass(frozen=True)
class SealedKey:
    algorithm: str  # "hmac" or "ed25519"
    sealed: bytes
    aad: bytes
    expires_at: float | None  # Unix time; None: the current key


@dataclass(frozen=True)
class SealedSecrets:
    keys: tuple[SealedKey, ...]


def secret_aad(tenant_id: str) -> bytes:
    return associated_data(TENANT_PURPOSE, tenant_id, "signing")


def _sealed_keys(tenant_id: str, found: ledger_providers_pb2.GetSigningSecretsResponse) -> SealedSecrets:
    keys = [
        SealedKey(
            k.algorithm,
            k.sealed,
            associated_data(TARGET_PURPOSE, tenant_id, k.aad_row),
            float(k.expires_at.ToSeconds()) if k.HasField("expires_at") else None,
        )
        for k in found.target_keys
    ]
    if found.sealed_current:
        keys.append(SealedKey("hmac", found.sealed_current, secret_aad(tenant_id), None))
    if found.sealed_previous:
        ends = float(found.previous_expires_at.ToSeconds()) if found.HasField("previous_expires_at") else None
        keys.append(SealedKey("hmac", found.sealed_previous, secret_aad(tenant_id), ends))
    return SealedSecrets(tuple(keys))


class Signer:
    def __init__(self, ledger: Ledger, ring: KeyRing | None) -> None:
        self.ledger = ledger
        self.ring = ring
        self._cache: ExpiringCache[tuple[str, str], SealedSecrets] = ExpiringCache(CACHE_TTL_S)

    def forget(self, tenant_id: str) -> None:
        self._cache.forget_where(lambda key, _keys: key[0] == tenant_id)

    async def _sealed(self, tenant_id: str, target_id: str) -> SealedSecrets:
        return await self._cache.load((tenant_id, target_id), lambda: self._fetch(tenant_id, target_id))

    async def _fetch(self, tenant_id: str, target_id: str) -> SealedSecrets:
        found = await self.ledger.providers.GetSigningSecrets(
            ledger_providers_pb2.GetSigningSecretsRequest(tenant_id=tenant_id, target_id=target_id),
            timeout=CALL_DEADLINE_S,
        )
        return _sealed_keys(tenant_id, found)

    async def prepare(self, tenant_id: str, target_id: str = "") -> SealedSecrets | None:
        """The delivery's sealed keys (None: it is signed with nothing), fetched before the
        delivery waits for a receiver slot, so no ledger call happens while a slot is held.
        Raises when the delivery should be signed but this sender cannot: never send
        unsigned what should be signed."""
        sealed = await self._sealed(tenant_id, target_id)
        if not sealed.keys:
            return None
        if self.ring is None:
            raise RuntimeError("the delivery has signing keys but no master keys are configured")
        return sealed

    def sign(self, sealed: SealedSecrets | None, job_id: str, body: bytes) -> dict[str, str]:
        """Signature headers for one delivery, timestamped now: call it right before the
        receiver call, so a delivery that waited for a slot does not arrive already old.

        `X-Webhook-Signature` is hex HMAC-SHA256 over "{timestamp}.{body}", one per HMAC key
        (comma-separated); `webhook-signature` carries the Standard Webhooks `v1,` signature of
        each HMAC key and the `v1a,` (Ed25519) signature of each key pair, space-separated.
        """
        if sealed is None:
            return {}
        assert self.ring is not None  # prepare() refused a signing delivery without keys
        now = time.time()
        live = [k for k in sealed.keys if k.expires_at is None or k.expires_at > now]
        opened = [(k.algorithm, self.ring.open(k.sealed, k.aad).decode()) for k in live]
        timestamp = int(now)
        secrets = [secret for algorithm, secret in opened if algorithm == "hmac"]
        standard = [sign_standard_webhook(s, job_id, timestamp, body) for s in secrets]
        standard += [
            sign_standard_webhook_ed25519(private, job_id, timestamp, body)
            for algorithm, private in opened
            if algorithm == "ed25519"
        ]
        headers = {"webhook-timestamp": str(timestamp), "webhook-signature": " ".join(standard)}
        if secrets:
            headers["x-webhook-timestamp"] = str(timestamp)
            headers["x-webhook-signature"] = ",".join(sign_payload(s, timestamp, body) for s in secrets)
        return headers
