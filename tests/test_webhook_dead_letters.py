"""Webhooks out of attempts: the dead-letter stream, a FAILED row and one operator
alert; nothing leaves by itself; a manual retry runs the job again and delivers."""

from __future__ import annotations

import time

import httpx

from tests.standins.alerts import AlertReceiver
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver


def test_exhausted_webhook_is_dead_lettered_alerted_and_retried_by_hand(
    gateway: str, tenant: TenantKey, receiver: Receiver, alerts: AlertReceiver, operator_token: str
) -> None:
    receiver.behaviour.status = 503
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 1}}, headers=tenant.headers)
    job_id = sent.json()["id"]
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "failed" and job["attempt_count"] == 3
    assert "gave up after 3 attempts" in job["last_error"]

    admin = {"authorization": f"Bearer {operator_token}"}
    listed = httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin).json()["data"]
    assert job_id in [entry["job_id"] for entry in listed]
    assert alerts.wait_for(job_id), "operators were alerted"

    def ops_alerts() -> list[dict[str, object]]:
        return [a for a in alerts.ops() if any(e["job_id"] == job_id for e in a["entries"])]

    # Slack and the operational webhook are posted one after the other.
    deadline = time.monotonic() + 10
    while not ops_alerts() and time.monotonic() < deadline:
        time.sleep(0.05)
    ops = ops_alerts()
    assert len(ops) == 1 and ops[0]["source"] == "webhook-sender"

    receiver.behaviour.status = 200
    retried = httpx.post(f"{gateway}/v1/jobs/{job_id}/retry", headers=tenant.headers)
    assert retried.status_code == 202, retried.text
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "delivered"
    assert len(receiver.for_job(job_id)) == 4, "three failed attempts, then the retried run's success"
    listed = httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin).json()["data"]
    assert job_id not in [entry["job_id"] for entry in listed]
