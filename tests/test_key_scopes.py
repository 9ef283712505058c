"""Scoped API keys: a key does only what its scopes allow, over HTTP and gRPC alike, and the
refusal names the scope it lacks. Keys made without scopes (every key from before) do everything."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from herald_gateway.scopes import ALL_SCOPES, RPC_TWINS, route_scope

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, openapi_document, remember_secret


def scoped_key(gateway: str, tenant: TenantKey, *scopes: str) -> TenantKey:
    response = httpx.post(
        f"{gateway}/v1/api-keys", json={"name": "-".join(scopes), "scopes": list(scopes)}, headers=tenant.headers
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert sorted(body["scopes"]) == sorted(scopes)
    return TenantKey(tenant.tenant_id, remember_secret(body["api_key"]))


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def metadata(key: TenantKey) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {key.api_key}"),)


def missing_scope(error: grpc.RpcError) -> str:
    """The scope a PERMISSION_DENIED names in its rich status."""
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED  # type: ignore[attr-defined]
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.metadata["scope"])
    raise AssertionError("no ErrorInfo in the status")


def test_a_read_key_lists_jobs_but_cannot_send_over_http(gateway: str, tenant: TenantKey) -> None:
    reader = scoped_key(gateway, tenant, "read")
    assert httpx.get(f"{gateway}/v1/jobs", headers=reader.headers).status_code == 200
    refused = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": "https://example.com/hook", "payload": {}}, headers=reader.headers
    )
    assert refused.status_code == 403
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["missing_scope"] == "send"
    assert "send" in refused.json()["detail"]


def test_a_read_key_lists_jobs_but_cannot_send_over_grpc(
    gateway: str, tenant: TenantKey, api: gateway_pb2_grpc.NotificationServiceStub
) -> None:
    reader = scoped_key(gateway, tenant, "read")
    api.ListJobs(gateway_pb2.NotificationServiceListJobsRequest(), metadata=metadata(reader))
    with pytest.raises(grpc.RpcError) as refused:
        api.SendWebhook(
            gateway_pb2.SendWebhookRequest(url="https://example.com/hook", body=b"{}"), metadata=metadata(reader)
        )
    assert missing_scope(refused.value) == "send"


def test_a_send_key_cannot_create_a_target_over_http_or_grpc(
    gateway: str, tenant: TenantKey, api: gateway_pb2_grpc.NotificationServiceStub
) -> None:
    sender = scoped_key(gateway, tenant, "send")
    refused = httpx.post(
        f"{gateway}/v1/webhooks/targets", json={"url": "https://example.com/hook"}, headers=sender.headers
    )
    assert refused.status_code == 403
    assert refused.json()["missing_scope"] == "manage"
    with pytest.raises(grpc.RpcError) as denied:
        api.CreateWebhookTarget(
            gateway_pb2.NotificationServiceCreateWebhookTargetRequest(
                target=common_pb2.WebhookTarget(url="https://example.com/hook")
            ),
            metadata=metadata(sender),
        )
    assert missing_scope(denied.value) == "manage"
    # Nothing was made by either attempt.
    listed = httpx.get(f"{gateway}/v1/webhooks/targets", headers=tenant.headers).json()
    assert listed["data"] == []
    # It can still send, and cannot read what it sent.
    sent = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": "https://example.com/hook", "payload": {}}, headers=sender.headers
    )
    assert sent.status_code == 202, sent.text
    assert httpx.get(f"{gateway}/v1/jobs/{sent.json()['id']}", headers=sender.headers).status_code == 403


def test_a_key_grants_no_more_than_it_has_and_unknown_scopes_are_invalid(gateway: str, tenant: TenantKey) -> None:
    keeper = scoped_key(gateway, tenant, "keys", "read")
    beyond = httpx.post(f"{gateway}/v1/api-keys", json={"name": "x", "scopes": ["send"]}, headers=keeper.headers)
    assert beyond.status_code == 403 and beyond.json()["missing_scope"] == "send"
    # No scopes means every scope: more than this key has.
    everything = httpx.post(f"{gateway}/v1/api-keys", json={"name": "x"}, headers=keeper.headers)
    assert everything.status_code == 403
    assert scoped_key(gateway, keeper, "read")
    unknown = httpx.post(f"{gateway}/v1/api-keys", json={"name": "x", "scopes": ["admin"]}, headers=tenant.headers)
    assert unknown.status_code == 422


def test_a_key_without_scopes_has_them_all_and_lists_them(gateway: str, tenant: TenantKey) -> None:
    keys = httpx.get(f"{gateway}/v1/api-keys", headers=tenant.headers).json()["data"]
    assert all(sorted(key["scopes"]) == sorted(ALL_SCOPES) for key in keys)
    current = httpx.get(f"{gateway}/v1/api-keys/current", headers=tenant.headers).json()
    assert sorted(current["scopes"]) == sorted(ALL_SCOPES)


def test_a_key_without_console_cannot_sign_in_to_the_console(gateway: str, tenant: TenantKey) -> None:
    reader = scoped_key(gateway, tenant, "read", "manage")
    with httpx.Client(base_url=gateway) as browser:
        page = browser.get("/console/login")
        csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        refused = browser.post("/console/login", data={"csrf": csrf, "credential": reader.api_key})
        assert refused.status_code == 403
        assert "console" in refused.text
        assert "herald_console" not in refused.cookies


def test_every_tenant_route_and_rpc_has_a_scope(gateway: str) -> None:
    """The one table (herald_gateway.scopes) covers every route of the API and every RPC of
    NotificationService, and each RPC's twin is a real route."""
    document = openapi_document(gateway)
    routes = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        if path.startswith("/v1/")
        for method in operations
    }
    for method, path in routes:
        assert route_scope(method, path) in ALL_SCOPES
    rpcs = {m.name for m in gateway_pb2.DESCRIPTOR.services_by_name["NotificationService"].methods}
    assert set(RPC_TWINS) == rpcs
    assert set(RPC_TWINS.values()) <= routes


def console_page(gateway: str, key: TenantKey, path: str) -> str:
    with httpx.Client(base_url=gateway) as browser:
        login = browser.get("/console/login")
        csrf = login.text.split('name="csrf" value="')[1].split('"')[0]
        assert browser.post("/console/login", data={"csrf": csrf, "credential": key.api_key}).status_code == 303
        page = browser.get(path)
        assert page.status_code == 200
        return page.text


def test_the_console_shows_only_what_the_key_may_do(gateway: str, tenant: TenantKey) -> None:
    full = console_page(gateway, tenant, "/console/webhooks")
    assert 'action="/console/targets"' in full and 'href="/console/jobs"' in full
    reader = scoped_key(gateway, tenant, "console", "read")
    read_only = console_page(gateway, reader, "/console/webhooks")
    assert 'action="/console/targets"' not in read_only and 'href="/console/jobs"' in read_only
    assert 'action="/console/jobs/send"' not in console_page(gateway, reader, "/console/jobs")
    sender = scoped_key(gateway, tenant, "console", "read", "send")
    assert 'action="/console/jobs/send"' in console_page(gateway, sender, "/console/jobs")
    # The event log and the audit log are reads; replaying an event is a send, testing a target manage.
    assert 'href="/console/events"' in read_only and 'href="/console/audit-log"' in read_only
    event = httpx.post(f"{gateway}/v1/events", json={"event_type": "scoped.v1", "payload": {}}, headers=tenant.headers)
    assert event.status_code == 202, event.text
    event_page = f"/console/events/view?id={event.json()['event_id']}"
    assert 'action="/console/events/replay"' not in console_page(gateway, reader, event_page)
    assert 'action="/console/events/replay"' in console_page(gateway, sender, event_page)
    target = httpx.post(f"{gateway}/v1/webhooks/targets", json={"url": "https://example.com/t"}, headers=tenant.headers)
    target_page = f"/console/targets/{target.json()['id']}"
    assert "/test" not in console_page(gateway, sender, target_page)
    assert f'action="{target_page}/test"' in console_page(gateway, tenant, target_page)


def test_a_replayed_answer_is_refused_to_a_key_without_the_scope(gateway: str, tenant: TenantKey) -> None:
    body = {"url": "https://example.com/replayed"}
    keyed = {"idempotency-key": "target-once"}
    made = httpx.post(f"{gateway}/v1/webhooks/targets", json=body, headers={**tenant.headers, **keyed})
    assert made.status_code == 201
    sender = scoped_key(gateway, tenant, "send")
    replayed = httpx.post(f"{gateway}/v1/webhooks/targets", json=body, headers={**sender.headers, **keyed})
    assert replayed.status_code == 403 and replayed.json()["missing_scope"] == "manage"
    assert "idempotent-replayed" not in replayed.headers
