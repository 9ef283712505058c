"""Outbound webhook policy, end to end: private and metadata targets are refused when
submitted, 4xx fails at once, 5xx is retried on the schedule
(compressed in tests) and then fails, a 2xx after failures delivers."""

from __future__ import annotations

import httpx
import pytest

from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver


@pytest.mark.parametrize(
    "url", ["http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/"]
)
def test_non_public_targets_are_refused_when_submitted(gateway: str, tenant: TenantKey, url: str) -> None:
    """The send-time refusal of the same targets: tests/test_webhook_submit_guard.py and
    tests/webhooks/test_refused_targets.py."""
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": url, "payload": 1}, headers=tenant.headers)
    assert sent.status_code == 422, sent.text
    assert sent.headers["content-type"].startswith("application/problem+json")
    assert "10.0.0.1" not in sent.json()["detail"] or "private" in sent.json()["detail"]


@pytest.mark.parametrize(("status", "attempts"), [(400, 1), (410, 1), (503, 3)])
def test_failures_are_classified_and_retried_on_schedule(
    gateway: str, tenant: TenantKey, receiver: Receiver, status: int, attempts: int
) -> None:
    receiver.behaviour.status = status
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job = wait_for_status(gateway, tenant, sent.json()["id"], timeout=60)
    assert job["status"] == "failed"
    assert job["attempt_count"] == attempts
    assert len(receiver.for_job(job["id"])) == attempts
    assert f"receiver answered {status}" in job["last_error"]


def test_a_transient_failure_then_success_delivers(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    receiver.behaviour.status = 503
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    job_id = sent.json()["id"]
    assert receiver.wait_for(job_id, 1)
    receiver.behaviour.status = 200
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "delivered"
    assert [a["outcome"] for a in job["attempts"]][-1] == "succeeded"
    assert job["attempts"][0]["outcome"] == "transient_failure"
