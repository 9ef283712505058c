"""The audit log: who changed what, when and from where, over HTTP and gRPC, never a secret's
value; a tenant reads its own entries, an operator everyone's; the table refuses edits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import asyncpg
import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, remember_secret
from tests.support.infra import query


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def audit_log(gateway: str, tenant: TenantKey) -> list[dict[str, Any]]:
    response = httpx.get(f"{gateway}/v1/audit-log", headers=tenant.headers)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["data"]
    return entries


def own_key_id(gateway: str, tenant: TenantKey) -> str:
    return str(httpx.get(f"{gateway}/v1/api-keys/current", headers=tenant.headers).json()["id"])


def test_a_key_creation_is_recorded_without_the_key(
    gateway: str, tenant: TenantKey, infra: dict[str, str], operator_token: str
) -> None:
    created = httpx.post(f"{gateway}/v1/api-keys", json={"name": "ci", "scopes": ["send"]}, headers=tenant.headers)
    assert created.status_code == 201
    plaintext = remember_secret(created.json()["api_key"])

    entry = audit_log(gateway, tenant)[0]
    assert entry["action"] == "POST /v1/api-keys"
    assert entry["resource_id"] == created.json()["id"]
    assert entry["actor"] == {"kind": "key", "id": own_key_id(gateway, tenant), "name": "initial"}
    assert entry["changes"] == {"name": "ci", "scopes": ["send"]}
    assert entry["address"] == "127.0.0.1"
    assert entry["at"]
    # The key itself is nowhere in the record: not in the API's answer, not in the table.
    assert plaintext not in httpx.get(f"{gateway}/v1/audit-log", headers=tenant.headers).text
    operators_view = httpx.get(
        f"{gateway}/admin/v1/audit-log",
        params={"tenant_id": tenant.tenant_id},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert operators_view.status_code == 200
    assert plaintext not in operators_view.text
    assert operators_view.json()["data"][0]["id"] == entry["id"]
    rows = query(
        infra["database_url"], "SELECT audit_log::text FROM audit_log WHERE tenant_id = $1::uuid", tenant.tenant_id
    )
    assert rows and not any(plaintext in row[0] for row in rows)


def test_a_targets_url_change_is_recorded_over_http_and_grpc(
    gateway: str, tenant: TenantKey, api: gateway_pb2_grpc.NotificationServiceStub
) -> None:
    target = httpx.post(
        f"{gateway}/v1/webhooks/targets",
        json={"url": "https://example.com/a", "headers": {"Authorization": "Bearer receiver-token-1"}},
        headers=tenant.headers,
    ).json()
    changed = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{target['id']}", json={"url": "https://example.com/b"}, headers=tenant.headers
    )
    assert changed.status_code == 200, changed.text
    api.UpdateWebhookTarget(
        gateway_pb2.NotificationServiceUpdateWebhookTargetRequest(target_id=target["id"], url="https://example.com/c"),
        metadata=(("authorization", f"Bearer {tenant.api_key}"),),
    )

    grpc_change, http_change, creation = audit_log(gateway, tenant)[:3]
    assert creation["action"] == "POST /v1/webhooks/targets"
    assert creation["resource_id"] == target["id"]
    assert creation["changes"]["headers"] == "[secret]"
    assert http_change["action"] == "PATCH /v1/webhooks/targets/{target_id}"
    assert http_change["resource_id"] == target["id"]
    assert http_change["changes"] == {"url": "https://example.com/b"}
    assert grpc_change["action"] == "grpc NotificationService/UpdateWebhookTarget"
    assert grpc_change["resource_id"] == target["id"]
    assert grpc_change["changes"] == {"target_id": target["id"], "url": "https://example.com/c"}
    assert grpc_change["actor"]["kind"] == "key"
    assert "receiver-token-1" not in httpx.get(f"{gateway}/v1/audit-log", headers=tenant.headers).text


def test_reads_and_submissions_are_not_recorded_and_refused_calls_neither(gateway: str, tenant: TenantKey) -> None:
    httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers)
    httpx.post(
        f"{gateway}/v1/webhooks", json={"url": "https://example.com/hook", "payload": {}}, headers=tenant.headers
    )
    refused = httpx.patch(
        f"{gateway}/v1/webhooks/targets/0190a0a0-0000-7000-8000-000000000000",
        json={"url": "https://x.example"},
        headers=tenant.headers,
    )
    assert refused.status_code == 404
    # Only the tenant's creation, by the operator.
    assert [e["action"] for e in audit_log(gateway, tenant)] == ["POST /admin/v1/tenants"]


def test_an_operators_change_is_recorded_as_the_operator(gateway: str, tenant: TenantKey, operator_token: str) -> None:
    operator = {"authorization": f"Bearer {operator_token}"}
    created = httpx.post(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/api-keys", json={"name": "ops"}, headers=operator
    )
    assert created.status_code == 201
    remember_secret(created.json()["api_key"])
    entry = audit_log(gateway, tenant)[0]
    assert entry["action"] == "POST /admin/v1/tenants/{tenant_id}/api-keys"
    assert entry["actor"]["kind"] == "operator"
    assert entry["resource_id"] == created.json()["id"]
    assert created.json()["api_key"] not in str(entry)


def test_the_log_refuses_updates_and_deletes(infra: dict[str, str], gateway: str, tenant: TenantKey) -> None:
    made = httpx.post(f"{gateway}/v1/api-keys", json={"name": "x"}, headers=tenant.headers)
    remember_secret(made.json()["api_key"])
    for sql in (
        "UPDATE audit_log SET actor_name = 'someone else' WHERE tenant_id = $1::uuid",
        "DELETE FROM audit_log WHERE tenant_id = $1::uuid",
    ):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            query(infra["database_url"], sql, tenant.tenant_id)
    assert [e["action"] for e in audit_log(gateway, tenant)] == ["POST /v1/api-keys", "POST /admin/v1/tenants"]


def test_the_consoles_show_the_audit_log(gateway: str, tenant: TenantKey, operator_token: str) -> None:
    for console, credential in (("/console", tenant.api_key), ("/admin/console", operator_token)):
        with httpx.Client(base_url=gateway) as browser:
            login = browser.get(f"{console}/login")
            csrf = login.text.split('name="csrf" value="')[1].split('"')[0]
            assert browser.post(f"{console}/login", data={"csrf": csrf, "credential": credential}).status_code == 303
            page = browser.get(f"{console}/audit-log")
            assert page.status_code == 200
            assert "POST /admin/v1/tenants" in page.text and 'id="audit-log"' in page.text
