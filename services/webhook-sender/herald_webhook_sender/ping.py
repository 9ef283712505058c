"""A target's test: one signed `herald.ping` event sent now, exactly as a delivery to the
target goes (its URL, its headers opened, its own keys, through the target guard), whose
answer is returned to the tenant instead of being judged: no job, no attempt record, no retry.
It lets a tenant check a receiver's URL, credentials and signature check before events flow."""

from __future__ import annotations

from datetime import UTC, datetime

import grpc
import orjson

from herald.grpcio.ledger import Ledger
from herald.ids import new_id
from herald.v1 import common_pb2, ledger_subscriptions_pb2, webhook_sender_pb2
from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.sealed_headers import delivered_headers
from herald_webhook_sender.client import call_receiver
from herald_webhook_sender.signing import Signer

PING_EVENT = "herald.ping"
EXCERPT_CHARS = 1024


class TargetMissing(Exception):
    """The tenant has no such target."""


async def ping_target(
    ledger: Ledger, signer: Signer, http: ReceiverClient, tenant_id: str, target_id: str
) -> webhook_sender_pb2.PingTargetResponse:
    try:
        found = await ledger.subscriptions.GetWebhookTarget(
            ledger_subscriptions_pb2.GetWebhookTargetRequest(tenant_id=tenant_id, target_id=target_id)
        )
    except grpc.aio.AioRpcError as error:
        if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            raise TargetMissing(target_id) from error
        raise
    target = found.target
    ping_id = f"ping_{new_id()}"
    sent_at = datetime.now(UTC)
    body = orjson.dumps(
        {"type": PING_EVENT, "target_id": target.id, "ping_id": ping_id, "sent_at": sent_at.isoformat()}
    )
    request = common_pb2.WebhookRequest(
        url=target.url,
        headers={**target.headers, "X-Herald-Event-Id": ping_id, "X-Herald-Event-Type": PING_EVENT},
        sealed_headers=target.sealed_headers,
        body=body,
        content_type="application/json",
    )
    sealed = await signer.prepare(tenant_id, target_id)
    signature = signer.sign(sealed, ping_id, body)
    result = await call_receiver(http, ping_id, request, signature, delivered_headers(signer.ring, tenant_id, request))
    answer = common_pb2.TargetPing(
        ping_id=ping_id,
        status_code=result.status_code or 0,
        duration_ms=result.duration_ms,
        response_excerpt=result.response_excerpt[:EXCERPT_CHARS],
        error=str(result.error) if result.error is not None else "",
    )
    answer.sent_at.FromDatetime(sent_at)
    return webhook_sender_pb2.PingTargetResponse(ping=answer)
