"""Herald's own events to the tenant (operational webhooks): a target disabled, enabled or
failing, a job dead-lettered, a quota threshold reached, each delivered through the tenant's
own subscriptions (a filter on `herald.*`), signed with the receiving target's own secret,
kept in the event log, and never delivered to the target it is about. Only Herald writes
`herald.*` events: a backend's on the NATS intake is refused (the HTTP and gRPC refusals are
in tests/test_event_log.py)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from herald.v1 import router_pb2
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.infra import query
from tests.support.receiver import Received, Receiver
from tests.support.subscriptions import publish, settle, subscribe
from tests.test_event_intake import publish as publish_on_nats
from tests.test_target_signing import target_secret, verifies

ALL_OF_HERALD = ["herald.*"]


@pytest.fixture
def ops() -> Iterator[Receiver]:
    """The tenant's receiver of Herald's own events (answers 200)."""
    running = Receiver()
    yield running
    running.close()


def told(receiver: Receiver, event_type: str) -> list[tuple[Received, dict[str, Any]]]:
    """What `receiver` got of `event_type`, with each body read."""
    with receiver._lock:
        got = [r for r in receiver.requests if r.headers.get("x-herald-event-type") == event_type]
    return [(r, json.loads(r.body)) for r in got]


def wait_told(
    receiver: Receiver, event_type: str, about: Callable[[dict[str, Any]], bool], timeout: float = 30
) -> tuple[Received, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [(r, body) for r, body in told(receiver, event_type) if about(body)]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(
        f"no {event_type} received: {[r.headers.get('x-herald-event-type') for r in receiver.requests]}"
    )


def event_deliveries(gateway: str, tenant: TenantKey, event_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{gateway}/v1/events/{event_id}", headers=tenant.headers, timeout=10)
    assert response.status_code == 200, response.text
    deliveries: list[dict[str, Any]] = response.json()["deliveries"]
    return deliveries


def herald_events(gateway: str, tenant: TenantKey, pattern: str = "herald.*") -> list[dict[str, Any]]:
    response = httpx.get(
        f"{gateway}/v1/events", params={"event_type": pattern, "limit": 200}, headers=tenant.headers, timeout=10
    )
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["data"]
    return found


def test_a_gone_target_is_told_disabled_then_enabled_to_the_herald_subscription_only(
    gateway: str, tenant: TenantKey, receiver: Receiver, ops: Receiver
) -> None:
    receiver.behaviour.status = 410
    watcher = subscribe(gateway, tenant, ops.url, ALL_OF_HERALD)["target"]
    # The gone target listens to Herald's events too: it must never get one about itself.
    gone = subscribe(gateway, tenant, receiver.url, ["accounts.closed.v1", "herald.*"])["target"]
    [delivery] = publish(gateway, tenant, "accounts.closed.v1")["deliveries"]
    assert wait_for_status(gateway, tenant, delivery["job_id"])["status"] == "failed"

    received, body = wait_told(ops, "herald.target.disabled", lambda b: b["target_id"] == gone)
    assert body["type"] == "herald.target.disabled" and body["tenant_id"] == tenant.tenant_id
    assert "410" in body["reason"] and body["occurred_at"].endswith("Z")
    # Signed with the receiving target's own secret (Herald's verifiers and the official
    # standardwebhooks library agree); the other target's secret does not verify it.
    assert verifies(target_secret(gateway, tenant, watcher), received)
    assert not verifies(target_secret(gateway, tenant, gone), received)
    # Kept in the event log like any event; its one delivery went to the watcher, none (not
    # even a skipped one) to the target it is about.
    event_id = received.headers["x-herald-event-id"]
    assert event_id in [e["id"] for e in herald_events(gateway, tenant, "herald.target.*")]
    assert [d["target_id"] for d in event_deliveries(gateway, tenant, event_id)] == [watcher]

    receiver.behaviour.status = 200
    enabled = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{gone}", json={"enabled": True}, headers=tenant.headers, timeout=10
    )
    assert enabled.status_code == 200, enabled.text
    received, body = wait_told(ops, "herald.target.enabled", lambda b: b["target_id"] == gone)
    assert verifies(target_secret(gateway, tenant, watcher), received)
    assert [d["target_id"] for d in event_deliveries(gateway, tenant, received.headers["x-herald-event-id"])] == [
        watcher
    ]
    assert not [r for r in receiver.requests if r.headers.get("x-herald-event-type", "").startswith("herald.")]
    settle_ops(gateway, tenant)


def test_a_failing_target_is_told_at_each_level_then_disabled_and_its_dead_letters_told(
    gateway: str, tenant: TenantKey, receiver: Receiver, ops: Receiver
) -> None:
    """The session's stack disables after 3 s of failing: levels at 1.5, 2.1 and 2.7 s."""
    receiver.behaviour.status = 503
    # Retries a second apart for 10 s (the retry window): the deliveries the breaker holds keep
    # failing past the 3 s, where the stack's own schedule would end them within a second.
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": [1] * 10}, headers=tenant.headers)
    assert schedule.status_code == 200, schedule.text
    watcher = subscribe(gateway, tenant, ops.url, ALL_OF_HERALD)["target"]
    failing = subscribe(gateway, tenant, receiver.url, ["health.v1", "herald.*"])["target"]
    # A few events are enough: the target's breaker lets their attempts through one at a time,
    # so their failures go on past the threshold (each attempt more would cost the test a second).
    job_ids: list[str] = []
    for _ in range(6):
        job_ids += [d["job_id"] for d in publish(gateway, tenant, "health.v1")["deliveries"]]
        time.sleep(0.3)

    _, disabled = wait_told(ops, "herald.target.disabled", lambda b: b["target_id"] == failing, timeout=60)
    assert disabled["reason"].startswith("disabled automatically: every delivery failed since")
    events_by_level: dict[int, set[str]] = {}
    for received, body in told(ops, "herald.target.failing"):
        if body["target_id"] == failing:
            events_by_level.setdefault(body["level_percent"], set()).add(received.headers["x-herald-event-id"])
    # Each level told once per streak (one event each; deliveries may arrive in any order), every
    # level passed before the disabling (a report that passes two at once tells both). Failure
    # reports come in bursts here (the target's breaker opens for 1 s), so the last may come only
    # past 100 %: the levels told are a prefix of the three.
    levels = sorted(events_by_level)
    assert levels in ([50], [50, 70], [50, 70, 90]), levels
    assert all(len(ids) == 1 for ids in events_by_level.values()), events_by_level
    from tests.conftest import report

    report(f"operational events: failing levels told before the disabling: {levels}")
    _, level = told(ops, "herald.target.failing")[0]
    assert level["disable_after_s"] == 3 and level["failing_since"] == disabled["failing_since"]

    # Every delivery to the failing target ends dead-lettered: each is told, naming its job.
    ended = [wait_for_status(gateway, tenant, job_id, timeout=60) for job_id in job_ids]
    assert [job["status"] for job in ended] == ["failed"] * len(job_ids)
    exhausted = {body["job_id"]: body for _, body in told(ops, "herald.delivery.exhausted")}
    deadline = time.monotonic() + 30
    while not set(job_ids) <= set(exhausted) and time.monotonic() < deadline:
        time.sleep(0.1)
        exhausted = {body["job_id"]: body for _, body in told(ops, "herald.delivery.exhausted")}
    assert set(job_ids) <= set(exhausted)
    one = exhausted[job_ids[0]]
    assert one["target_id"] == failing and one["channel"] == "webhook"
    assert one["attempts"] == ended[0]["attempt_count"] and one["event_id"]
    # Its last attempt was answered 503, or the breaker held it past its retry window (no call).
    assert "503" in one["error"] or "retry window" in one["error"], one
    # None of it reached the failing target, though it subscribes to herald.*.
    assert not [r for r in receiver.requests if r.headers.get("x-herald-event-type", "").startswith("herald.")]
    told_one = next(r for r, body in told(ops, "herald.delivery.exhausted") if body["job_id"] == job_ids[0])
    assert [d["target_id"] for d in event_deliveries(gateway, tenant, told_one.headers["x-herald-event-id"])] == [
        watcher
    ]
    settle_ops(gateway, tenant)


def settle_ops(gateway: str, tenant: TenantKey) -> None:
    """Waits for the tenant's deliveries that can succeed (Herald's events to the watcher)."""
    jobs = httpx.get(f"{gateway}/v1/jobs", params={"limit": 200}, headers=tenant.headers).json()["data"]
    for job in jobs:
        if job["status"] not in ("skipped", "failed"):
            wait_for_status(gateway, tenant, job["id"], timeout=60)


def test_a_direct_webhook_dead_lettered_is_told(
    gateway: str, tenant: TenantKey, receiver: Receiver, ops: Receiver
) -> None:
    receiver.behaviour.status = 500
    subscribe(gateway, tenant, ops.url, ["herald.delivery.*"])
    sent = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 1}}, headers=tenant.headers, timeout=10
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "failed"
    received, body = wait_told(ops, "herald.delivery.exhausted", lambda b: b["job_id"] == job_id)
    assert body["target_id"] is None and body["event_id"] is None and body["attempts"] == 3
    assert body["tenant_id"] == tenant.tenant_id and received.headers["webhook-id"] != job_id
    settle_ops(gateway, tenant)


def quota_watcher(gateway: str, operator_token: str, name: str, ops: Receiver) -> TenantKey:
    """A tenant allowed 5 webhooks a month, `ops` subscribed to its herald.quota.* events."""
    tenant = create_tenant(gateway, operator_token, name)
    limits = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}/limits",
        json={"webhooks_per_month": 5},
        headers={"authorization": f"Bearer {operator_token}"},
    )
    assert limits.status_code == 200, limits.text
    subscribe(gateway, tenant, ops.url, ["herald.quota.*"])
    return tenant


def test_quota_thresholds_are_told_once_each(gateway: str, operator_token: str, ops: Receiver) -> None:
    """Warning at 80 % of the month's webhooks, exhausted at 100 %, once each; Herald's own
    deliveries count against no quota (the exhausted event still goes out)."""
    tenant = quota_watcher(gateway, operator_token, "operational-quota", ops)

    def send() -> httpx.Response:
        return httpx.post(
            f"{gateway}/v1/webhooks", json={"url": f"{ops.url}/direct", "payload": {}}, headers=tenant.headers
        )

    for _ in range(4):
        assert send().status_code == 202
    _, warning = wait_told(ops, "herald.quota.warning", lambda b: b["tenant_id"] == tenant.tenant_id)
    assert warning == {
        **warning,
        "counter": "webhooks",
        "used": 4,
        "limit": 5,
        "threshold_percent": 80,
        "period": time.strftime("%Y-%m", time.gmtime()),
    }
    assert send().status_code == 202
    _, exhausted = wait_told(ops, "herald.quota.exhausted", lambda b: b["tenant_id"] == tenant.tenant_id)
    assert exhausted["used"] == 5 and exhausted["threshold_percent"] == 100
    refused = send()
    assert refused.status_code == 429, refused.text
    # A refusal at the limit tells nothing again this month; a later event shows the log as it is.
    assert httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()["webhooks"] == 5
    kinds = sorted(e["event_type"] for e in herald_events(gateway, tenant))
    assert kinds == ["herald.quota.exhausted", "herald.quota.warning"]
    settle(gateway, tenant)


def test_an_event_refused_whole_for_quota_tells_the_tenant(gateway: str, operator_token: str, ops: Receiver) -> None:
    """An event whose fan-out does not fit the month's room is refused whole (nothing counted),
    and the tenant hears herald.quota.exhausted with usage as it stands."""
    tenant = quota_watcher(gateway, operator_token, "operational-quota-fan-out", ops)
    for path in ("a", "b", "c"):
        subscribe(gateway, tenant, f"{ops.url}/{path}", ["order.placed.v1"])
    assert len(publish(gateway, tenant, "order.placed.v1")["deliveries"]) == 3
    refused = httpx.post(
        f"{gateway}/v1/events", json={"event_type": "order.placed.v1", "payload": {}}, headers=tenant.headers
    )
    assert refused.status_code == 429, refused.text
    _, exhausted = wait_told(ops, "herald.quota.exhausted", lambda b: b["tenant_id"] == tenant.tenant_id)
    assert exhausted == {**exhausted, "counter": "webhooks", "used": 3, "limit": 5, "threshold_percent": 100}
    assert httpx.get(f"{gateway}/v1/usage", headers=tenant.headers).json()["webhooks"] == 3
    settle(gateway, tenant)


def test_a_backend_cannot_publish_herald_events_on_the_intake(
    gateway: str, tenant: TenantKey, ops: Receiver, infra: dict[str, str]
) -> None:
    subscribe(gateway, tenant, ops.url, ["herald.*", "intake.after.v1"])
    subject = f"{infra['bus_prefix']}.intake.events.{tenant.tenant_id}"
    forged = router_pb2.PublishEventRequest(
        event_type="herald.target.disabled", event_id="forged-1", payload=b'{"target_id": "x"}'
    )
    publish_on_nats(infra["nats_url"], subject, forged.SerializeToString())
    after = router_pb2.PublishEventRequest(event_type="intake.after.v1", event_id="after-1", payload=b"{}")
    publish_on_nats(infra["nats_url"], subject, after.SerializeToString())
    for _ in range(400):
        if any(r.headers.get("x-herald-event-id") == "after-1" for r in ops.requests):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert [e["id"] for e in herald_events(gateway, tenant, "*")] == ["after-1"]
    assert not told(ops, "herald.target.disabled")
    settle(gateway, tenant)


def test_an_event_committed_but_never_published_goes_out_on_the_next_pass(
    gateway: str, tenant: TenantKey, ops: Receiver, infra: dict[str, str]
) -> None:
    """A ledger that dies between the commit of a change and its publish leaves the event's
    row unpublished: the next pass (of any ledger replica) publishes it. Played by writing
    such a row as the change's transaction would have."""
    watcher = subscribe(gateway, tenant, ops.url, ALL_OF_HERALD)["target"]
    about = subscribe(gateway, tenant, f"{ops.url}/about", ["other.v1"])["target"]
    event_id = str(uuid.uuid4())
    payload = {"type": "herald.target.enabled", "tenant_id": tenant.tenant_id, "target_id": about}
    query(
        infra["database_url"],
        "INSERT INTO operational_events (id, tenant_id, event_type, payload)"
        " VALUES ($1::uuid, $2::uuid, $3, $4::jsonb)",
        event_id,
        tenant.tenant_id,
        "herald.target.enabled",
        json.dumps(payload),
    )
    received, body = wait_told(ops, "herald.target.enabled", lambda b: b["target_id"] == about)
    assert body == payload and received.headers["x-herald-event-id"] == event_id
    assert [d["target_id"] for d in event_deliveries(gateway, tenant, event_id)] == [watcher]
    [row] = query(infra["database_url"], "SELECT published_at FROM operational_events WHERE id = $1::uuid", event_id)
    assert row["published_at"] is not None
    settle(gateway, tenant)
