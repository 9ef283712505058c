"""Webhook subscriptions: CRUD of targets, filters and subscriptions (tenant-scoped,
paginated), and events fanned out to exactly the matching active subscriptions' targets,
with filter changes taking effect within a second and event ids de-duplicated."""

from __future__ import annotations

import time
from typing import Any

import grpc
import httpx
import pytest
from herald_router.fanout import matches

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver

# The bound for a filter change to reach fan-out is one second; the margin covers
# the HTTP round trips of the polling loop itself.
CHANGE_BOUND_S = 1.0
CHANGE_MARGIN_S = 0.5


def post(gateway: str, tenant: TenantKey, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{gateway}{path}", json=body, headers=tenant.headers, timeout=10)


def created(gateway: str, tenant: TenantKey, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = post(gateway, tenant, path, body)
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


def subscribe(gateway: str, tenant: TenantKey, url: str, event_types: list[str], **target: Any) -> dict[str, str]:
    made = created(gateway, tenant, "/v1/webhooks/targets", {"url": url, **target})
    event_filter = created(gateway, tenant, "/v1/webhooks/filters", {"event_types": event_types})
    subscription = created(
        gateway,
        tenant,
        "/v1/webhooks/subscriptions",
        {"target_id": made["id"], "filter_id": event_filter["id"]},
    )
    return {"target": made["id"], "filter": event_filter["id"], "subscription": subscription["id"]}


def publish(gateway: str, tenant: TenantKey, event_type: str, **fields: Any) -> dict[str, Any]:
    body = {"event_type": event_type, **fields}
    if "payload_base64" not in body:
        body.setdefault("payload", {"n": 1})
    response = post(gateway, tenant, "/v1/events", body)
    assert response.status_code == 202, response.text
    found: dict[str, Any] = response.json()
    return found


def paths(receiver: Receiver, event_id: str) -> list[str]:
    with receiver._lock:
        return sorted(r.path for r in receiver.requests if r.headers.get("x-herald-event-id") == event_id)


def settle(gateway: str, tenant: TenantKey) -> None:
    """Waits until every job of the tenant is delivered, so no delivery is still retrying
    against this test's receiver after it closed (a dead letter would alert into other tests).
    A skipped delivery (a paused subscription, a disabled target) is never attempted."""
    jobs = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]
    for job in (j for j in jobs if j["status"] != "skipped"):
        assert wait_for_status(gateway, tenant, job["id"])["status"] == "delivered"


def test_crud_is_tenant_scoped_and_paginated(gateway: str, operator_token: str, tenant: TenantKey) -> None:
    other = create_tenant(gateway, operator_token, "subscriptions-other")
    target = created(
        gateway,
        tenant,
        "/v1/webhooks/targets",
        {
            "url": "https://example.com/a",
            "description": "orders",
            "headers": {"X-Team": "orders"},
            "rate_limit_per_min": 60,
        },
    )
    # Header values are sealed at rest and read back masked (tests/test_sealed_headers.py).
    assert target["enabled"] is True and target["rate_limit_per_min"] == 60 and target["headers"] == {"X-Team": "****"}
    assert target["created_at"] and target["updated_at"]
    url = f"{gateway}/v1/webhooks/targets/{target['id']}"
    assert httpx.get(url, headers=tenant.headers).json() == target

    patched = httpx.patch(
        url,
        json={"enabled": False, "disabled_reason": "maintenance", "rate_limit_per_min": None},
        headers=tenant.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["enabled"] is False and patched.json()["disabled_reason"] == "maintenance"
    assert patched.json()["rate_limit_per_min"] is None and patched.json()["updated_at"] >= target["updated_at"]
    enabled = httpx.patch(url, json={"enabled": True}, headers=tenant.headers).json()
    assert enabled["enabled"] is True and enabled["disabled_reason"] is None

    # Validation: the same URL and header rules as POST /v1/webhooks; filter syntax.
    for bad in (
        {"url": "ftp://example.com/x"},
        {"url": "https://example.com/x", "headers": {"Webhook-Id": "x"}},
        {"url": "https://example.com/x", "headers": {"X-Ok": "a\r\nb"}},
    ):
        assert post(gateway, tenant, "/v1/webhooks/targets", bad).status_code == 422, bad
    for types in ([], ["orders.*.v1"], ["orders."], ["*.created"], ["a b"]):
        assert post(gateway, tenant, "/v1/webhooks/filters", {"event_types": types}).status_code == 422, types

    event_filter = created(gateway, tenant, "/v1/webhooks/filters", {"event_types": ["orders.*"]})
    filter_url = f"{gateway}/v1/webhooks/filters/{event_filter['id']}"
    changed = httpx.patch(filter_url, json={"event_types": ["orders.created.v1", "*"]}, headers=tenant.headers)
    assert changed.status_code == 200 and changed.json()["event_types"] == ["orders.created.v1", "*"]
    subscription = created(
        gateway,
        tenant,
        "/v1/webhooks/subscriptions",
        {"target_id": target["id"], "filter_id": event_filter["id"], "active": False},
    )
    assert subscription["active"] is False
    sub_url = f"{gateway}/v1/webhooks/subscriptions/{subscription['id']}"
    assert httpx.patch(sub_url, json={"active": True}, headers=tenant.headers).json()["active"] is True

    # Another tenant's ids read as missing, for every verb, and cannot be subscribed to.
    for resource in (url, filter_url, sub_url):
        assert httpx.get(resource, headers=other.headers).status_code == 404
        assert httpx.patch(resource, json={}, headers=other.headers).status_code == 404
        assert httpx.delete(resource, headers=other.headers).status_code == 404
    own_filter = created(gateway, other, "/v1/webhooks/filters", {"event_types": ["x"]})
    stolen = post(
        gateway, other, "/v1/webhooks/subscriptions", {"target_id": target["id"], "filter_id": own_filter["id"]}
    )
    assert stolen.status_code == 404
    assert httpx.get(f"{gateway}/v1/webhooks/targets/not-an-id", headers=tenant.headers).status_code == 404
    assert httpx.get(f"{gateway}/v1/webhooks/targets", headers=other.headers).json()["data"] == []

    # Pagination: oldest first, a cursor until the last page.
    for i in range(4):
        created(gateway, tenant, "/v1/webhooks/targets", {"url": f"https://example.com/{i}"})
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = httpx.get(f"{gateway}/v1/webhooks/targets", params=params, headers=tenant.headers).json()
        pages += 1
        seen += [t["id"] for t in page["data"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and len(seen) == 5 == len(set(seen)) and seen[0] == target["id"]
    assert httpx.get(f"{gateway}/v1/webhooks/subscriptions", params={"limit": 1}, headers=tenant.headers).json()[
        "data"
    ] == [httpx.get(sub_url, headers=tenant.headers).json()]

    # Deleting a target deletes its subscriptions.
    assert httpx.delete(url, headers=tenant.headers).status_code == 204
    assert httpx.get(url, headers=tenant.headers).status_code == 404
    assert httpx.get(sub_url, headers=tenant.headers).status_code == 404
    assert httpx.delete(filter_url, headers=tenant.headers).status_code == 204


def test_one_event_reaches_exactly_the_matching_targets_once(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    exact = subscribe(
        gateway, tenant, f"{receiver.url}/exact", ["orders.created.v1"], headers={"X-Tenant-Header": "kept"}
    )
    wildcard = subscribe(gateway, tenant, f"{receiver.url}/wildcard", ["orders.*"])
    subscribe(gateway, tenant, f"{receiver.url}/none", ["orders.created", "payments.*", "orders.created.v1.x"])
    twice = subscribe(gateway, tenant, f"{receiver.url}/twice", ["orders.created.v1"])
    second_filter = created(gateway, tenant, "/v1/webhooks/filters", {"event_types": ["*"]})
    created(
        gateway,
        tenant,
        "/v1/webhooks/subscriptions",
        {"target_id": twice["target"], "filter_id": second_filter["id"]},
    )

    accepted = publish(gateway, tenant, "orders.created.v1", payload={"order": 42, "items": [1, 2]})
    by_target = {d["target_id"]: d["job_id"] for d in accepted["deliveries"]}
    assert len(accepted["deliveries"]) == 3
    assert set(by_target) == {exact["target"], wildcard["target"], twice["target"]}
    for job_id in by_target.values():
        assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"
    time.sleep(0.5)  # anything extra would have arrived by now
    assert paths(receiver, accepted["event_id"]) == ["/hook/exact", "/hook/twice", "/hook/wildcard"]
    exact_request = receiver.for_job(by_target[exact["target"]])[0]
    assert exact_request.body == b'{"order":42,"items":[1,2]}'
    assert exact_request.headers["x-tenant-header"] == "kept"
    assert exact_request.headers["x-herald-event-type"] == "orders.created.v1"
    assert exact_request.headers["content-type"] == "application/json"

    # Opaque bytes keep their content type; a type nobody subscribed to creates nothing.
    raw = publish(gateway, tenant, "orders.shipped", payload_base64="AAEC/w==", content_type="application/x-bin")
    raw_targets = {d["target_id"]: d["job_id"] for d in raw["deliveries"]}
    assert set(raw_targets) == {wildcard["target"], twice["target"]}  # orders.* and *
    binary = receiver.wait_for(raw_targets[wildcard["target"]])[0]
    assert binary.body == b"\x00\x01\x02\xff" and binary.headers["content-type"] == "application/x-bin"
    assert [d["target_id"] for d in publish(gateway, tenant, "invoices.paid")["deliveries"]] == [twice["target"]]
    assert post(gateway, tenant, "/v1/events", {"event_type": "bad type", "payload": 1}).status_code == 422
    settle(gateway, tenant)


def test_a_filter_change_takes_effect_within_a_second(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    ids = subscribe(gateway, tenant, receiver.url, ["before.v1"])
    # Warm the router's cache so the change has to arrive as a notification.
    assert len(publish(gateway, tenant, "before.v1")["deliveries"]) == 1
    assert publish(gateway, tenant, "after.v1")["deliveries"] == []

    response = httpx.patch(
        f"{gateway}/v1/webhooks/filters/{ids['filter']}", json={"event_types": ["after.*"]}, headers=tenant.headers
    )
    assert response.status_code == 200
    changed_at = time.monotonic()
    while True:
        deliveries = publish(gateway, tenant, "after.v1")["deliveries"]
        elapsed = time.monotonic() - changed_at
        if deliveries:
            break
        assert elapsed < CHANGE_BOUND_S + CHANGE_MARGIN_S, "the filter change did not reach fan-out in time"
        time.sleep(0.02)
    assert elapsed <= CHANGE_BOUND_S + CHANGE_MARGIN_S
    assert publish(gateway, tenant, "before.v1")["deliveries"] == []
    settle(gateway, tenant)


def test_a_repeated_event_id_answers_the_first_result(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    subscribe(gateway, tenant, receiver.url, ["dedup.*"])
    first = publish(gateway, tenant, "dedup.one", event_id="evt-123", payload={"v": 1})
    assert first["event_id"] == "evt-123" and first["replayed"] is False and len(first["deliveries"]) == 1
    jobs_before = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]

    again = publish(gateway, tenant, "dedup.one", event_id="evt-123", payload={"v": 2})
    assert again["replayed"] is True and again["deliveries"] == first["deliveries"]
    jobs_after = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]
    assert len(jobs_after) == len(jobs_before) == 1
    receiver.wait_for(first["deliveries"][0]["job_id"])
    time.sleep(0.5)
    assert len(paths(receiver, "evt-123")) == 1

    generated = publish(gateway, tenant, "dedup.two")
    assert generated["event_id"] and generated["event_id"] != "evt-123" and generated["replayed"] is False
    settle(gateway, tenant)


def test_disabled_targets_and_inactive_subscriptions_get_nothing(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    disabled = subscribe(
        gateway, tenant, f"{receiver.url}/disabled", ["state.v1"], enabled=False, disabled_reason="paused"
    )
    inactive = subscribe(gateway, tenant, f"{receiver.url}/inactive", ["state.v1"])
    response = httpx.patch(
        f"{gateway}/v1/webhooks/subscriptions/{inactive['subscription']}",
        json={"active": False},
        headers=tenant.headers,
    )
    assert response.status_code == 200 and response.json()["active"] is False
    assert publish(gateway, tenant, "state.v1")["deliveries"] == []

    httpx.patch(f"{gateway}/v1/webhooks/targets/{disabled['target']}", json={"enabled": True}, headers=tenant.headers)
    deadline = time.monotonic() + CHANGE_BOUND_S + CHANGE_MARGIN_S
    while not (deliveries := publish(gateway, tenant, "state.v1")["deliveries"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [d["target_id"] for d in deliveries] == [disabled["target"]]
    settle(gateway, tenant)


@pytest.mark.parametrize("plan", ["free"])
def test_an_event_spends_one_request_and_a_quota_unit_per_delivery(
    gateway: str, operator_token: str, receiver: Receiver, plan: str
) -> None:
    tenant = create_tenant(gateway, operator_token, "subscriptions-quota", plan=plan)
    for name in ("a", "b", "c"):
        subscribe(gateway, tenant, f"{receiver.url}/{name}", ["quota.v1"])
    response = post(gateway, tenant, "/v1/events", {"event_type": "quota.v1", "payload": {}})
    assert response.status_code == 202, response.text
    # FREE: 5 requests a minute; the first event spent one, the CRUD calls none.
    assert response.headers["ratelimit-remaining"] == "4"
    usage = httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()
    assert usage["webhooks"] == 3
    settle(gateway, tenant)


@pytest.mark.parametrize(
    ("pattern", "event_type", "expected"),
    [
        ("orders.created.v1", "orders.created.v1", True),
        ("orders.created.v1", "orders.created.v2", False),
        ("orders.*", "orders.created", True),
        ("orders.*", "orders.created.v1", True),
        ("orders.*", "orders", False),
        ("orders.*", "ordersx.created", False),
        ("orders.created.*", "orders.created.v1", True),
        ("*", "anything.at.all", True),
        ("Orders.*", "orders.created", False),
    ],
)
def test_filter_semantics(pattern: str, event_type: str, expected: bool) -> None:
    assert matches(pattern, event_type) is expected


def test_the_grpc_twins(stack: Stack, gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver) -> None:
    other = create_tenant(gateway, operator_token, "subscriptions-grpc-other")
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        mine = (("authorization", f"Bearer {tenant.api_key}"),)
        theirs = (("authorization", f"Bearer {other.api_key}"),)
        target = api.CreateWebhookTarget(
            gateway_pb2.NotificationServiceCreateWebhookTargetRequest(
                target=common_pb2.WebhookTarget(url=receiver.url, enabled=True)
            ),
            metadata=mine,
        ).target
        event_filter = api.CreateEventFilter(
            gateway_pb2.NotificationServiceCreateEventFilterRequest(
                filter=common_pb2.EventFilter(event_types=["grpc.*"])
            ),
            metadata=mine,
        ).filter
        api.CreateSubscription(
            gateway_pb2.NotificationServiceCreateSubscriptionRequest(
                subscription=common_pb2.Subscription(target_id=target.id, filter_id=event_filter.id, active=True)
            ),
            metadata=mine,
        )
        listed = api.ListWebhookTargets(gateway_pb2.NotificationServiceListWebhookTargetsRequest(), metadata=mine)
        assert [t.id for t in listed.targets] == [target.id]
        with pytest.raises(grpc.RpcError) as missing:
            api.GetWebhookTarget(
                gateway_pb2.NotificationServiceGetWebhookTargetRequest(target_id=target.id), metadata=theirs
            )
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        updated = api.UpdateEventFilter(
            gateway_pb2.NotificationServiceUpdateEventFilterRequest(
                filter_id=event_filter.id, replace_event_types=True, event_types=["grpc.created", "grpc.*"]
            ),
            metadata=mine,
        ).filter
        assert list(updated.event_types) == ["grpc.created", "grpc.*"]
        accepted = api.PublishEvent(
            gateway_pb2.NotificationServicePublishEventRequest(
                event_type="grpc.created", payload=b"raw", content_type="text/plain", event_id="grpc-1"
            ),
            metadata=mine,
        )
        assert accepted.event_id == "grpc-1" and [d.target_id for d in accepted.deliveries] == [target.id]
        assert receiver.wait_for(accepted.deliveries[0].job_id)[0].body == b"raw"
        again = api.PublishEvent(
            gateway_pb2.NotificationServicePublishEventRequest(event_type="grpc.created", event_id="grpc-1"),
            metadata=mine,
        )
        assert again.replayed and list(again.deliveries) == list(accepted.deliveries)
    settle(gateway, tenant)


def test_an_event_over_quota_writes_nothing(gateway: str, operator_token: str, receiver: Receiver) -> None:
    tenant = create_tenant(gateway, operator_token, "subscriptions-over-quota")
    for name in ("a", "b", "c"):
        subscribe(gateway, tenant, f"{receiver.url}/{name}", ["quota.v1"])
    limits = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"webhooks_per_month": 4},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert limits.status_code == 200, limits.text
    assert len(publish(gateway, tenant, "quota.v1", event_id="q-1")["deliveries"]) == 3
    refused = post(gateway, tenant, "/v1/events", {"event_type": "quota.v1", "payload": {}, "event_id": "q-2"})
    assert refused.status_code == 429 and refused.json()["type"].endswith("quota-exceeded"), refused.text
    assert httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()["webhooks"] == 3
    jobs = httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).json()["data"]
    assert len(jobs) == 3
    # Nothing was recorded for the refused id: once there is room, the same id goes through.
    raised = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"webhooks_per_month": 10},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert raised.status_code == 200
    retried = publish(gateway, tenant, "quota.v1", event_id="q-2")
    assert retried["replayed"] is False and len(retried["deliveries"]) == 3
    settle(gateway, tenant)


def test_a_410_gone_disables_the_target(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    receiver.behaviour.status = 410
    ids = subscribe(gateway, tenant, receiver.url, ["accounts.closed.v1"])
    [delivery] = publish(gateway, tenant, "accounts.closed.v1")["deliveries"]
    job = wait_for_status(gateway, tenant, delivery["job_id"])
    assert job["status"] == "failed" and job["attempt_count"] == 1, "410 stops at once"

    def target() -> dict[str, Any]:
        found: dict[str, Any] = httpx.get(
            f"{gateway}/v1/webhooks/targets/{ids['target']}", headers=tenant.headers
        ).json()
        return found

    deadline = time.monotonic() + 10
    while target()["enabled"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert target()["enabled"] is False and "410" in target()["disabled_reason"]
    deadline = time.monotonic() + 2
    while publish(gateway, tenant, "accounts.closed.v1")["deliveries"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert publish(gateway, tenant, "accounts.closed.v1")["deliveries"] == [], "a disabled target gets nothing"
