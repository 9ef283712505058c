"""Helpers for the webhook subscription tests: targets, filters and subscriptions created through the API, events
published, and a tenant's jobs waited on until delivered."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.api import TenantKey, wait_for_status


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


def settle(gateway: str, tenant: TenantKey) -> None:
    """Waits until every job of the tenant is delivered, so no delivery is still retrying
    against this test's receiver after it closed (a dead letter would alert into other tests).
    A skipped delivery (a paused subscription, a disabled target) is never attempted."""
    jobs = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]
    for job in (j for j in jobs if j["status"] != "skipped"):
        assert wait_for_status(gateway, tenant, job["id"])["status"] == "delivered"
