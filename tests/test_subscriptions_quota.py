"""What a published event costs: one request against the rate limit and one quota unit per delivery, and an
event over the monthly quota refused with nothing written."""

from __future__ import annotations

import httpx
import pytest

from tests.support.api import create_tenant
from tests.support.receiver import Receiver
from tests.support.subscriptions import post, publish, settle, subscribe


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
