"""The verifier's inbound receivers for tenants' email providers (SendGrid, Resend, Postmark): a tenant configures
what Herald verifies each provider with, never reading a secret back; a replaced secret applies at once; genuinely
signed requests are accepted and stored once, forged, modified, stale, incomplete and misdirected ones refused
(storing nothing), and every verdict counted."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from herald.cli.stack import Stack
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.inbound import new_resend_secret, put, stored_events
from tests.verifier import corpus


@pytest.fixture(scope="module")
def verifier_metrics(stack: Stack) -> str:
    return f"http://127.0.0.1:{stack.services['verifier'].env['HERALD_METRICS_PORT']}/metrics"


@dataclass
class Setup:
    """One provider configured for a tenant: how to sign a body the way the provider does, with this tenant's
    key, and the other ways a request can go wrong."""

    provider: str
    sign: Callable[[bytes, int], dict[str, str]]
    body: Callable[[], bytes]
    # A header the scheme requires.
    required_header: str
    timestamped: bool


def configure(gateway: str, tenant: TenantKey, provider: str) -> Setup:
    if provider == "sendgrid":
        private = ec.generate_private_key(ec.SECP256R1())
        put(gateway, tenant, "sendgrid", {"public_key": corpus.sendgrid_public_key(private)})

        def sendgrid_body() -> bytes:
            event = {
                "email": "ana@example.net",
                "timestamp": int(time.time()),
                "event": "delivered",
                "sg_event_id": secrets.token_urlsafe(16),
                "sg_message_id": "abc.filter0001",
            }
            return json.dumps([event]).encode() + b"\r\n"

        return Setup(
            "sendgrid",
            lambda body, ts: corpus.sendgrid_headers(private, body, timestamp=ts),
            sendgrid_body,
            "X-Twilio-Email-Event-Webhook-Signature",
            True,
        )
    if provider == "resend":
        secret = new_resend_secret()
        put(gateway, tenant, "resend", {"secret": secret})

        def resend_body() -> bytes:
            return json.dumps(
                {
                    "type": "email.delivered",
                    "created_at": datetime.now(UTC).isoformat(),
                    "data": {"email_id": str(uuid.uuid4()), "to": ["ana@example.net"]},
                }
            ).encode()

        return Setup(
            "resend",
            lambda body, ts: corpus.resend_headers(secret, body, timestamp=ts, msg_id=f"msg_{secrets.token_hex(8)}"),
            resend_body,
            "svix-signature",
            True,
        )
    created = put(gateway, tenant, "postmark", {})
    username, password = created["username"], remember_secret(created["password"])

    def postmark_body() -> bytes:
        return json.dumps(
            {
                "RecordType": "Delivery",
                "MessageID": str(uuid.uuid4()),
                "Recipient": "ana@example.net",
                "DeliveredAt": datetime.now(UTC).isoformat(),
            }
        ).encode()

    return Setup(
        "postmark", lambda body, ts: corpus.postmark_headers(username, password), postmark_body, "Authorization", False
    )


def test_inbound_configuration_never_reads_back_a_secret(gateway: str, tenant: TenantKey) -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    public_key = corpus.sendgrid_public_key(private)
    secret = new_resend_secret()
    assert put(gateway, tenant, "sendgrid", {"public_key": public_key})["public_key"] == public_key
    assert "secret" not in put(gateway, tenant, "resend", {"secret": secret})
    created = put(gateway, tenant, "postmark", {})
    remember_secret(created["password"])
    assert created["username"].startswith("pm_") and len(created["password"]) > 30
    assert created["webhook_path"] == f"/inbound/postmark/{tenant.tenant_id}"

    listed = httpx.get(f"{gateway}/v1/inbound", headers=tenant.headers, timeout=10)
    assert listed.status_code == 200
    text = listed.text
    assert secret not in text and created["password"] not in text
    assert {c["provider"] for c in listed.json()["data"]} == {"sendgrid", "resend", "postmark"}
    one = httpx.get(f"{gateway}/v1/inbound/postmark", headers=tenant.headers, timeout=10).json()
    assert one["username"] == created["username"] and "password" not in one

    bad = httpx.put(f"{gateway}/v1/inbound/resend", json={"secret": "not base64 at all!"}, headers=tenant.headers)
    assert bad.status_code == 422
    bad = httpx.put(f"{gateway}/v1/inbound/sendgrid", json={"public_key": "SG.notakey"}, headers=tenant.headers)
    assert bad.status_code == 422
    assert httpx.delete(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 204
    assert httpx.get(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 404


def test_a_replaced_secret_applies_at_once(gateway: str, tenant: TenantKey, verifier: str) -> None:
    url = f"{verifier}/inbound/resend/{tenant.tenant_id}"
    first, second = new_resend_secret(), new_resend_secret()
    put(gateway, tenant, "resend", {"secret": first})
    body = json.dumps({"type": "email.opened", "data": {"email_id": "e1", "to": ["a@example.net"]}}).encode()
    signed = corpus.resend_headers(first, body, timestamp=int(time.time()), msg_id="msg_first")
    assert httpx.post(url, content=body, headers=signed, timeout=10).status_code == 200

    put(gateway, tenant, "resend", {"secret": second})  # the verifier's cached key is evicted by notification
    deadline = time.monotonic() + 2
    while True:
        stale_key = corpus.resend_headers(first, body, timestamp=int(time.time()), msg_id="msg_old_key")
        if httpx.post(url, content=body, headers=stale_key, timeout=10).status_code == 401:
            break
        assert time.monotonic() < deadline, "the replaced secret is still accepted"
        time.sleep(0.05)
    fresh = corpus.resend_headers(second, body, timestamp=int(time.time()), msg_id="msg_new_key")
    assert httpx.post(url, content=body, headers=fresh, timeout=10).status_code == 200

    assert httpx.delete(f"{gateway}/v1/inbound/resend", headers=tenant.headers).status_code == 204
    time.sleep(0.3)
    again = corpus.resend_headers(second, body, timestamp=int(time.time()), msg_id="msg_after_delete")
    assert httpx.post(url, content=body, headers=again, timeout=10).status_code == 401


@pytest.mark.parametrize("provider", ["sendgrid", "resend", "postmark"])
def test_tenant_receivers_accept_genuine_and_refuse_everything_else(
    gateway: str,
    operator_token: str,
    verifier: str,
    verifier_metrics: str,
    infra: dict[str, str],
    provider: str,
) -> None:
    mine = create_tenant(gateway, operator_token, f"inbound-mine-{provider}")
    theirs = create_tenant(gateway, operator_token, f"inbound-theirs-{provider}")
    setup = configure(gateway, mine, provider)
    other = configure(gateway, theirs, provider)
    url = f"{verifier}/inbound/{provider}/{mine.tenant_id}"
    now = int(time.time())

    def post(body: bytes, headers: dict[str, str], target: str = url) -> int:
        return httpx.post(target, content=body, headers=headers, timeout=10).status_code

    # Refusals first: nothing may be stored for any of them.
    body = setup.body()
    signed = setup.sign(body, now)
    assert post(body, other.sign(body, now)) == 401  # another tenant's key or credentials
    if provider != "postmark":  # Postmark signs nothing: its Basic credentials cover the sender, not the body
        assert post(corpus.flip_one_byte(body), signed) == 401  # modified body
    assert post(body, corpus.without(signed, setup.required_header)) == 401  # missing header
    if setup.timestamped:
        assert post(body, setup.sign(body, now - 3600)) == 401  # stale timestamp
    wrong = configure(gateway, create_tenant(gateway, operator_token, f"inbound-wrong-{provider}"), provider)
    assert post(body, wrong.sign(body, now)) == 401  # wrong secret
    # The refusal says why, as problem details the sender's developer can act on.
    forged = httpx.post(url, content=body, headers=wrong.sign(body, now), timeout=10)
    assert forged.headers["content-type"] == "application/problem+json"
    assert forged.json()["status"] == 401 and "does not match" in forged.json()["detail"]
    unsigned = httpx.post(url, content=body, headers=corpus.without(signed, setup.required_header), timeout=10)
    assert unsigned.json()["status"] == 401 and unsigned.json()["detail"]
    assert post(body, signed, f"{verifier}/inbound/{provider}/{uuid.uuid4()}") == 401  # unknown tenant
    assert post(body, signed, f"{verifier}/inbound/{provider}/not-a-tenant") == 401
    assert stored_events(infra["database_url"], mine) == 0

    # Genuine: accepted and stored once; a replay of the same request is answered 200 and does nothing.
    assert post(body, signed) == 200
    assert stored_events(infra["database_url"], mine) == 1
    assert post(body, signed) == 200
    assert stored_events(infra["database_url"], mine) == 1
    assert stored_events(infra["database_url"], theirs) == 0

    # Too large: 413 before anything is verified, stating the limit.
    too_large = httpx.post(url, content=b"[" + b" " * (2 * 1024 * 1024) + b"]", headers=signed, timeout=10)
    assert too_large.status_code == 413 and "limit of 1 MiB" in too_large.json()["detail"]

    # Every refusal and acceptance is counted by provider and reason.
    metrics = httpx.get(verifier_metrics, timeout=10).text
    for result in ("ok", "bad_signature", "missing_header", "unknown_tenant"):
        assert f'herald_inbound_verifications_total{{provider="{provider}",result="{result}"}}' in metrics
    # And like every HTTP route, by route template and status (no tenant id in the labels).
    route = f"/inbound/{provider}/{{tenant}}"
    for status in ("200", "401", "413"):
        series = f'method="POST",route="{route}",service="verifier",status="{status}"'
        assert f"herald_http_request_duration_seconds_count{{{series}}}" in metrics
