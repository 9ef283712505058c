"""Webhook signing secrets: generated once, never shown again, encrypted at rest,
used to sign every delivery (checked with the official standardwebhooks library and
an independent HMAC), both secrets signing during a rotation, unsigned after delete;
and a master-key rotation that re-encrypts every stored secret while signing goes on."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from standardwebhooks.webhooks import Webhook

from herald.cli.stack import Stack
from tests.standins.postmark import PostmarkStandIn
from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Received, Receiver


def deliver(gateway: str, tenant: TenantKey, receiver: Receiver, payload: object) -> Received:
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": payload}, headers=tenant.headers)
    assert sent.status_code == 202, sent.text
    assert wait_for_status(gateway, tenant, sent.json()["id"])["status"] == "delivered"
    [received] = receiver.for_job(sent.json()["id"])
    return received


def independent_signatures(secret: str, received: Received) -> list[str]:
    """What a receiver computes by hand from the mission's rule."""
    message = received.headers["x-webhook-timestamp"].encode() + b"." + received.body
    return [hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()]


def verify_standard(secret: str, received: Received) -> object:
    headers = {k: received.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    return Webhook(secret).verify(received.body, headers)


def test_signing_secret_lifecycle(gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]) -> None:
    unsigned = deliver(gateway, tenant, receiver, {"n": 0})
    assert "x-webhook-signature" not in unsigned.headers

    made = httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers)
    assert made.status_code == 201
    secret = remember_secret(made.json()["secret"])
    assert secret.startswith("whsec_")
    assert httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers).status_code == 409
    status = httpx.get(f"{gateway}/v1/webhook-secret", headers=tenant.headers).json()
    assert status["exists"] is True and "secret" not in status
    [row] = query(
        infra["database_url"], "SELECT sealed_current FROM webhook_secrets WHERE tenant_id = $1::uuid", tenant.tenant_id
    )
    assert secret.encode() not in bytes(row[0])

    signed = deliver(gateway, tenant, receiver, {"n": 1})
    assert signed.headers["x-webhook-signature"] in independent_signatures(secret, signed)
    assert verify_standard(secret, signed) == {"n": 1}

    rotated = httpx.post(f"{gateway}/v1/webhook-secret/rotate", headers=tenant.headers)
    assert rotated.status_code == 200 and rotated.json()["previous_expires_at"]
    new_secret = remember_secret(rotated.json()["secret"])
    during = deliver(gateway, tenant, receiver, {"n": 2})
    signatures = during.headers["x-webhook-signature"].split(",")
    assert independent_signatures(new_secret, during)[0] in signatures
    assert independent_signatures(secret, during)[0] in signatures, "the previous secret still signs"
    assert verify_standard(new_secret, during) == {"n": 2}
    assert verify_standard(secret, during) == {"n": 2}

    assert httpx.delete(f"{gateway}/v1/webhook-secret", headers=tenant.headers).status_code == 204
    assert httpx.get(f"{gateway}/v1/webhook-secret", headers=tenant.headers).json() == {
        "exists": False,
        "created_at": None,
        "rotated_at": None,
        "previous_expires_at": None,
    }
    after = deliver(gateway, tenant, receiver, {"n": 3})
    assert "x-webhook-signature" not in after.headers and "webhook-signature" not in after.headers


def test_master_key_rotation_reencrypts_every_row_and_signing_goes_on(
    stack: Stack,
    gateway: str,
    tenant: TenantKey,
    receiver: Receiver,
    sendgrid: SendGridStandIn,
    postmark: PostmarkStandIn,
    infra: dict[str, str],
) -> None:
    secret = remember_secret(httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers).json()["secret"])
    key = remember_secret(sendgrid.add_key("SG.rotation-key-hhhh8888"))
    created = httpx.post(
        f"{gateway}/v1/providers",
        json={"provider": "sendgrid", "api_key": key, "base_url": sendgrid.base_url},
        headers=tenant.headers,
        timeout=30,
    )
    assert created.status_code == 201
    # Postmark's account token is sealed with its server token: rotated with it.
    account_token = remember_secret(postmark.add_account_token("pm-account-rotation-0123456789zz"))
    server_token = remember_secret(postmark.add_token("pm-server-rotation-0123456789ab"))
    with_account = httpx.post(
        f"{gateway}/v1/providers",
        json={
            "provider": "postmark",
            "api_key": server_token,
            "account_token": account_token,
            "base_url": postmark.base_url,
        },
        headers=tenant.headers,
        timeout=30,
    )
    assert with_account.status_code == 201, with_account.text

    # Make k2 the active key everywhere (k1 stays in the ring to open old rows) ...
    for name in ("ledger", "webhook-sender", "email-sender"):
        stack.restart(name, {"HERALD_MASTER_KEY_ID": "k2"})
    # ... then re-encrypt, through the operator CLI, while the stack serves.
    env = {
        **os.environ,
        "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"],
        "HERALD_OPERATOR_TOKEN": Path(stack.endpoints["operator_token_file"]).read_text().strip(),
    }
    herald = str(Path(sys.executable).parent / "herald")
    done = subprocess.run([herald, "keys", "rotate", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"active_key_id": "k2"' in done.stdout

    # Rows other tests tampered with on purpose are reported, not re-encrypted; every other row moved.
    unreadable = set(json.loads(done.stdout)["unreadable_ids"])
    stale = query(
        infra["database_url"],
        "SELECT 'provider:' || id FROM provider_credentials WHERE key_id <> 'k2'"
        " UNION ALL SELECT 'webhook-secret:' || tenant_id FROM webhook_secrets"
        " WHERE current_key_id <> 'k2' OR previous_key_id <> 'k2'",
    )
    assert {row[0] for row in stale} == unreadable, "every stored secret that opens is under the new key"
    listed = httpx.get(f"{gateway}/v1/providers", headers=tenant.headers).json()["data"]
    assert sorted((p["masked_secret"], p["masked_account_token"]) for p in listed) == [
        ("SG.****8888", None),
        ("pm-****89ab", "****zz"),
    ]
    # The email-sender opens the re-sealed credential (under k2) for Postmark's domains API.
    domain = httpx.post(
        f"{gateway}/v1/domains",
        json={"domain": "rotated.acme.example", "provider_id": with_account.json()["id"]},
        headers=tenant.headers,
        timeout=30,
    )
    assert domain.status_code == 201, domain.text
    assert postmark.received("POST", "/domains")[-1].headers["x-postmark-account-token"] == account_token
    signed = deliver(gateway, tenant, receiver, {"after": "rotation"})
    assert verify_standard(secret, signed) == {"after": "rotation"}
