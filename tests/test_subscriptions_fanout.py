"""Events fanned out to exactly the matching active subscriptions' targets: filter semantics, filter changes
taking effect within a second, event ids de-duplicated, disabled targets and inactive subscriptions skipped, and a
target that answers 410 Gone disabled."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from herald_router.fanout import matches

from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import created, post, publish, settle, subscribe

# The bound for a filter change to reach fan-out is one second; the margin covers
# the HTTP round trips of the polling loop itself.
CHANGE_BOUND_S = 1.0
CHANGE_MARGIN_S = 0.5


def paths(receiver: Receiver, event_id: str) -> list[str]:
    with receiver._lock:
        return sorted(r.path for r in receiver.requests if r.headers.get("x-herald-event-id") == event_id)


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
