"""Webhooks out of attempts: the dead-letter stream, a FAILED row and one operator
alert; nothing leaves by itself; a manual retry runs the job again and delivers. The operator's
dead-letter detail shows custom header values masked."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx

from herald.cli.stack import Stack
from tests.standins.alerts import AlertReceiver
from tests.support.api import TenantKey, remember_secret, wait_for_status
from tests.support.receiver import Receiver


def test_exhausted_webhook_is_dead_lettered_alerted_and_retried_by_hand(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver, alerts: AlertReceiver, operator_token: str
) -> None:
    receiver.behaviour.status = 503
    credential = remember_secret(f"Bearer {secrets.token_hex(16)}")
    sent = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": {"n": 1}, "headers": {"Authorization": credential}},
        headers=tenant.headers,
    )
    job_id = sent.json()["id"]
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "failed" and job["attempt_count"] == 3
    assert "gave up after 3 attempts" in job["last_error"]

    admin = {"authorization": f"Bearer {operator_token}"}
    listed = httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin).json()["data"]
    assert job_id in [entry["job_id"] for entry in listed]
    # A cursor no list gave is a 4xx, never a 5xx: "¹" passes str.isdigit() but is no number (found by the fuzzer).
    for odd in ("\u00b9", "9" * 40):
        refused = httpx.get(f"{gateway}/admin/v1/dead-letters", params={"cursor": odd}, headers=admin)
        assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json", odd
    # The operator sees the work message with the header value masked, never the value.
    detail = httpx.get(f"{gateway}/admin/v1/dead-letters/{job_id}", headers=admin)
    assert detail.json()["payload"]["request"]["headers"] == {"Authorization": f"Bearer ****{credential[-4:]}"}
    assert credential[7:] not in detail.text and "sealed_headers" not in detail.json()["payload"]["request"]
    assert alerts.wait_for(job_id), "operators were alerted"
    # `herald dlq show` gives the body as the receiver would read it, not as base64.
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "herald"), "dlq", "show", job_id, "--json"],
        env={
            **os.environ,
            "HERALD_GATEWAY_GRPC": stack.endpoints["gateway_grpc"],
            "HERALD_OPERATOR_TOKEN": operator_token,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["payload"]["request"]["body"] == {"n": 1}

    def ops_alerts() -> list[dict[str, object]]:
        return [a for a in alerts.ops() if any(e["job_id"] == job_id for e in a.get("entries", []))]

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


def test_a_job_dead_lettered_again_after_a_retry_gets_a_second_entry(
    gateway: str, tenant: TenantKey, receiver: Receiver, operator_token: str
) -> None:
    """The work message carries the run, so the second dead-lettering (run 1) is stored in
    the stream under its own message id instead of being dropped as a duplicate of run 0."""
    receiver.behaviour.status = 503
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 2}}, headers=tenant.headers)
    job_id = sent.json()["id"]
    assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "failed"
    assert httpx.post(f"{gateway}/v1/jobs/{job_id}/retry", headers=tenant.headers).status_code == 202
    assert receiver.wait_for(job_id, 4)
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "failed" and job["run"] == 1

    admin = {"authorization": f"Bearer {operator_token}"}
    listed = httpx.get(
        f"{gateway}/admin/v1/dead-letters",
        params={"include_retried": "true", "tenant_id": tenant.tenant_id},
        headers=admin,
    ).json()["data"]
    entries = sorted((e for e in listed if e["job_id"] == job_id), key=lambda e: e["run"])
    assert [e["run"] for e in entries] == [0, 1], "two dead-letter entries, one per run"
    assert entries[0]["stream_sequence"] != entries[1]["stream_sequence"], "two messages in the stream"
    assert entries[0]["retried_at"] is not None and entries[1]["retried_at"] is None
    detail = httpx.get(f"{gateway}/admin/v1/dead-letters/{job_id}", headers=admin).json()
    assert detail["run"] == 1 and detail["payload"] is not None, "the second entry's work message is in the stream"
    assert detail["payload"]["run"] == 1
