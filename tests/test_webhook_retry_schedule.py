"""A tenant's own webhook retry schedule: read and set over REST and gRPC, validated (bounded
count and delays, 4xx codes only, never 410), isolated per tenant, and used by the sender."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.receiver import Receiver

PATH = "/v1/webhooks/retry-schedule"


def put(gateway: str, tenant: TenantKey, body: dict[str, Any]) -> httpx.Response:
    return httpx.put(f"{gateway}{PATH}", json=body, headers=tenant.headers)


def test_the_default_then_a_tenant_schedule(gateway: str, operator_token: str, tenant: TenantKey) -> None:
    default = httpx.get(f"{gateway}{PATH}", headers=tenant.headers).json()
    assert default == {"delays_s": [0.2, 0.4], "retry_statuses": [], "custom": False, "max_attempts": 3}
    changed = put(gateway, tenant, {"delays_s": [10, 60, 600], "retry_statuses": [404, 409]})
    assert changed.status_code == 200, changed.text
    assert changed.json() == {
        "delays_s": [10, 60, 600],
        "retry_statuses": [404, 409],
        "custom": True,
        "max_attempts": 4,
    }
    assert httpx.get(f"{gateway}{PATH}", headers=tenant.headers).json() == changed.json()
    other = create_tenant(gateway, operator_token, "retry-schedule-other")
    assert httpx.get(f"{gateway}{PATH}", headers=other.headers).json()["custom"] is False, "per tenant"
    back = put(gateway, tenant, {"delays_s": None})
    assert back.json() == default, "null returns to the default"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"delays_s": [0.5]}, "delays_s"),  # below 1 s
        ({"delays_s": [90_000]}, "delays_s"),  # above 24 h
        ({"delays_s": [86_400, 86_400, 86_400, 86_400]}, "delays_s"),  # above 3 days in all
        ({"delays_s": [1] * 21}, "delays_s"),  # too many
        ({"delays_s": [1], "retry_statuses": [410]}, "retry_statuses"),  # 410 always disables
        ({"delays_s": [1], "retry_statuses": [503]}, "retry_statuses"),  # 5xx is always retried
        ({"delays_s": "soon"}, "delays_s"),
    ],
)
def test_bad_schedules_are_refused(gateway: str, tenant: TenantKey, body: dict[str, Any], field: str) -> None:
    refused = put(gateway, tenant, body)
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert any(e["field"].startswith(field) for e in refused.json()["errors"])
    assert httpx.get(f"{gateway}{PATH}", headers=tenant.headers).json()["custom"] is False


def test_the_sender_follows_the_tenant_schedule(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    """One retry after 1 s (two attempts) instead of the default's three attempts; a 404,
    listed as retryable, is retried like a 503."""
    assert put(gateway, tenant, {"delays_s": [1], "retry_statuses": [404]}).status_code == 200
    receiver.behaviour.status = 404
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job = wait_for_status(gateway, tenant, sent.json()["id"], timeout=60)
    assert job["status"] == "failed" and job["attempt_count"] == 2
    assert "gave up after 2 attempts" in job["last_error"]
    assert len(receiver.for_job(job["id"])) == 2


def test_the_grpc_twins(stack: Stack, tenant: TenantKey) -> None:
    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        found = api.GetWebhookRetrySchedule(
            gateway_pb2.GetWebhookRetryScheduleRequest(), metadata=metadata, timeout=10
        ).schedule
        assert list(found.delays_s) == [0.2, 0.4] and not found.custom
        stored = api.SetWebhookRetrySchedule(
            gateway_pb2.SetWebhookRetryScheduleRequest(delays_s=[5, 50]), metadata=metadata, timeout=10
        ).schedule
        assert list(stored.delays_s) == [5, 50] and stored.custom and stored.max_attempts == 3
        with pytest.raises(grpc.RpcError) as refused:
            api.SetWebhookRetrySchedule(
                gateway_pb2.SetWebhookRetryScheduleRequest(delays_s=[0.1]), metadata=metadata, timeout=10
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
