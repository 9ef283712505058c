"""Faults the foundation must survive: a sender killed mid-delivery, and the bus
going away while requests are accepted."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx

from herald.cli.embedded import EmbeddedNats, free_port
from herald.cli.stack import Stack
from herald.config import Settings
from herald.sender.slots import window_size
from tests.conftest import report, start_stack
from tests.support.api import TenantKey, create_tenant, unlimited_tenant, wait_for_status
from tests.support.infra import query, separate_database
from tests.support.receiver import Receiver


def test_sigkill_of_the_webhook_sender_mid_delivery_still_delivers(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    response = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": "slow"}, headers=tenant.headers
    )
    job_id = response.json()["id"]
    receiver.behaviour.first_delay[job_id] = 2.0
    # The first request may already be on its way; the delay applies to it either way.
    assert receiver.wait_for(job_id, 1, timeout=20), "the delivery never started"
    stack.kill("webhook-sender", signal.SIGKILL)
    stack.wait_healthy("webhook-sender")

    job = wait_for_status(gateway, tenant, job_id, timeout=60)
    assert job["status"] == "delivered"
    deliveries = len(receiver.for_job(job_id))
    assert 1 <= deliveries <= 2
    report(
        f"SIGKILL webhook-sender mid-delivery: job DELIVERED after {deliveries} request(s) at the receiver "
        f"({deliveries - 1} duplicate; delivery is at least once)"
    )


def test_sigkill_of_the_webhook_sender_under_load_loses_nothing(
    stack: Stack, gateway: str, operator_token: str, receiver: Receiver, infra: dict[str, str]
) -> None:
    """Hundreds of jobs on their way, the sender killed mid-stream: every job is delivered and
    DELIVERED, and the duplicates at the receiver are at most the sender's window of started
    jobs (a call that reached the receiver whose attempt the ledger had not committed yet)."""
    tenant = unlimited_tenant(gateway, operator_token, "kill-under-load")
    ids: list[str] = []
    for batch in range(3):
        items = [{"url": receiver.url, "payload": {"batch": batch, "n": n}} for n in range(200)]
        answer = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=tenant.headers, timeout=60)
        assert answer.status_code == 200, answer.text
        ids += [result["id"] for result in answer.json()["results"] if result["status"] == 202]
    assert len(set(ids)) == 600

    def arrived() -> set[str]:
        return {r.headers.get("webhook-id", "") for r in list(receiver.requests)} & set(ids)

    deadline = time.monotonic() + 60
    while len(arrived()) < 100 and time.monotonic() < deadline:
        time.sleep(0.02)
    at_kill = len(arrived())
    assert 0 < at_kill < len(ids), f"{at_kill} of {len(ids)} delivered when the sender was killed: not under load"
    stack.kill("webhook-sender", signal.SIGKILL)
    stack.wait_healthy("webhook-sender")

    deadline = time.monotonic() + 120
    while len(arrived()) < len(ids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(arrived()) == len(ids), f"lost: {len(ids) - len(arrived())} jobs never reached the receiver"
    settled: int = 0
    while time.monotonic() < deadline:
        settled = query(
            infra["database_url"],
            "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'DELIVERED'",
            ids,
        )[0][0]
        if settled == len(ids):
            break
        time.sleep(0.2)
    assert settled == len(ids), f"{len(ids) - settled} jobs not DELIVERED in the ledger"
    requests = [r for r in list(receiver.requests) if r.headers.get("webhook-id") in set(ids)]
    duplicates = len(requests) - len(ids)
    window = window_size(stack_concurrency(stack))
    assert 0 <= duplicates <= window, f"{duplicates} duplicates, more than the window of {window} started jobs"
    report(
        f"SIGKILL webhook-sender under load: {len(ids)} jobs, {at_kill} delivered at the kill, all {len(ids)} "
        f"DELIVERED after the restart; {duplicates} duplicate deliveries (bound: the window of {window} started jobs)"
    )


def stack_concurrency(stack: Stack) -> int:
    """The webhook-sender's receiver slots in this stack (its settings' default unless overridden)."""
    default = Settings.model_fields["webhook_concurrency"].default
    return int(stack.config.env.get("HERALD_WEBHOOK_CONCURRENCY", default))


def test_stopping_the_bus_while_accepting_loses_nothing(
    work_dir: Path, infra: dict[str, str], receiver: Receiver
) -> None:
    """Durability without the bus: accepted jobs stay PENDING (durable in PostgreSQL),
    are published once the bus returns, and are failed with a reason if it does not
    return within the configured bound. (The rate limiter's shared state lives on the
    bus too; this stack admits when it is unreachable, the non-default setting, so
    that intake continues through the outage.)"""
    port = free_port()
    bus = EmbeddedNats(work_dir / "private-bus", port=port)
    bus_url = bus.start()
    with separate_database(infra["database_url"], "outage") as database_url:
        own = {**infra, "database_url": database_url}
        run_outage(work_dir, own, bus, bus_url, receiver)


def run_outage(work_dir: Path, infra: dict[str, str], bus: EmbeddedNats, bus_url: str, receiver: Receiver) -> None:
    stack = start_stack(
        work_dir / "outage-stack",
        infra,
        nats_url=bus_url,
        prefix_suffix="o",
        HERALD_OUTBOX_GIVE_UP_AFTER_S="8",
        HERALD_RATE_LIMIT_FAIL_OPEN="true",
    )
    try:
        gateway = stack.endpoints["gateway_http"]
        token = Path(stack.endpoints["operator_token_file"]).read_text().strip()
        tenant = create_tenant(gateway, token, "outage")

        def send(n: int) -> str:
            response = httpx.post(
                f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
            )
            assert response.status_code == 202, response.text
            return str(response.json()["id"])

        before = [send(n) for n in range(3)]
        for job_id in before:
            assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"

        bus.stop()
        during = [send(n) for n in range(3, 13)]
        # A job answered in the moment before the ledger saw the bus go is set back to PENDING
        # once its publish went unacknowledged (within 2 s).
        deadline = time.monotonic() + 15
        while (pending := count_pending(infra["database_url"], during)) < len(during) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pending == len(during), "accepted while the bus is down: durable, waiting to be published"

        bus.start()
        for job_id in during:
            assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "delivered"
        for job_id in before + during:
            assert len(receiver.for_job(job_id)) == 1, "published once the bus returned, delivered once"

        # A bus that stays away: the jobs end FAILED with the reason, never silently lost.
        bus.stop()
        stranded = [send(n) for n in range(100, 102)]
        for job_id in stranded:
            job = wait_for_status(gateway, tenant, job_id, timeout=60)
            if job["status"] != "failed":
                history = query(
                    infra["database_url"],
                    "SELECT from_status, to_status, reason, created_at::text FROM job_events"
                    " WHERE job_id = $1::uuid ORDER BY id",
                    job_id,
                )
                arrivals = [(r.body, round(r.at - time.monotonic(), 2)) for r in receiver.requests[-5:]]
                raise AssertionError(f"stranded job {job}\nhistory {history}\narrivals {arrivals}")
            assert "bus" in job["last_error"]
        report(
            f"bus outage: {len(during)} jobs accepted while NATS was down, all delivered once after it returned; "
            f"{len(stranded)} jobs accepted during a longer outage ended FAILED with the reason after the 8 s bound"
        )
    finally:
        bus.start()
        stack.stop()
        bus.stop()


def test_jobs_accepted_before_a_restart_of_every_service_are_delivered(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """Graceful restarts (SIGTERM) of the router and the sender lose nothing."""
    ids = [
        httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
        ).json()["id"]
        for n in range(20)
    ]
    for name in ("webhook-sender", "router"):
        stack.kill(name, signal.SIGTERM)
        stack.wait_healthy(name)
    time.sleep(0.2)
    for job_id in ids:
        assert wait_for_status(gateway, tenant, job_id, timeout=60)["status"] == "delivered"


def count_pending(database_url: str, job_ids: list[str]) -> int:
    rows = query(database_url, "SELECT count(*) FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'PENDING'", job_ids)
    return int(rows[0][0])
