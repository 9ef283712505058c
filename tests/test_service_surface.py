"""What every service offers operators: gRPC health and reflection, Prometheus
metrics, and typed settings that refuse a dangerous combination."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from herald.cli.stack import SERVICES, Stack
from herald.config import Settings
from herald.ids import created_at_of, new_id
from tests.support.api import TenantKey, wait_for_status
from tests.support.receiver import Receiver

EXPECTED_SERVICES = {
    # One ledger process serves its five services on one port.
    "ledger": (
        "herald.v1.LedgerJobsService",
        "herald.v1.LedgerTenantsService",
        "herald.v1.LedgerSubscriptionsService",
        "herald.v1.LedgerProvidersService",
        "herald.v1.LedgerInboundService",
    ),
    "router": ("herald.v1.RouterService",),
    "webhook-sender": ("herald.v1.WebhookSenderService",),
    "email-sender": ("herald.v1.EmailSenderService",),
    "verifier": ("herald.v1.VerifierService",),
    "gateway": ("herald.v1.NotificationService",),
}


@pytest.mark.parametrize("name", SERVICES)
def test_service_has_health_reflection_and_metrics(stack: Stack, name: str) -> None:
    service = stack.services[name]
    with grpc.insecure_channel(service.grpc_addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service_name in ("", *EXPECTED_SERVICES[name]):
            answer = health.Check(health_pb2.HealthCheckRequest(service=service_name), timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        [listed] = list(
            reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        )
        names = {s.name for s in listed.list_services_response.service}
        assert {*EXPECTED_SERVICES[name], "grpc.health.v1.Health"} <= names
    metrics = httpx.get(f"http://127.0.0.1:{service.env['HERALD_METRICS_PORT']}/metrics", timeout=5)
    assert metrics.status_code == 200
    assert "herald_rpc_duration_seconds" in metrics.text


def test_metrics_count_accepted_and_delivered_jobs(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": 1}, headers=tenant.headers)
    wait_for_status(gateway, tenant, sent.json()["id"])

    def scrape(name: str) -> str:
        return httpx.get(f"http://127.0.0.1:{stack.services[name].env['HERALD_METRICS_PORT']}/metrics").text

    assert 'herald_jobs_accepted_total{channel="webhook"}' in scrape("router")
    assert 'route="/v1/webhooks"' in scrape("gateway")
    sender = scrape("webhook-sender")
    assert 'herald_deliveries_total{channel="webhook",outcome="succeeded",provider="webhook"}' in sender
    assert 'herald_accept_to_delivered_seconds_count{channel="webhook"}' in sender
    assert 'herald_attempts_per_job_count{channel="webhook",status="delivered"}' in sender


def test_job_ids_carry_their_acceptance_time() -> None:
    before = time.time()
    job_id = str(new_id())
    created = created_at_of(job_id)
    assert created is not None and before - 0.01 <= created <= time.time() + 0.01
    assert created_at_of("not-a-uuid") is None


def test_ack_wait_must_outlast_the_http_timeout() -> None:
    with pytest.raises(ValueError, match="ACK_WAIT"):
        Settings(webhook_timeout_s=30, webhook_ack_wait_s=10)


def test_herald_migrate_is_idempotent(infra: dict[str, str]) -> None:
    env = {**os.environ, "DATABASE_URL": infra["database_url"]}
    herald = str(Path(sys.executable).parent / "herald")
    for _ in range(2):
        done = subprocess.run([herald, "migrate"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "schema is current" in done.stdout
