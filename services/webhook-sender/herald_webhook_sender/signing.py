"""Signing deliveries with the tenant's secret, when it has one.

The sealed secrets are cached per tenant (the ledger's change notifications evict
them at once; the TTL bounds staleness if one is lost) and opened only right
before signing, so plaintext secrets never sit in the cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from herald.crypto import sign_payload, sign_standard_webhook
from herald.expiring import MISSING, ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.secrets import KeyRing, associated_data
from herald.v1 import ledger_providers_pb2

CACHE_TTL_S = 30.0


@dataclass(frozen=True)
class SealedSecrets:
    current: bytes
    previous: bytes


def secret_aad(tenant_id: str) -> bytes:
    # Must match how the ledger sealed it (herald_ledger.store.webhook_secrets).
    return associated_data("webhook-secret", tenant_id, "signing")


class Signer:
    def __init__(self, ledger: Ledger, ring: KeyRing | None) -> None:
        self.ledger = ledger
        self.ring = ring
        self._cache: ExpiringCache[str, SealedSecrets] = ExpiringCache(CACHE_TTL_S)

    def forget(self, tenant_id: str) -> None:
        self._cache.forget(tenant_id)

    async def _sealed(self, tenant_id: str) -> SealedSecrets:
        cached = self._cache.get(tenant_id)
        if cached is not MISSING:
            return cached
        found = await self.ledger.providers.GetSigningSecrets(
            ledger_providers_pb2.GetSigningSecretsRequest(tenant_id=tenant_id)
        )
        sealed = SealedSecrets(found.sealed_current, found.sealed_previous)
        self._cache.put(tenant_id, sealed)
        return sealed

    async def prepare(self, tenant_id: str) -> SealedSecrets | None:
        """The tenant's sealed secrets (None: it signs nothing), fetched before the delivery
        waits for a receiver slot, so no ledger call happens while a slot is held. Raises
        when the tenant signs but this sender cannot: never send unsigned what should be signed."""
        sealed = await self._sealed(tenant_id)
        if not sealed.current:
            return None
        if self.ring is None:
            raise RuntimeError("the tenant has a signing secret but no master keys are configured")
        return sealed

    def sign(self, sealed: SealedSecrets | None, tenant_id: str, job_id: str, body: bytes) -> dict[str, str]:
        """Signature headers for one delivery, timestamped now: call it right before the
        receiver call, so a delivery that waited for a slot does not arrive already old.

        `X-Webhook-Signature` is hex HMAC-SHA256 over "{timestamp}.{body}" (several,
        comma-separated, while a rotated-out secret still signs); the Standard
        Webhooks headers carry the same in that specification's format.
        """
        if sealed is None:
            return {}
        assert self.ring is not None  # prepare() refused a signing tenant without keys
        aad = secret_aad(tenant_id)
        secrets = [self.ring.open(sealed.current, aad).decode()]
        if sealed.previous:
            secrets.append(self.ring.open(sealed.previous, aad).decode())
        timestamp = int(time.time())
        return {
            "x-webhook-timestamp": str(timestamp),
            "x-webhook-signature": ",".join(sign_payload(s, timestamp, body) for s in secrets),
            "webhook-timestamp": str(timestamp),
            "webhook-signature": " ".join(sign_standard_webhook(s, job_id, timestamp, body) for s in secrets),
        }
