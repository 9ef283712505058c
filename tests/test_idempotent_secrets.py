"""POSTs that mint a secret shown once (an API key, a webhook signing secret, a target's
rotated key) may carry an Idempotency-Key like any other POST, but their answer is not kept with
the secret in it: a replay answers 409 with what was created and without the secret. Keys are
deleted once their 24 hours are over. (tests/test_zz_secret_hygiene.py then finds none of these secrets stored.)"""

from __future__ import annotations

import time
import uuid

import httpx

from tests.standins.sendgrid import SendGridStandIn
from tests.support.api import TenantKey, remember_secret
from tests.support.infra import query


def post(gateway: str, tenant: TenantKey, path: str, key: str, body: object = None) -> httpx.Response:
    headers = {**tenant.headers, "idempotency-key": key}
    return httpx.post(f"{gateway}{path}", json=body, headers=headers, timeout=30)


def stored_body(infra: dict[str, str], tenant: TenantKey, key: str) -> bytes:
    [row] = query(
        infra["database_url"],
        "SELECT body FROM idempotency_keys WHERE tenant_id = $1::uuid AND key = $2",
        tenant.tenant_id,
        key,
    )
    return bytes(row["body"] or b"")


def test_a_new_api_key_is_not_kept_for_replay(gateway: str, tenant: TenantKey, infra: dict[str, str]) -> None:
    key = f"create-key-{uuid.uuid4()}"
    first = post(gateway, tenant, "/v1/api-keys", key, {"name": "deploy bot"})
    assert first.status_code == 201, first.text
    secret = remember_secret(first.json()["api_key"], keyed="api_key")
    again = post(gateway, tenant, "/v1/api-keys", key, {"name": "deploy bot"})
    assert again.status_code == 409, again.text
    problem = again.json()
    assert problem["type"].endswith("/secret-not-replayed")
    assert again.headers["idempotent-replayed"] == "true"
    assert problem["created"]["id"] == first.json()["id"] and "api_key" not in problem["created"]
    assert secret not in again.text
    assert secret.encode() not in stored_body(infra, tenant, key)
    # The key made by the first request works; the replay made no second one.
    names = [k["name"] for k in httpx.get(f"{gateway}/v1/api-keys", headers=tenant.headers).json()["data"]]
    assert names.count("deploy bot") == 1


def test_a_signing_secret_is_not_kept_for_replay(gateway: str, tenant: TenantKey, infra: dict[str, str]) -> None:
    for path, status in (("/v1/webhook-secret", 201), ("/v1/webhook-secret/rotate", 200)):
        key = f"secret-{uuid.uuid4()}"
        first = post(gateway, tenant, path, key)
        assert first.status_code == status, first.text
        secret = remember_secret(first.json()["secret"], keyed="signing_secret")
        again = post(gateway, tenant, path, key)
        assert again.status_code == 409, again.text
        assert again.json()["type"].endswith("/secret-not-replayed")
        assert secret not in again.text
        assert secret.encode() not in stored_body(infra, tenant, key)


def test_a_target_key_is_not_kept_for_replay(gateway: str, tenant: TenantKey, infra: dict[str, str]) -> None:
    """A target's rotation answers its new key: neither it nor a key the request brings is kept."""
    target = httpx.post(
        f"{gateway}/v1/webhooks/targets", json={"url": "https://example.com/k"}, headers=tenant.headers, timeout=30
    ).json()
    path = f"/v1/webhooks/targets/{target['id']}/secret/rotate"
    key = f"target-key-{uuid.uuid4()}"
    first = post(gateway, tenant, path, key, {"overlap_s": 60})
    assert first.status_code == 200, first.text
    secret = remember_secret(first.json()["key"], keyed="target_key")
    again = post(gateway, tenant, path, key, {"overlap_s": 60})
    assert again.status_code == 409 and again.json()["type"].endswith("/secret-not-replayed")
    assert secret not in again.text
    assert secret.encode() not in stored_body(infra, tenant, key)


def test_a_provider_key_sent_with_an_idempotency_key_is_not_stored(
    gateway: str, tenant: TenantKey, sendgrid: SendGridStandIn, infra: dict[str, str]
) -> None:
    api_key = remember_secret(sendgrid.add_key("SG.idempotentProvider0123.AbCdEfGhIjKlMnOpQr"), keyed="provider_key")
    key = f"provider-{uuid.uuid4()}"
    body = {"provider": "sendgrid", "api_key": api_key, "base_url": sendgrid.base_url}
    first = post(gateway, tenant, "/v1/providers", key, body)
    assert first.status_code == 201, first.text
    again = post(gateway, tenant, "/v1/providers", key, body)
    assert again.status_code == 201 and again.json() == first.json()
    assert api_key.encode() not in stored_body(infra, tenant, key)


def test_idempotency_keys_are_deleted_after_their_24_hours(
    gateway: str, tenant: TenantKey, infra: dict[str, str]
) -> None:
    old, fresh = f"old-{uuid.uuid4()}", f"fresh-{uuid.uuid4()}"
    for key in (old, fresh):
        assert post(gateway, tenant, "/v1/suppressions", key, {"address": f"{key}@example.com"}).status_code < 300
    query(
        infra["database_url"],
        "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE tenant_id = $1::uuid AND key = $2",
        tenant.tenant_id,
        old,
    )
    deadline = time.monotonic() + 20
    remaining = {old, fresh}
    while old in remaining and time.monotonic() < deadline:
        time.sleep(0.2)
        rows = query(
            infra["database_url"], "SELECT key FROM idempotency_keys WHERE tenant_id = $1::uuid", tenant.tenant_id
        )
        remaining = {r["key"] for r in rows}
    assert old not in remaining, "the expired key is still stored"
    assert fresh in remaining
