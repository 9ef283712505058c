"""API keys: several per tenant, shown once, stored as SHA-256, revoked on every
gateway within seconds, last use recorded without a write per request."""

from __future__ import annotations

import hashlib
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from herald.cli.stack import ServiceProcess, Stack
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.infra import query


@pytest.fixture(scope="module")
def second_gateway(stack: Stack) -> Iterator[str]:
    replica: ServiceProcess = stack.add_replica("gateway")
    yield f"http://127.0.0.1:{replica.env['HERALD_HTTP_PORT']}"


def new_key(gateway: str, tenant: TenantKey, name: str) -> dict[str, str]:
    response = httpx.post(f"{gateway}/v1/api-keys", json={"name": name}, headers=tenant.headers)
    assert response.status_code == 201, response.text
    body = response.json()
    remember_secret(body["api_key"])
    return dict(body)


def wait_until(check: object, timeout: float = 10.0) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():  # type: ignore[operator]
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_key_lifecycle_revocation_reaches_a_second_gateway_within_seconds(
    gateway: str, second_gateway: str, tenant: TenantKey
) -> None:
    created = new_key(gateway, tenant, "ci")
    assert created["api_key"].startswith(f"hk_live_{created['public_id']}_")
    headers = {"authorization": f"Bearer {created['api_key']}"}
    # Used on both gateways, so both have it cached (the cache TTL in tests is 300 s).
    for url in (gateway, second_gateway):
        assert httpx.get(f"{url}/v1/jobs", headers=headers).status_code == 200

    assert httpx.delete(f"{gateway}/v1/api-keys/{created['id']}", headers=tenant.headers).status_code == 204
    took = wait_until(lambda: httpx.get(f"{second_gateway}/v1/jobs", headers=headers).status_code == 401)
    assert httpx.get(f"{gateway}/v1/jobs", headers=headers).status_code == 401
    # The tenant's other keys keep working.
    assert httpx.get(f"{second_gateway}/v1/jobs", headers=tenant.headers).status_code == 200
    from tests.conftest import report

    report(f"API key revocation reached a second gateway in {took:.2f} s (cache TTL 300 s: by NATS notification)")


def test_several_keys_listed_without_secrets_and_stored_as_sha256(
    gateway: str, tenant: TenantKey, infra: dict[str, str]
) -> None:
    first, second = new_key(gateway, tenant, "one"), new_key(gateway, tenant, "two")
    for key in (first, second):
        assert httpx.get(f"{gateway}/v1/jobs", headers={"authorization": f"Bearer {key['api_key']}"}).status_code == 200
    listed = httpx.get(f"{gateway}/v1/api-keys", headers=tenant.headers).json()["data"]
    assert {first["id"], second["id"]} <= {k["id"] for k in listed}
    assert all("api_key" not in k for k in listed)
    stored = query(infra["database_url"], "SELECT key_hash FROM api_keys WHERE id = $1::uuid", first["id"])[0][0]
    assert bytes(stored) == hashlib.sha256(first["api_key"].encode()).digest()

    def last_used_recorded() -> bool:
        keys = httpx.get(f"{gateway}/v1/api-keys", headers=tenant.headers).json()["data"]
        return all(k["last_used_at"] for k in keys if k["id"] in (first["id"], second["id"]))

    wait_until(last_used_recorded)


def test_last_use_is_batched_not_written_per_request(
    stack: Stack, gateway: str, operator_token: str, infra: dict[str, str]
) -> None:
    """A gateway that flushes hourly serves 30 requests without writing last-used
    once; a graceful stop hands its batch to the ledger."""
    replica = stack.add_replica("gateway", {"HERALD_API_KEY_TOUCH_INTERVAL_S": "3600"})
    replica_name = next(n for n, s in stack.services.items() if s is replica)
    url = f"http://127.0.0.1:{replica.env['HERALD_HTTP_PORT']}"
    tenant = create_tenant(gateway, operator_token, "batched-use")

    def last_used() -> object:
        return query(
            infra["database_url"], "SELECT last_used_at FROM api_keys WHERE tenant_id = $1::uuid", tenant.tenant_id
        )[0][0]

    for _ in range(30):
        assert httpx.get(f"{url}/v1/jobs", headers=tenant.headers).status_code == 200
    assert last_used() is None, "no database write per request"
    stack.kill(replica_name, signal.SIGTERM)
    assert last_used() is not None, "the batch is written at shutdown"


def test_another_tenants_key_cannot_be_revoked(gateway: str, tenant: TenantKey, operator_token: str) -> None:
    other = create_tenant(gateway, operator_token, "key-owner")
    key = new_key(gateway, other, "victim")
    assert httpx.delete(f"{gateway}/v1/api-keys/{key['id']}", headers=tenant.headers).status_code == 404
    assert httpx.get(f"{gateway}/v1/jobs", headers={"authorization": f"Bearer {key['api_key']}"}).status_code == 200


def test_disabling_a_tenant_stops_its_keys(
    gateway: str, second_gateway: str, tenant: TenantKey, operator_token: str
) -> None:
    admin = {"authorization": f"Bearer {operator_token}"}
    assert httpx.get(f"{second_gateway}/v1/jobs", headers=tenant.headers).status_code == 200
    patched = httpx.patch(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", json={"disabled": True}, headers=admin)
    assert patched.status_code == 200 and patched.json()["disabled"] is True
    wait_until(lambda: httpx.get(f"{second_gateway}/v1/jobs", headers=tenant.headers).status_code == 401)
    httpx.patch(f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", json={"disabled": False}, headers=admin)
    wait_until(lambda: httpx.get(f"{second_gateway}/v1/jobs", headers=tenant.headers).status_code == 200)
