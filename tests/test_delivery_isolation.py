"""One tenant's receiver that accepts the connection and never answers costs no other tenant
its deliveries: the webhook-sender's calls to that receiver are bounded (its target's bound of
calls in flight), and the jobs waiting behind that bound hold no call slot, so another tenant's
deliveries to a receiver that answers go out while every call to the silent one hangs.

On the run's patient stack (tests/conftest.py): the default slots and bounds, and a call to a
receiver may hang for 10 minutes, so every call to the silent receiver is still open when the
other tenant's deliveries are checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.config import Settings
from herald.sender.waiting import AT_TARGET_BOUND
from herald.v1 import gateway_pb2, gateway_pb2_grpc
from tests.support.api import create_tenant, metric, wait_for_reason, wait_for_status
from tests.support.receiver import Receiver
from tests.support.silent_receiver import SilentReceiver
from tests.support.subscriptions import publish, subscribe

X_JOBS = 150  # more than the sender's call slots (HERALD_WEBHOOK_CONCURRENCY's default)
Y_JOBS = 20
TARGET_BOUND = Settings.model_fields["webhook_target_in_flight"].default


def sender_gauge(stack: Stack, name: str) -> float:
    return metric(stack, "webhook-sender", f'herald_sender_{name}{{channel="webhook"}}')


@pytest.fixture
def silent() -> Iterator[SilentReceiver]:
    running = SilentReceiver()
    yield running
    running.close()


def test_a_silent_receiver_holds_up_no_other_tenant(
    patient_stack: Stack, silent: SilentReceiver, receiver: Receiver
) -> None:
    gateway = patient_stack.endpoints["gateway_http"]
    token = Path(patient_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "silent-receiver-owner")
    y = create_tenant(gateway, token, "fast-receiver-owner")

    items = [{"url": silent.url, "payload": {"n": n}} for n in range(X_JOBS)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=x.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    assert silent.wait_for_requests(TARGET_BOUND, timeout=60) == TARGET_BOUND, "X's calls reach its receiver"

    with httpx.Client(timeout=30) as client:
        sent = [
            client.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=y.headers)
            for n in range(Y_JOBS)
        ]
    assert all(r.status_code == 202 for r in sent), [r.text for r in sent]
    y_jobs = [r.json()["id"] for r in sent]
    missing = [job_id for job_id in y_jobs if not receiver.wait_for(job_id, 1, timeout=90)]
    assert not missing, f"{len(missing)} of Y's {Y_JOBS} deliveries never arrived behind X's silent receiver"

    # All of that while every call to X's receiver was still held open, and no more of them made
    # than its target's bound: the rest of X's jobs wait without holding a slot.
    assert silent.closed_by_sender == 0, "a call to the silent receiver ended: the check proves nothing"
    assert silent.open == TARGET_BOUND
    assert len(silent.requests) == TARGET_BOUND
    # What an operator sees meanwhile: the silent receiver's calls in flight, X's other jobs held
    # behind its bound, and the sender's window of started jobs not full, so no tenant's next
    # message waits for a place in it.
    assert sender_gauge(patient_stack, "calls_in_flight") >= TARGET_BOUND
    assert sender_gauge(patient_stack, "calls_held") > 0
    assert TARGET_BOUND <= sender_gauge(patient_stack, "jobs_in_hand") < sender_gauge(patient_stack, "window")
    for job_id in y_jobs:
        assert wait_for_status(gateway, y, job_id, timeout=60)["status"] == "delivered"
    # X's jobs not called yet say why in their record (looked for until one does: the notes are
    # batched to the ledger in the background).
    waiting = [str(r["id"]) for r in batch.json()["results"] if str(r["id"]) not in set(silent.requests)]
    job = wait_for_reason(gateway, x, waiting, AT_TARGET_BOUND)
    # Started by the sender ("delivering") and waiting for a call, or not started yet ("queued").
    assert job is not None and job["status"] in ("queued", "delivering") and job["attempts"] == [], job


def test_a_target_bounds_its_own_calls_within_the_operators_maximum(
    patient_stack: Stack, silent: SilentReceiver, receiver: Receiver
) -> None:
    """A tenant sets its target's `max_in_flight` (HTTP, gRPC): the sender keeps that many calls
    to it open and no more, and never more than the operator's maximum."""
    gateway = patient_stack.endpoints["gateway_http"]
    token = Path(patient_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "bounded-target-owner")
    y = create_tenant(gateway, token, "bounded-target-neighbour")
    over = Settings.model_fields["webhook_target_in_flight_max"].default + 1
    refused = httpx.post(
        f"{gateway}/v1/webhooks/targets", json={"url": silent.url, "max_in_flight": over}, headers=x.headers
    )
    assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json", refused.text
    ids = subscribe(gateway, x, silent.url, ["orders.*"], max_in_flight=3)
    shown = httpx.get(f"{gateway}/v1/webhooks/targets/{ids['target']}", headers=x.headers).json()
    assert shown["max_in_flight"] == 3
    for n in range(12):
        publish(gateway, x, "orders.created", payload={"n": n})
    assert silent.wait_for_requests(3, timeout=60) == 3

    def neighbour_delivered() -> None:
        sent = [
            httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": n}, headers=y.headers)
            for n in range(3)
        ]
        for response in sent:
            assert receiver.wait_for(response.json()["id"], 1, timeout=60), "a neighbour's delivery never arrived"

    neighbour_delivered()
    assert (len(silent.requests), silent.open, silent.closed_by_sender) == (3, 3, 0)

    with grpc.insecure_channel(patient_stack.endpoints["gateway_grpc"]) as channel:
        api = gateway_pb2_grpc.NotificationServiceStub(channel)
        updated = api.UpdateWebhookTarget(
            gateway_pb2.NotificationServiceUpdateWebhookTargetRequest(target_id=ids["target"], max_in_flight=5),
            metadata=(("authorization", f"Bearer {x.api_key}"),),
        ).target
    assert updated.max_in_flight == 5
    assert silent.wait_for_requests(5, timeout=60) == 5
    neighbour_delivered()
    assert (len(silent.requests), silent.open, silent.closed_by_sender) == (5, 5, 0)
