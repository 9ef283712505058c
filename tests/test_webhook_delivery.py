"""A webhook posted to the gateway reaches a real receiver exactly once, byte for
byte, and the job reads DELIVERED with one attempt: over HTTP and over gRPC."""

from __future__ import annotations

import base64
import json
import os

import grpc
import httpx

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver


def test_http_webhook_is_delivered_once_with_the_exact_body(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    payload = {"order_id": 42, "items": [{"sku": "A-1", "qty": 2}], "note": "ünïcode ✓"}
    response = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": payload, "headers": {"X-Tenant-Trace": "abc"}},
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["status"] in {"queued", "pending"}
    assert response.headers["location"] == f"/v1/jobs/{accepted['id']}"

    job = wait_for_status(gateway, tenant, accepted["id"])
    assert job["status"] == "delivered"
    assert job["attempt_count"] == 1
    assert len(job["attempts"]) == 1
    assert job["attempts"][0]["outcome"] == "succeeded"
    assert job["attempts"][0]["status_code"] == 200

    received = receiver.for_job(accepted["id"])
    assert len(received) == 1
    assert httpx.Response(200, content=received[0].body).json() == payload
    # Compact JSON in the order the tenant wrote it.
    assert received[0].body == json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    assert received[0].headers["content-type"] == "application/json"
    assert received[0].headers["x-tenant-trace"] == "abc"


def test_opaque_bytes_arrive_byte_identical(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    raw = os.urandom(4096) + b"\x00\xff not utf-8 \xc3\x28"
    response = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload_base64": base64.b64encode(raw).decode(), "content_type": "image/x-test"},
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text
    job = wait_for_status(gateway, tenant, response.json()["id"])
    assert job["status"] == "delivered"
    [received] = receiver.for_job(job["id"])
    assert received.body == raw
    assert received.headers["content-type"] == "image/x-test"


def test_grpc_webhook_is_delivered_and_readable(stack: Stack, tenant: TenantKey, receiver: Receiver) -> None:
    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    body = b'{"via":"grpc"}'
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        notifications = gateway_pb2_grpc.NotificationServiceStub(channel)
        sent = notifications.SendWebhook(
            gateway_pb2.SendWebhookRequest(url=receiver.url, body=body), metadata=metadata, timeout=10
        )
        assert sent.status in (common_pb2.JOB_STATUS_QUEUED, common_pb2.JOB_STATUS_PENDING)
        received = receiver.wait_for(sent.id)
        assert [r.body for r in received] == [body]
        job = None
        for _ in range(100):
            job = notifications.GetJob(
                gateway_pb2.NotificationServiceGetJobRequest(id=sent.id), metadata=metadata, timeout=10
            )
            if job.job.status == common_pb2.JOB_STATUS_DELIVERED:
                break
        assert job is not None and job.job.status == common_pb2.JOB_STATUS_DELIVERED
        assert len(job.attempts) == 1
        listed = notifications.ListJobs(
            gateway_pb2.NotificationServiceListJobsRequest(page_size=10), metadata=metadata, timeout=10
        )
        assert sent.id in [j.id for j in listed.jobs]


def test_list_jobs_pages_with_a_cursor(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    ids = []
    for i in range(5):
        response = httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": i}}, headers=tenant.headers
        )
        ids.append(response.json()["id"])
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = httpx.get(f"{gateway}/v1/jobs", params=params, headers=tenant.headers).json()
        seen.extend(j["id"] for j in page["data"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == list(reversed(ids)), "newest first, each job once"


def test_a_job_reads_delivering_while_its_receiver_answers_then_delivered(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """A sender's start writes nothing to the job's row: "delivering" is what the ledger
    knows in flight. A reader still sees it while the receiver holds the call, and the
    row's one update (the outcome) ends it."""
    receiver.behaviour.delay_path = ("?hold", 1.5)  # within the stack's 3 s timeout
    response = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": receiver.url + "?hold", "payload": 1}, headers=tenant.headers
    )
    job_id = response.json()["id"]
    assert receiver.wait_for(job_id, 1, timeout=30), "the delivery never started"
    during = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers, timeout=10).json()
    assert during["status"] == "delivering"
    listed = httpx.get(f"{gateway}/v1/jobs", params={"status": "delivering"}, headers=tenant.headers).json()
    assert job_id in [j["id"] for j in listed["data"]]
    job = wait_for_status(gateway, tenant, job_id)
    assert job["status"] == "delivered"
    assert job["attempt_count"] == 1
