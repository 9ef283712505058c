"""A streaming submit does not outlive the key or the tenant it started with: the principal is
checked again for every chunk, and the ledger refuses a disabled tenant's jobs in the jobs' own
transaction, whatever path they came by (here: the router's internal SubmitJobs, which no
gateway cache stands in front of)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, ledger_pb2, router_pb2, router_pb2_grpc
from tests.support.api import TenantKey, create_tenant, remember_secret
from tests.support.receiver import Receiver


def _item(url: str, n: int) -> gateway_pb2.SubmitWebhooksRequest:
    return gateway_pb2.SubmitWebhooksRequest(
        webhook=gateway_pb2.SendWebhookRequest(url=url, body=f'{{"n":{n}}}'.encode())
    )


def _wait_refused(gateway: str, api_key: str) -> None:
    """Until the gateway itself refuses the key (its cache heard of the change)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{gateway}/v1/jobs", headers={"authorization": f"Bearer {api_key}"}).status_code == 401:
            return
        time.sleep(0.05)
    raise AssertionError("the key was never refused")


@pytest.fixture
def notifications(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def test_a_key_revoked_mid_stream_stops_the_stream(
    gateway: str, tenant: TenantKey, receiver: Receiver, notifications: gateway_pb2_grpc.NotificationServiceStub
) -> None:
    made = httpx.post(f"{gateway}/v1/api-keys", json={"name": "streamer"}, headers=tenant.headers, timeout=10).json()
    stream_key = remember_secret(made["api_key"])
    revoked = threading.Event()

    def items() -> Iterator[gateway_pb2.SubmitWebhooksRequest]:
        yield _item(receiver.url, 0)
        revoked.wait(30)
        yield _item(receiver.url, 1)

    answers = notifications.SubmitWebhooks(items(), metadata=(("authorization", f"Bearer {stream_key}"),), timeout=60)
    first = next(answers)
    assert first.index == 0 and first.id, first
    assert httpx.delete(f"{gateway}/v1/api-keys/{made['id']}", headers=tenant.headers).status_code == 204
    _wait_refused(gateway, stream_key)
    revoked.set()
    with pytest.raises(grpc.RpcError) as ended:
        for answer in answers:
            assert not answer.id, f"item {answer.index} was admitted after the key was revoked"
    assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    jobs = httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).json()["data"]
    assert [j["id"] for j in jobs] == [first.id]


def test_admission_refuses_a_disabled_tenant_on_every_path(
    gateway: str, operator_token: str, stack: Stack, receiver: Receiver
) -> None:
    tenant = create_tenant(gateway, operator_token, "disabled-admission")
    operator = {"authorization": f"Bearer {operator_token}"}
    disabled = httpx.patch(
        f"{gateway}/admin/v1/tenants/{tenant.tenant_id}", json={"disabled": True}, headers=operator, timeout=10
    )
    assert disabled.status_code == 200, disabled.text
    submission = router_pb2.Submission(
        tenant_id=tenant.tenant_id,
        plan=common_pb2.PLAN_STARTUP,
        channel=common_pb2.CHANNEL_WEBHOOK,
        requested_priority=common_pb2.PRIORITY_NORMAL,
        webhook=common_pb2.WebhookRequest(url=receiver.url, body=b"{}", content_type="application/json"),
    )
    with grpc.insecure_channel(stack.services["router"].grpc_addr) as channel:
        answer = router_pb2_grpc.RouterServiceStub(channel).SubmitJobs(
            router_pb2.SubmitJobsRequest(submissions=[submission]), timeout=30
        )
    [outcome] = answer.outcomes
    assert not outcome.HasField("job")
    assert outcome.rejection == ledger_pb2.REJECTION_TENANT_DISABLED
    # And the tenant's own key is refused at the door.
    _wait_refused(gateway, tenant.api_key)
