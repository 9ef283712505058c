"""Every webhook attempt is recorded with its status code, duration, the receiver's response
headers and the start of its body (both capped), and the class of failure — readable on
GET /v1/jobs/{id} and on gRPC GetJob; what Herald sent (headers, secrets) is never recorded."""

from __future__ import annotations

import grpc
import httpx

from herald.cli.embedded import free_port
from herald.cli.stack import Stack
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver

SECRET_HEADER_VALUE = "Bearer tenant-secret-token-0123456789"


def test_attempts_record_what_the_receiver_answered(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    receiver.behaviour.status = 503
    receiver.behaviour.headers = {"X-Request-Id": "req-42", "Set-Cookie": "session=receiver-secret"}
    receiver.behaviour.body = b"overloaded " + b"x" * 10_000
    secret = httpx.post(f"{gateway}/v1/webhook-secret", headers=tenant.headers)
    assert secret.status_code in (200, 201), secret.text
    sent = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": {"n": 1}, "headers": {"Authorization": SECRET_HEADER_VALUE}},
        headers=tenant.headers,
    )
    job_id = sent.json()["id"]
    assert receiver.wait_for(job_id, 1)
    receiver.behaviour.status = 200
    receiver.behaviour.body = b'{"ok":true}'
    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "delivered"
    first, last = job["attempts"][0], job["attempts"][-1]
    assert first["status_code"] == 503 and first["error_class"] == "http_status"
    assert first["response_headers"]["x-request-id"] == "req-42"
    assert "set-cookie" not in first["response_headers"], "cookies are never recorded"
    assert first["response_excerpt"].startswith("overloaded xxx")
    assert len(first["response_excerpt"].encode()) == 4096, "the body excerpt is capped at 4 KiB"
    assert first["duration_ms"] >= 0
    assert last["status_code"] == 200 and last["error_class"] is None
    assert last["response_excerpt"] == '{"ok":true}'
    text = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=tenant.headers).text
    assert SECRET_HEADER_VALUE not in text and "receiver-secret" not in text
    assert "x-webhook-signature" not in text.lower(), "nothing Herald sent is recorded"

    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        found = gateway_pb2_grpc.NotificationServiceStub(channel).GetJob(
            gateway_pb2.NotificationServiceGetJobRequest(id=job_id), metadata=metadata, timeout=10
        )
    assert found.attempts[0].error_class == "http_status"
    assert found.attempts[0].response_headers["x-request-id"] == "req-42"
    assert found.attempts[0].response_excerpt == first["response_excerpt"]


def test_attempts_without_an_answer_are_classed(gateway: str, tenant: TenantKey, receiver: Receiver) -> None:
    closed = f"http://127.0.0.1:{free_port()}/hook"
    refused = httpx.post(f"{gateway}/v1/webhooks", json={"url": closed, "payload": 1}, headers=tenant.headers)
    job = wait_for_status(gateway, tenant, refused.json()["id"], timeout=60)
    assert [a["error_class"] for a in job["attempts"]] == ["connect"] * 3
    assert all(a["status_code"] is None and a["response_headers"] is None for a in job["attempts"])

    # Slower than the sender's timeout (3 s in the tests), every time.
    receiver.behaviour.delay_path = ("/slow", 4.0)
    slow = receiver.url.replace("/hook", "/slow")
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": slow, "payload": 1}, headers=tenant.headers)
    job = wait_for_status(gateway, tenant, sent.json()["id"], timeout=60)
    assert job["status"] == "failed"
    assert [a["error_class"] for a in job["attempts"]] == ["timeout"] * 3
