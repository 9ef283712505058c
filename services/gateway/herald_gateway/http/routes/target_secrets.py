"""A webhook target's own signing secret: read it (receivers verify with it) and rotate it;
and test the target with a signed ping."""

from __future__ import annotations

from fastapi import APIRouter

from herald_gateway.http.deps import OperationsDep, Tenant
from herald_gateway.http.schemas.common import time_of
from herald_gateway.http.schemas.subscriptions import RotatedSecretOut, RotateSecretIn, TargetSecretOut, TargetTestOut

router = APIRouter(prefix="/v1/webhooks/targets", tags=["subscriptions"])


@router.get("/{target_id}/secret", response_model=TargetSecretOut)
async def get_secret(target_id: str, principal: Tenant, operations: OperationsDep) -> TargetSecretOut:
    """The target's current signing secret. Deliveries to the target are signed with it (and,
    for a while after a rotation, with the previous ones too); no other target's are."""
    found = await operations.target_secret(principal.tenant_id, target_id)
    return TargetSecretOut(key=found.key, public_key=found.public_key or None)


@router.post("/{target_id}/secret/rotate", response_model=RotatedSecretOut)
async def rotate_secret(
    target_id: str, principal: Tenant, operations: OperationsDep, body: RotateSecretIn | None = None
) -> RotatedSecretOut:
    """A new secret (given, or made here); the previous ones keep signing beside it for the
    overlap (24 h unless said, at most 7 days; up to 10 previous keys). `algorithm: ed25519`
    makes a new Ed25519 key pair instead: the private key stays in Herald, the answer is the
    public key."""
    body = body or RotateSecretIn()
    key = await operations.rotate_target_secret(
        principal.tenant_id, target_id, body.key, body.overlap_s, body.algorithm
    )
    return RotatedSecretOut(key=key)


@router.post("/{target_id}/test", response_model=TargetTestOut)
async def test_target(target_id: str, principal: Tenant, operations: OperationsDep) -> TargetTestOut:
    """Sends a signed `herald.ping` event to the target now, as its deliveries go (its URL, its
    headers, its keys, through the target guard), and answers what the receiver said. No job
    is made and nothing is retried; a receiver that refuses it is not a failure here."""
    answer = await operations.ping_target(principal.tenant_id, target_id)
    return TargetTestOut(
        ping_id=answer.ping_id,
        sent_at=time_of(answer, "sent_at"),
        status_code=answer.status_code or None,
        duration_ms=answer.duration_ms,
        response_excerpt=answer.response_excerpt,
        error=answer.error or None,
    )
