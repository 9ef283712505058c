"""Webhook subscriptions managed through the API: CRUD of targets, filters and subscriptions, tenant-scoped and
paginated, and the same operations over gRPC."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant
from tests.support.receiver import Receiver
from tests.support.subscriptions import created, post, settle


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
