"""A webhook target's circuit breaker: after repeated 5xx (timeouts, failed connections) its
deliveries wait (parked in the ledger, one on the bus to be the next probe) without a call and
without spending attempts, a probe now and then
asks whether it is back, and once it answers every delivery goes out. The same mechanism as
the email providers' breakers (herald.breaker)."""

from __future__ import annotations

import httpx

from herald.cli.stack import Stack
from herald.sender.waiting import CIRCUIT_OPEN
from tests.support.api import TenantKey, metric, wait_for_reason, wait_for_status
from tests.support.receiver import Receiver

JOBS = 10
PROBES = 3
# The tenant's schedule: more attempts than the first round and the probes can spend, so a job
# can end only delivered.
DELAYS_S = [1] * 10
OPENED = 'herald_webhook_circuit_transitions_total{channel="webhook",to="open"}'


def test_an_open_breaker_spends_no_attempts_and_a_probe_closes_it(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": DELAYS_S}, headers=tenant.headers)
    assert schedule.status_code == 200, schedule.text
    receiver.behaviour.status = 503
    opened_before = metric(stack, "webhook-sender", OPENED)
    job_ids = [
        httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
        ).json()["id"]
        for n in range(JOBS)
    ]
    # The first round fails and opens the breaker; from then on a probe now and then is the only
    # call, while every job's retry (1 s) comes due again and again.
    while len(receiver.requests) < JOBS + PROBES:
        receiver.wait_for("no such job", timeout=0.5)
    assert metric(stack, "webhook-sender", OPENED) > opened_before
    # A job held back by the open breaker says so in its record.
    assert wait_for_reason(gateway, tenant, job_ids, CIRCUIT_OPEN), "no job's record says the circuit holds it"

    receiver.behaviour.status = 200
    jobs = [wait_for_status(gateway, tenant, job_id, timeout=90) for job_id in job_ids]
    assert [job["status"] for job in jobs] == ["delivered"] * JOBS
    for job in jobs:
        # Every attempt recorded is a call the receiver saw: a delivery held by the breaker spent none.
        assert len(job["attempts"]) == len(receiver.for_job(job["id"])), job
