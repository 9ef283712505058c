"""Webhook URLs pointing into private, loopback, link-local or metadata ranges are refused
when submitted — 422 problem+json on POST /v1/webhooks, on target create and on a target's
URL change, INVALID_ARGUMENT on gRPC — unless the operator allow-listed them; and checked
again when sent.

Two stacks: the session's (like `herald up`: loopback allow-listed, nothing else), and one
whose gateway allow-lists 10.0.0.0/8 and 169.254.169.254 but whose webhook-sender does not,
so those URLs get past the door and show the send-time refusal end to end (an operator would
never split the lists; it is the only way to reach the sender's check without DNS tricks).
The same four cases with a host name resolving to a private address, at both checks, are in
tests/webhooks/test_refused_targets.py."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from herald.webhooks.target_guard import literal_address, non_public_category
from tests.conftest import TEST_ENV
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.infra import separate_stack
from tests.support.receiver import Receiver

PROBLEM = "application/problem+json"
PRIVATE = ["http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/"]


def assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["status"] == 422
    assert any(e["field"].endswith("url") and "refused" in e["detail"] for e in problem["errors"]), problem


def own_host_name() -> str:
    """This machine's name, which its resolver maps to a non-public address (/etc/hosts)."""
    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    assert addresses and all(non_public_category(literal_address(a)) for a in addresses if literal_address(a)), (  # type: ignore[arg-type]
        f"{name} resolves to {addresses}: the test needs a name that resolves to a non-public address"
    )
    return name


@pytest.mark.parametrize("url", PRIVATE)
def test_private_and_metadata_urls_are_refused_at_submit_time(gateway: str, tenant: TenantKey, url: str) -> None:
    assert_refused(httpx.post(f"{gateway}/v1/webhooks", json={"url": url, "payload": 1}, headers=tenant.headers))
    assert_refused(httpx.post(f"{gateway}/v1/webhooks/targets", json={"url": url}, headers=tenant.headers))
    made = httpx.post(f"{gateway}/v1/webhooks/targets", json={"url": "https://example.com/h"}, headers=tenant.headers)
    assert made.status_code == 201, made.text
    patched = httpx.patch(
        f"{gateway}/v1/webhooks/targets/{made.json()['id']}", json={"url": url}, headers=tenant.headers
    )
    assert_refused(patched)
    jobs = httpx.get(f"{gateway}/v1/jobs", headers=tenant.headers).json()["data"]
    assert jobs == [], "nothing was accepted"


@pytest.mark.parametrize("url", PRIVATE)
def test_private_urls_are_refused_at_submit_time_over_grpc(stack: Stack, tenant: TenantKey, url: str) -> None:
    metadata = (("authorization", f"Bearer {tenant.api_key}"),)
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        notifications = gateway_pb2_grpc.NotificationServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            notifications.SendWebhook(
                gateway_pb2.SendWebhookRequest(url=url, body=b"{}"), metadata=metadata, timeout=10
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as refused:
            notifications.CreateWebhookTarget(
                gateway_pb2.NotificationServiceCreateWebhookTargetRequest(target=common_pb2.WebhookTarget(url=url)),
                metadata=metadata,
                timeout=10,
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_loopback_is_accepted_where_the_operator_allow_listed_it(
    gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """The session's stack allow-lists loopback (as `herald up` does): 127.0.0.1 and this
    machine's own name are accepted and delivered."""
    for url in (receiver.url, receiver.url.replace("127.0.0.1", own_host_name())):
        sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": url, "payload": 1}, headers=tenant.headers)
        assert sent.status_code == 202, sent.text
        assert wait_for_status(gateway, tenant, sent.json()["id"])["status"] == "delivered"


@pytest.fixture(scope="module")
def split_stack(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    with separate_stack(
        work_dir,
        infra,
        "guard",
        {**TEST_ENV, "HERALD_WEBHOOK_ALLOW_LOOPBACK": "false"},
        service_env={"gateway": {"HERALD_TARGET_ALLOW": "10.0.0.0/8, 169.254.169.254/32"}},
    ) as stack:
        yield stack


@pytest.fixture(scope="module")
def split_tenant(split_stack: Stack) -> TenantKey:
    token = Path(split_stack.endpoints["operator_token_file"]).read_text().strip()
    return create_tenant(split_stack.endpoints["gateway_http"], token, "guard")


def test_loopback_and_a_name_resolving_to_it_are_refused_when_not_allow_listed(
    split_stack: Stack, split_tenant: TenantKey, receiver: Receiver
) -> None:
    gateway = split_stack.endpoints["gateway_http"]
    for url in (receiver.url, receiver.url.replace("127.0.0.1", own_host_name())):
        body: dict[str, Any] = {"url": url, "payload": 1}
        assert_refused(httpx.post(f"{gateway}/v1/webhooks", json=body, headers=split_tenant.headers))
        assert_refused(httpx.post(f"{gateway}/v1/webhooks/targets", json={"url": url}, headers=split_tenant.headers))
    assert receiver.requests == []


@pytest.mark.parametrize("url", PRIVATE)
def test_allow_listed_at_the_door_is_still_refused_by_the_sender(
    split_stack: Stack, split_tenant: TenantKey, url: str
) -> None:
    gateway = split_stack.endpoints["gateway_http"]
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": url, "payload": 1}, headers=split_tenant.headers)
    assert sent.status_code == 202, "the gateway's allow-list admits it"
    job = wait_for_status(gateway, split_tenant, sent.json()["id"])
    assert job["status"] == "failed" and job["attempt_count"] == 1, "a refused target is not retried"
    [attempt] = job["attempts"]
    assert attempt["error_class"] == "refused_by_guard"
    assert attempt["outcome"] == "permanent_failure"
    assert "webhook target refused" in job["last_error"]
