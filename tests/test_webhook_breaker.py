"""A webhook target's circuit breaker: after repeated 5xx (timeouts, failed connections) its
deliveries wait (parked in the ledger, one on the bus to be the next probe) without a call and
without spending attempts, a probe now and then
asks whether it is back, and once it answers every delivery goes out. The same mechanism as
the email providers' breakers (herald.breaker). A delivery held past its retry window fails,
dead-lettered, without a call, and a rerun past a window counted from its retry: a dead target
holds nothing for ever."""

from __future__ import annotations

import time

import httpx

from herald.cli.stack import Stack
from herald.sender.waiting import CIRCUIT_OPEN
from herald.webhooks.retry_policy import HELD_PAST_WINDOW
from tests.support.api import TenantKey, metric, wait_for_reason, wait_for_status
from tests.support.receiver import Receiver

JOBS = 10
PROBES = 3
# The tenant's schedule: more attempts than the first round and the probes can spend, and a
# retry window (their sum) longer than the test, so a job can end only delivered.
DELAYS_S = [1] * 9 + [3600]
# A window of 10 s, in which the open circuit lets few of the jobs' 110 attempts through.
SHORT_DELAYS_S = [1] * 10
OPENED = 'herald_webhook_circuit_transitions_total{channel="webhook",to="open"}'
PARKED = 'herald_deliveries_parked_total{channel="webhook",reason="circuit_open"}'
# Jobs that open a dead target's circuit (fewer than its bound of calls in flight, so each is
# called), and the backlog after them: within the tenant's rate limit, many probes' worth.
OPENERS = 8
BACKLOG = 60
HOLDING = "herald_webhook_circuits_holding"


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


def test_a_delivery_held_past_its_retry_window_fails_without_a_call_and_so_does_its_rerun(
    gateway: str, tenant: TenantKey, receiver: Receiver, operator_token: str
) -> None:
    schedule = httpx.put(
        f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": SHORT_DELAYS_S}, headers=tenant.headers
    )
    assert schedule.status_code == 200, schedule.text
    receiver.behaviour.status = 503
    job_ids = [
        httpx.post(
            f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=tenant.headers
        ).json()["id"]
        for n in range(JOBS)
    ]
    jobs = [wait_for_status(gateway, tenant, job_id, timeout=90) for job_id in job_ids]
    assert [job["status"] for job in jobs] == ["failed"] * JOBS
    held = [job for job in jobs if job["attempts"][-1]["error_class"] == HELD_PAST_WINDOW]
    assert held, "every job spent its attempts: none was held past its window"
    admin = {"authorization": f"Bearer {operator_token}"}
    dead = {entry["job_id"] for entry in httpx.get(f"{gateway}/admin/v1/dead-letters", headers=admin).json()["data"]}
    for job in held:
        last = job["attempts"][-1]
        assert last["outcome"] == "skipped" and "retry window" in job["last_error"], job
        assert len(job["attempts"]) < len(SHORT_DELAYS_S) + 1, job
        # The window's end is no call: the receiver saw every attempt but that one.
        assert len(receiver.for_job(job["id"])) == len(job["attempts"]) - 1, job
        assert job["id"] in dead, "a job the window ended is dead-lettered like an exhausted one"

    # Run again while the target is still dead, each rerun has a window of its own, from its
    # retry: the circuit holds it, and when that window ends it fails again without a call
    # (a rerun that got a whole window each time it was parked was held for ever).
    for job in held:
        retried = httpx.post(f"{gateway}/v1/jobs/{job['id']}/retry", headers=tenant.headers)
        assert retried.status_code == 202, retried.text
    reruns = [wait_for_status(gateway, tenant, job["id"], timeout=90) for job in held]
    assert [job["status"] for job in reruns] == ["failed"] * len(held)
    assert all(job["run"] == 1 for job in reruns)
    ended_by_window = [job for job in reruns if job["attempts"][-1]["error_class"] == HELD_PAST_WINDOW]
    assert ended_by_window, f"no rerun was ended by its own window: {[job['attempts'][-1] for job in reruns]}"


def test_a_dead_targets_backlog_waits_parked_and_one_a_recheck_asks_for_it(
    stack: Stack, gateway: str, tenant: TenantKey, receiver: Receiver
) -> None:
    """The first jobs open the target's circuit and wait an hour to retry; the backlog sent
    after them waits parked. Then only the ledger's recheck (every reconciler pass here) asks
    the target: one parked delivery at a time comes back to be a probe, the rest stay parked
    (a backlog that all came back each recheck made 46 parks of 60 over five probes). The target
    answering one releases the backlog."""
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": [3600]}, headers=tenant.headers)
    assert schedule.status_code == 200, schedule.text
    receiver.behaviour.status = 503
    opened_before = metric(stack, "webhook-sender", OPENED)
    first = send_batch(gateway, tenant, receiver, OPENERS)
    while metric(stack, "webhook-sender", OPENED) == opened_before:
        receiver.wait_for("no such job", timeout=0.2)
    before = metric(stack, "webhook-sender", PARKED)
    backlog = send_batch(gateway, tenant, receiver, BACKLOG)
    while metric(stack, "webhook-sender", PARKED) - before < BACKLOG - 5:
        receiver.wait_for("no such job", timeout=0.2)
    parked = metric(stack, "webhook-sender", PARKED)
    # The ledger shows the circuit holding deliveries for as long as they wait, whether or not a
    # sender holds one at the moment (what the operators' alert watches for a quiet dead target).
    deadline = time.monotonic() + 30
    while metric(stack, "ledger", HOLDING) < 1:
        assert time.monotonic() < deadline, "the ledger does not show the circuit holding the backlog"
        receiver.wait_for("no such job", timeout=0.2)
    seen = len(receiver.requests)
    deadline = time.monotonic() + 60
    while len(receiver.requests) < seen + 3:
        assert time.monotonic() < deadline, "nothing asks the target: its parked backlog is never rechecked"
        receiver.wait_for("no such job", timeout=0.2)
    assert metric(stack, "webhook-sender", PARKED) - parked < BACKLOG / 2, "the parked backlog keeps coming back"

    receiver.behaviour.status = 200
    called = {r.headers.get("webhook-id") for r in receiver.requests}
    never_called = [job_id for job_id in backlog if job_id not in called]  # the others wait an hour to retry
    assert never_called and not set(first) - called
    for job_id in never_called:
        assert wait_for_status(gateway, tenant, job_id, timeout=90)["status"] == "delivered"


def send_batch(gateway: str, tenant: TenantKey, receiver: Receiver, count: int) -> list[str]:
    items = [{"url": receiver.url, "payload": {"n": n}} for n in range(count)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=tenant.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    return [str(result["id"]) for result in batch.json()["results"]]
