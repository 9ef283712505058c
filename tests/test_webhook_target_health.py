"""A subscription target failing continuously is disabled automatically (the session's stack
compresses "5 days" to 3 s) with a reason and an operational event; recovering it replays
what failed, and what was skipped while it was disabled, once it is enabled again. The
"continuously" rule itself (a success ends the streak) is shown against the ledger directly."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.grpcio.ledger import Ledger
from herald.v1 import gateway_pb2, gateway_pb2_grpc, ledger_subscriptions_pb2
from tests.standins.alerts import AlertReceiver
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, subscribe

EVENT = "health.ping.v1"


def get_target(gateway: str, tenant: TenantKey, target_id: str) -> dict[str, Any]:
    response = httpx.get(f"{gateway}/v1/webhooks/targets/{target_id}", headers=tenant.headers)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def jobs_of(gateway: str, tenant: TenantKey, event_id: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{gateway}/v1/jobs", params={"event_id": event_id}, headers=tenant.headers)
    assert response.status_code == 200, response.text
    jobs: list[dict[str, Any]] = response.json()["data"]
    return jobs


def recover(gateway: str, tenant: TenantKey, target_id: str, since: datetime) -> httpx.Response:
    return httpx.post(
        f"{gateway}/v1/webhooks/targets/{target_id}/recover",
        json={"since": since.isoformat()},
        headers=tenant.headers,
        timeout=30,
    )


def test_a_target_failing_continuously_is_disabled_then_recovered(
    gateway: str, operator_token: str, tenant: TenantKey, receiver: Receiver, alerts: AlertReceiver
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    receiver.behaviour.status = 503
    ids = subscribe(gateway, tenant, receiver.url, [EVENT])
    job_ids: list[str] = []
    skipped_ids: list[str] = []
    deadline = time.monotonic() + 60
    while get_target(gateway, tenant, ids["target"])["enabled"] and time.monotonic() < deadline:
        published = publish(gateway, tenant, EVENT)
        job_ids += [d["job_id"] for d in published["deliveries"]]
        if not published["deliveries"]:
            # Disabled between the check and the publish: the event left a skipped job, which
            # recovering replays too.
            skipped_ids += [job["id"] for job in jobs_of(gateway, tenant, published["event_id"])]
        time.sleep(0.4)
    target = get_target(gateway, tenant, ids["target"])
    assert target["enabled"] is False, "disabled automatically"
    assert target["disabled_reason"].startswith("disabled automatically: every delivery failed since")
    assert target["failing_since"] is not None
    assert len(job_ids) >= 3

    # The operational event, on the operators' webhook.
    deadline = time.monotonic() + 15
    events: list[dict[str, Any]] = []
    while not events and time.monotonic() < deadline:
        events = [a for a in alerts.ops() if a.get("type") == "herald.target_disabled"]
        events = [a for a in events if a.get("target_id") == ids["target"]]
        time.sleep(0.1)
    assert len(events) == 1 and events[0]["tenant_id"] == tenant.tenant_id
    assert events[0]["reason"] == target["disabled_reason"]
    assert receiver.url not in str(events[0]), "the event does not carry the target's URL"

    # A disabled target gets no new deliveries, a skipped one instead; every earlier one ends
    # failed (dead-lettered).
    while_disabled = publish(gateway, tenant, EVENT)
    assert while_disabled["deliveries"] == []
    [skipped] = jobs_of(gateway, tenant, while_disabled["event_id"])
    assert skipped["status"] == "skipped" and skipped["target_id"] == ids["target"]
    for job_id in job_ids:
        assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "failed"

    # Recovering a disabled target is refused: enable it first.
    refused = recover(gateway, tenant, ids["target"], since)
    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["type"].endswith("target-disabled")
    assert "enable it" in refused.json()["detail"]

    # Another tenant's target id reads as missing.
    stranger = create_tenant(gateway, operator_token, "stranger-recover")
    assert recover(gateway, stranger, ids["target"], since).status_code == 404

    receiver.behaviour.status = 200
    enabled = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{ids['target']}", json={"enabled": True}, headers=tenant.headers
    ).json()
    assert enabled["enabled"] is True and enabled["disabled_reason"] is None and enabled["failing_since"] is None

    recovered = recover(gateway, tenant, ids["target"], since)
    assert recovered.status_code == 202, recovered.text
    job_ids += [*skipped_ids, skipped["id"]]
    assert sorted(recovered.json()["job_ids"]) == sorted(job_ids), "every failed or skipped delivery since `since`"
    for job_id in job_ids:
        job = wait_for_status(gateway, tenant, job_id, timeout=60)
        assert job["status"] == "delivered" and job["run"] == 1, "re-run from PENDING as a manual retry does"
        assert receiver.for_job(job_id)[-1].headers["webhook-id"] == job_id
    # Nothing left to replay.
    assert recover(gateway, tenant, ids["target"], since).json()["job_ids"] == []
    assert get_target(gateway, tenant, ids["target"])["enabled"] is True


def test_recover_over_grpc(stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    receiver.behaviour.status = 500
    since = datetime.now(UTC) - timedelta(seconds=1)
    ids = subscribe(gateway, tenant, receiver.url, ["grpc.recover.v1"])
    [delivery] = publish(gateway, tenant, "grpc.recover.v1")["deliveries"]
    assert wait_for_status(gateway, tenant, delivery["job_id"], timeout=60)["status"] == "failed"
    receiver.behaviour.status = 200
    # The failures may have lasted past the (compressed, 3 s) auto-disable threshold on a slow
    # machine: enabled again first, as an operator would, whichever happened.
    enabled = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{ids['target']}", json={"enabled": True}, headers=tenant.headers
    )
    assert enabled.status_code == 200, enabled.text
    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        notifications = gateway_pb2_grpc.NotificationServiceStub(channel)
        request = gateway_pb2.RecoverWebhookTargetRequest(target_id=ids["target"])
        request.since.FromDatetime(since)
        answer = notifications.RecoverWebhookTarget(request, metadata=metadata, timeout=30)
        assert list(answer.job_ids) == [delivery["job_id"]]
        request.target_id = "01a22d54-65c5-728e-89e1-6294d238e05a"
        with pytest.raises(grpc.RpcError) as missing:
            notifications.RecoverWebhookTarget(request, metadata=metadata, timeout=30)
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert wait_for_status(gateway, tenant, delivery["job_id"], timeout=60)["status"] == "delivered"


def test_a_success_ends_the_failing_streak(stack: Stack, gateway: str, tenant: TenantKey) -> None:
    """Against the ledger's NoteTargetOutcomes, with the times given: failures for longer than
    the threshold disable a target only when no success came in between."""
    made = httpx.post(f"{gateway}/v1/webhooks/targets", json={"url": "https://example.com/a"}, headers=tenant.headers)
    target_id = made.json()["id"]
    now = datetime.now(UTC)

    def outcome(seconds_ago: float, succeeded: bool) -> ledger_subscriptions_pb2.TargetOutcome:
        found = ledger_subscriptions_pb2.TargetOutcome(
            tenant_id=tenant.tenant_id, target_id=target_id, succeeded=succeeded
        )
        found.at.FromDatetime(now - timedelta(seconds=seconds_ago))
        return found

    ledger_addr = stack.services["ledger"].grpc_addr
    with grpc.insecure_channel(ledger_addr) as channel:
        ledger = Ledger.over(channel)

        def note(*outcomes: ledger_subscriptions_pb2.TargetOutcome) -> list[str]:
            noted = ledger.subscriptions.NoteTargetOutcomes(
                ledger_subscriptions_pb2.NoteTargetOutcomesRequest(outcomes=outcomes, disable_after_s=60), timeout=10
            )
            return [t.id for t in noted.disabled]

        # Failing for 100 s, but a success 50 s ago: the current streak is 10 s old.
        assert note(outcome(100, False), outcome(50, True), outcome(10, False)) == []
        assert get_target(gateway, tenant, target_id)["enabled"] is True
        # Failing since 10 s ago is still below 60 s; a failure now changes nothing...
        assert note(outcome(0, False)) == []
        # ...until the streak's start is older than the threshold: a streak 90 s long.
        assert note(outcome(0, True)) == []
        assert note(outcome(90, False), outcome(0, False)) == [target_id]
    target = get_target(gateway, tenant, target_id)
    assert target["enabled"] is False and "every delivery failed since" in target["disabled_reason"]
