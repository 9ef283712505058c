"""What the console's job and target pages read, through HTTP and gRPC: a webhook job reads
back the request it sends (headers masked, payload, content type; never the sealed headers)
and when its next attempt is due; a target reads back its breaker's state as the senders noted
it on the deliveries they hold back."""

from __future__ import annotations

import base64
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import httpx

from herald.cli.stack import Stack
from herald.sender.waiting import CIRCUIT_OPEN
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import TenantKey, wait_for_reason, wait_for_status
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, subscribe

SECRET_HEADER = "Bearer sk_live_abcdef123456"


def read(gateway: str, tenant: TenantKey, path: str) -> dict[str, Any]:
    answer = httpx.get(f"{gateway}{path}", headers=tenant.headers, timeout=10)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def test_a_job_reads_back_what_it_sent_and_when_it_is_due(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    subscribe(gateway, tenant, receiver.url, ["shop.*"], headers={"Authorization": SECRET_HEADER})
    published = publish(gateway, tenant, "shop.sold.v1", payload={"sku": "<b>42</b>"})
    job_id = published["deliveries"][0]["job_id"]
    wait_for_status(gateway, tenant, job_id, {"delivered"})
    job = read(gateway, tenant, f"/v1/jobs/{job_id}")
    assert job["payload"] == {"sku": "<b>42</b>"}
    assert base64.b64decode(job["payload_base64"]) == receiver.wait_for(job_id)[0].body
    assert job["content_type"] == "application/json"
    assert job["headers"]["Authorization"] == "Bearer ****3456"
    assert job["headers"]["X-Herald-Event-Type"] == "shop.sold.v1"
    assert job["next_attempt_at"] is None
    listed = read(gateway, tenant, f"/v1/jobs?event_id={published['event_id']}")["data"]
    assert listed[0]["id"] == job_id and listed[0]["payload"] is None and listed[0]["headers"] is None

    # A failed attempt with an hour to wait: the job says when the next one is due.
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": [3600]}, headers=tenant.headers)
    assert schedule.status_code == 200, schedule.text
    receiver.behaviour.status = 503
    waiting = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": 1}}, headers=tenant.headers
    ).json()
    receiver.wait_for(waiting["id"])
    for _ in range(150):
        due = read(gateway, tenant, f"/v1/jobs/{waiting['id']}")
        if due["next_attempt_at"]:
            break
        time.sleep(0.2)
    assert due["status"] == "queued" and due["next_attempt_at"] > due["updated_at"], due

    mine = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        sent = api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=job_id), metadata=mine).job
        assert sent.webhook.body == base64.b64decode(job["payload_base64"])
        assert sent.webhook.headers["Authorization"] == "Bearer ****3456"
        assert sent.webhook.sealed_headers == b""
        queued = api.GetJob(gateway_pb2.NotificationServiceGetJobRequest(id=waiting["id"]), metadata=mine).job
        assert queued.HasField("next_attempt_at")


def test_a_target_reads_back_its_open_breaker(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    schedule = httpx.put(
        f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": [1] * 9 + [3600]}, headers=tenant.headers
    )
    assert schedule.status_code == 200, schedule.text
    ids = subscribe(gateway, tenant, receiver.url, ["outage.*"])
    target_path = f"/v1/webhooks/targets/{ids['target']}"
    fresh = read(gateway, tenant, target_path)
    assert fresh["breaker"] == "closed" and fresh["last_success_at"] is None
    receiver.behaviour.status = 503
    # All at once: published one by one on a busy machine, the ten took longer than the breaker's
    # cool-down, its probe failed too, and the target was disabled (3 s of failing) before the last.
    with ThreadPoolExecutor(10) as pool:
        events = list(pool.map(lambda n: publish(gateway, tenant, "outage.v1", payload={"n": n}), range(10)))
    job_ids = [event["deliveries"][0]["job_id"] for event in events]
    assert wait_for_reason(gateway, tenant, job_ids, CIRCUIT_OPEN), "no delivery is held by the breaker"
    target = read(gateway, tenant, target_path)
    assert target["breaker"] == "open" and target["failing_since"] and target["last_success_at"] is None, target
    (listed,) = [t for t in read(gateway, tenant, "/v1/webhooks/targets")["data"] if t["id"] == ids["target"]]
    assert listed["breaker"] == "open"
    mine = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        request = gateway_pb2.NotificationServiceGetWebhookTargetRequest(target_id=ids["target"])
        assert api.GetWebhookTarget(request, metadata=mine).target.breaker == "open"

    receiver.behaviour.status = 200
    for job_id in job_ids:
        wait_for_status(gateway, tenant, job_id, {"delivered"}, timeout=90)
    target = read(gateway, tenant, target_path)
    # The success that ended the streak is the target's last success (the same report wrote both).
    assert target["breaker"] == "closed" and target["failing_since"] is None and target["last_success_at"], target
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        assert api.GetWebhookTarget(request, metadata=mine).target.HasField("last_success_at")
