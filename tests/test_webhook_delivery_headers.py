"""What a receiver sees of Herald's own headers on a delivery: a tenant's header
never duplicates one Herald sets, whatever its case, and the signature's timestamp is the
moment of the call, not the moment the delivery started waiting for a free slot (and the
delivery verifies with the official standardwebhooks and svix libraries)."""

from __future__ import annotations

import hashlib
import hmac

import httpx
from standardwebhooks.webhooks import Webhook as StandardWebhook
from svix.webhooks import Webhook as SvixWebhook

from herald.config import Settings
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.receiver import Receiver

# A receiver's calls in flight at most (HERALD_WEBHOOK_TARGET_IN_FLIGHT of the session's stack, the default).
SLOTS = Settings.model_fields["webhook_target_in_flight"].default
SLOW_S = 2.5  # below the sender's 3 s timeout in the tests


def test_tenant_headers_do_not_duplicate_content_type_or_user_agent(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    sent = httpx.post(
        f"{gateway}/v1/webhooks",
        json={
            "url": receiver.url,
            "payload": {"n": 1},
            "headers": {"Content-Type": "text/x-tenant", "USER-AGENT": "tenant-agent/1", "X-Tenant": "kept"},
        },
        headers=tenant.headers,
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    [received] = receiver.for_job(job_id)
    lines = [(name.lower(), value) for name, value in received.raw_headers]
    assert [v for n, v in lines if n == "content-type"] == ["application/json"], lines
    assert [v for n, v in lines if n == "user-agent"] == ["Herald-Webhooks/0.1"], lines
    assert [v for n, v in lines if n == "x-tenant"] == ["kept"]
    assert len([n for n, _ in lines if n == "webhook-id"]) == 1


def test_the_signature_is_timestamped_when_the_call_is_made(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """Every call a receiver may have in flight is held by it for SLOW_S; a signed delivery to
    it started meanwhile can be sent only once one of them answers, and its timestamp may not be older than that."""
    made = httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers)
    assert made.status_code == 201, made.text
    secret = remember_secret(made.json()["secret"])
    receiver.behaviour.delay_path = ("/slow", SLOW_S)
    slow_url = receiver.url.replace("/hook", "/slow")
    slow = [
        httpx.post(
            f"{gateway}/v1/webhooks", json={"url": slow_url, "payload": {"slow": n}}, headers=tenant.headers
        ).json()["id"]
        for n in range(SLOTS)
    ]
    for job_id in slow:
        assert receiver.wait_for(job_id, 1, timeout=20), "the slow deliveries hold the slots"
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 2}}, headers=tenant.headers)
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "delivered"
    [received] = receiver.for_job(job_id)
    first_slot_free = min(receiver.for_job(j)[0].wall_at for j in slow) + SLOW_S
    timestamp = int(received.headers["x-webhook-timestamp"])
    assert timestamp >= int(first_slot_free), (
        f"signed at {timestamp}, but no slot was free before {first_slot_free:.2f}: "
        "the signature was made before waiting for the slot"
    )
    signature = hmac.new(secret.encode(), f"{timestamp}.".encode() + received.body, hashlib.sha256).hexdigest()
    assert received.headers["x-webhook-signature"] == signature
    # The official libraries accept it, timestamp tolerance included (sent through the receiver client).
    standard = {k: received.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    StandardWebhook(secret).verify(received.body, standard)
    SvixWebhook(secret).verify(received.body, standard)
    for slow_id in slow:
        assert wait_for_status(gateway, tenant, slow_id, timeout=60)["status"] == "delivered"
