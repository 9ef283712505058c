"""A webhook target's own signing key: read, and rotated with an overlap (the ledger keeps
the keys, sealed, and checks what a rotation brings); and a target's test, a signed ping sent
now by a webhook-sender (which alone holds the keys' use and reaches receivers)."""

from __future__ import annotations

from herald.config import get_settings
from herald.crypto import webhook_secret_problem
from herald.ids import TenantId, parse_id
from herald.v1 import common_pb2, ledger_providers_pb2, webhook_sender_pb2
from herald_gateway.errors import NotFound, Unavailable, ask, refuse_invalid
from herald_gateway.operations.base import OperationsBase


class TargetSecretOperations(OperationsBase):
    async def target_secret(self, tenant_id: TenantId, target_id: str) -> ledger_providers_pb2.GetTargetSecretResponse:
        """The target's current `whsec_` secret and, if it has a key pair, its `whpk_` public key."""
        if parse_id(target_id) is None:
            raise NotFound("target not found")
        request = ledger_providers_pb2.GetTargetSecretRequest(tenant_id=tenant_id, target_id=target_id)
        found: ledger_providers_pb2.GetTargetSecretResponse = await ask(
            self.ledger.providers.GetTargetSecret(request), "target"
        )
        return found

    async def rotate_target_secret(
        self,
        tenant_id: TenantId,
        target_id: str,
        key: str | None = None,
        overlap_s: float | None = None,
        algorithm: str = "",
    ) -> str:
        """The new key (a `whsec_` secret, or for `ed25519` the new `whpk_` public key). The
        ledger refuses an overlap beyond 7 days and an algorithm it does not know."""
        if parse_id(target_id) is None:
            raise NotFound("target not found")
        why = webhook_secret_problem(key) if key is not None else None
        refuse_invalid([("key", why)] if why is not None else [])
        request = ledger_providers_pb2.RotateTargetSecretRequest(
            tenant_id=tenant_id, target_id=target_id, algorithm=algorithm
        )
        if key is not None:
            request.key = key
        if overlap_s is not None:
            request.overlap_s = overlap_s
        rotated = await ask(self.ledger.providers.RotateTargetSecret(request), "target")
        new_key: str = rotated.key
        return new_key

    async def ping_target(self, tenant_id: TenantId, target_id: str) -> common_pb2.TargetPing:
        """What the target's receiver answered a signed `herald.ping` sent now."""
        if parse_id(target_id) is None:
            raise NotFound("target not found")
        if self.webhook_sender is None:
            raise Unavailable("targets cannot be tested here (no webhook-sender address)")
        request = webhook_sender_pb2.PingTargetRequest(tenant_id=tenant_id, target_id=target_id)
        # The sender's own call is bounded by its receiver timeout; this bounds the hop.
        answer = await ask(
            self.webhook_sender.PingTarget(request, timeout=get_settings().webhook_timeout_s + 10), "target"
        )
        ping: common_pb2.TargetPing = answer.ping
        return ping
