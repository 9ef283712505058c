"""A fairness lane's limit of unacknowledged messages is no tenant's to take.

JetStream delivers nothing new from a consumer whose `max_ack_pending` messages are all
unacknowledged, and a message handed back with a delay stays unacknowledged. Before the ledger
parked what must wait, one tenant's backlog to a dead target, cycling through the circuit's
cool-downs and retries, filled its lane's consumer and stopped every other tenant on it for as
long as the target stayed dead. Now only a probe per cool-down and short waits stay on the
bus; the rest is acknowledged and held by the ledger (herald_ledger.store.parking), released
when the target answers again.

The same for a target that answers, slowly: the backlog behind its bound of calls in flight,
refused by the sender again and again, is parked until its turn once it takes longer than
`HELD_MAX_S` to be called.

On a stack of its own: one lane (every tenant shares it) whose consumer may hold 100 messages
unacknowledged, retries parked from 1 s on, and deliveries parked behind an open circuit never
coming back on their own within the test (600 s): only the circuit closing releases them. A
sender of 8 call slots (so 40 jobs admitted make it crowded, and it refuses more to a target
at its bound), two calls in flight per target, and a backlog parked once it is more than 5 s
from its turn."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from herald.cli.stack import Stack
from herald.sender.waiting import CIRCUIT_OPEN
from tests.conftest import start_stack
from tests.support.api import create_tenant, metric, wait_for_reason, wait_for_status
from tests.support.infra import separate_database
from tests.support.receiver import Receiver
from tests.support.subscriptions import publish, subscribe
from tests.test_admission import set_limits

# More than the sender's window of started jobs (80 at 8 slots): what a sender holds never fills it.
LANE_LIMIT = 100
X_JOBS = 4 * LANE_LIMIT
Y_JOBS = 5
# X's retries: each long enough to be parked, more than the test can spend, and a retry window
# (their sum) longer than the test, which a delivery held by the circuit would otherwise outlive.
X_DELAYS_S = [2] * 9 + [3600]
PARKED = 'herald_deliveries_parked_total{channel="webhook",reason="%s"}'
# The paced target: one delivery every 10 s, so every event after the first waits 10 s and more.
PACED_PER_MIN = 6
PACED_EVENTS = 4
# The slow target: each call takes this long, two at a time, so its backlog of X_SLOW_JOBS takes
# about 40 s to deliver; what is more than 5 s from its turn is parked.
SLOW_S = 0.25
X_SLOW_JOBS = 300


@pytest.fixture(scope="module")
def lane_stack(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    with separate_database(infra["database_url"], "lane_limit") as database_url:
        running = start_stack(
            work_dir / "lane-limit-stack",
            {**infra, "database_url": database_url},
            prefix_suffix="lanes1",
            HERALD_FAIRNESS_LANES="1",
            HERALD_CONSUMER_MAX_ACK_PENDING=str(LANE_LIMIT),
            HERALD_PARK_RETRIES_FROM_S="1",
            HERALD_WEBHOOK_PARK_RECHECK_S="600",
            HERALD_RECONCILE_INTERVAL_S="0.5",
            HERALD_WEBHOOK_CONCURRENCY="8",
            HERALD_WEBHOOK_TARGET_IN_FLIGHT="2",
            HERALD_WEBHOOK_PARK_BACKLOG_S="5",
        )
        yield running
        running.stop()


@pytest.fixture
def dead() -> Iterator[Receiver]:
    running = Receiver()
    running.behaviour.status = 503
    yield running
    running.close()


def test_a_dead_targets_backlog_beyond_the_lanes_limit_stops_no_one(
    lane_stack: Stack, dead: Receiver, receiver: Receiver
) -> None:
    gateway = lane_stack.endpoints["gateway_http"]
    token = Path(lane_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "dead-target-owner")
    set_limits(gateway, token, x, rate_per_min="unlimited", webhooks_per_month="unlimited")
    y = create_tenant(gateway, token, "lane-neighbour")
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": X_DELAYS_S}, headers=x.headers)
    assert schedule.status_code == 200, schedule.text

    items = [{"url": dead.url, "payload": {"n": n}} for n in range(X_JOBS)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=x.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    x_jobs = [str(result["id"]) for result in batch.json()["results"]]
    # X's target fails, its circuit opens, and its jobs wait: parked in the ledger, not on the bus.
    assert wait_for_reason(gateway, x, x_jobs, CIRCUIT_OPEN), "no job of X's says its target's circuit holds it"

    sent = [
        httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=y.headers)
        for n in range(Y_JOBS)
    ]
    assert all(r.status_code == 202 for r in sent), [r.text for r in sent]
    y_jobs = [r.json()["id"] for r in sent]
    missing = [job_id for job_id in y_jobs if not receiver.wait_for(job_id, 1, timeout=60)]
    assert not missing, f"{len(missing)} of Y's {Y_JOBS} deliveries never arrived behind X's dead target"
    assert metric(lane_stack, "webhook-sender", PARKED % "circuit_open") > 0
    assert metric(lane_stack, "webhook-sender", PARKED % "retry") > 0

    # X's target answers again: its next probe closes the circuit, which releases X's parked
    # jobs, and every one is delivered, having spent an attempt only on a call actually made.
    dead.behaviour.status = 200
    for job_id in x_jobs:
        job = wait_for_status(gateway, x, job_id, timeout=90)
        assert job["status"] == "delivered", job
        assert len(job["attempts"]) == len(dead.for_job(job_id)), job


def test_a_slow_targets_backlog_beyond_the_lanes_limit_stops_no_one(lane_stack: Stack, receiver: Receiver) -> None:
    gateway = lane_stack.endpoints["gateway_http"]
    token = Path(lane_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "slow-target-owner")
    set_limits(gateway, token, x, rate_per_min="unlimited", webhooks_per_month="unlimited")
    y = create_tenant(gateway, token, "slow-lane-neighbour")
    slow = Receiver()
    slow.behaviour.delay_path = ("/slow", SLOW_S)
    try:
        items = [{"url": f"{slow.url}/slow", "payload": {"n": n}} for n in range(X_SLOW_JOBS)]
        batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=x.headers, timeout=60)
        assert batch.status_code == 200, batch.text
        x_jobs = [str(result["id"]) for result in batch.json()["results"]]
        # The backlog behind the slow target's bound goes to the ledger, to come back in turn.
        deadline = time.monotonic() + 60
        while metric(lane_stack, "webhook-sender", PARKED % "target_bound") == 0:
            assert time.monotonic() < deadline, "nothing behind the slow target's bound was parked"
            time.sleep(0.2)

        sent = [
            httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": {"n": n}}, headers=y.headers)
            for n in range(Y_JOBS)
        ]
        assert all(r.status_code == 202 for r in sent), [r.text for r in sent]
        missing = [r.json()["id"] for r in sent if not receiver.wait_for(r.json()["id"], 1, timeout=60)]
        assert not missing, f"{len(missing)} of Y's {Y_JOBS} deliveries never arrived behind X's slow target"
        # Y's arrived while more of X's backlog than the lane's limit was still waiting: on the bus
        # it would have held the lane until it had drained below that.
        assert len(slow.requests) < X_SLOW_JOBS - LANE_LIMIT

        # And X's backlog is delivered in full, each job once.
        for job_id in x_jobs:
            job = wait_for_status(gateway, x, job_id, timeout=180)
            assert job["status"] == "delivered", job
            assert len(slow.for_job(job_id)) == 1, job
    finally:
        slow.close()


def test_a_rate_limited_targets_backlog_waits_for_its_turns_parked(lane_stack: Stack, receiver: Receiver) -> None:
    """A target paced at 6 a minute: each of X's events after the first waits 10 s more than the
    one before, further than this stack's 5 s, so it waits parked, and all arrive at the pace."""
    gateway = lane_stack.endpoints["gateway_http"]
    token = Path(lane_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "paced-target-owner")
    subscribe(gateway, x, receiver.url, ["orders.*"], rate_limit_per_min=PACED_PER_MIN)
    events = [publish(gateway, x, "orders.created", payload={"n": n}) for n in range(PACED_EVENTS)]
    job_ids = [delivery["job_id"] for event in events for delivery in event["deliveries"]]
    assert len(job_ids) == PACED_EVENTS
    for job_id in job_ids:
        job = wait_for_status(gateway, x, job_id, timeout=120)
        assert job["status"] == "delivered", job
        assert len(receiver.for_job(job_id)) == 1, job
    assert metric(lane_stack, "webhook-sender", PARKED % "rate_limit") > 0


def test_jobs_behind_their_ordering_key_wait_parked_and_keep_their_order(
    lane_stack: Stack, dead: Receiver, receiver: Receiver
) -> None:
    """The first job of an ordering key fails and waits out its retries (parked); the jobs behind
    it wait, until its next attempt is due, parked too rather than handed back to the bus again
    and again; once its receiver answers, all go out in the key's order."""
    gateway = lane_stack.endpoints["gateway_http"]
    token = Path(lane_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "ordered-owner")
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": X_DELAYS_S}, headers=x.headers)
    assert schedule.status_code == 200, schedule.text
    key = "customer-1"
    first = httpx.post(
        f"{gateway}/v1/webhooks", json={"url": dead.url, "payload": {"n": 0}, "ordering_key": key}, headers=x.headers
    )
    behind = [
        httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": receiver.url, "payload": {"n": n}, "ordering_key": key},
            headers=x.headers,
        )
        for n in (1, 2)
    ]
    assert all(r.status_code == 202 for r in (first, *behind)), [r.text for r in (first, *behind)]
    deadline = time.monotonic() + 60
    while metric(lane_stack, "webhook-sender", PARKED % "ordering") == 0 or len(dead.requests) < 2:
        assert time.monotonic() < deadline, "the jobs behind the failing one were not parked"
        time.sleep(0.2)
    assert not receiver.requests, "a job went out before the earlier one of its key"

    dead.behaviour.status = 200
    ids = [first.json()["id"], *(r.json()["id"] for r in behind)]
    for job_id in ids:
        assert wait_for_status(gateway, x, job_id, timeout=60)["status"] == "delivered"
    arrivals = [dead.for_job(ids[0])[-1].at, receiver.for_job(ids[1])[0].at, receiver.for_job(ids[2])[0].at]
    assert arrivals == sorted(arrivals), "the key's order was kept"


def test_a_sender_the_target_answers_brings_back_what_another_parked(
    lane_stack: Stack, dead: Receiver, receiver: Receiver
) -> None:
    """X's target fails and its circuit parks X's backlog, and a job of an ordering key among
    them (the key's next job, to another receiver, waits for it, parked too); then the sender
    that parked them is gone (stopped here; another replica, or a restart, in production) and
    the target answers a sender whose circuit never opened, so no circuit closes. The parked
    jobs come back all the same (they would otherwise wait for their recheck, 600 s on this
    stack): the ledger releases the lane it was answered on, and the key's next job with it."""
    gateway = lane_stack.endpoints["gateway_http"]
    token = Path(lane_stack.endpoints["operator_token_file"]).read_text().strip()
    x = create_tenant(gateway, token, "parked-by-another")
    set_limits(gateway, token, x, rate_per_min="unlimited", webhooks_per_month="unlimited")
    schedule = httpx.put(f"{gateway}/v1/webhooks/retry-schedule", json={"delays_s": X_DELAYS_S}, headers=x.headers)
    assert schedule.status_code == 200, schedule.text
    parked_before = metric(lane_stack, "webhook-sender", PARKED % "circuit_open")
    items = [{"url": dead.url, "payload": {"n": n}} for n in range(LANE_LIMIT // 2)]
    batch = httpx.post(f"{gateway}/v1/webhooks/batch", json={"items": items}, headers=x.headers, timeout=60)
    assert batch.status_code == 200, batch.text
    x_jobs = [str(result["id"]) for result in batch.json()["results"]]
    deadline = time.monotonic() + 60
    while metric(lane_stack, "webhook-sender", PARKED % "circuit_open") <= parked_before + 10:
        assert time.monotonic() < deadline, "nothing was parked behind X's open circuit"
        time.sleep(0.2)
    ordered_before = metric(lane_stack, "webhook-sender", PARKED % "ordering")
    key = {"ordering_key": "customer-2"}
    ordered = [
        httpx.post(f"{gateway}/v1/webhooks", json={"url": url, "payload": {"n": n}, **key}, headers=x.headers)
        for n, url in enumerate((dead.url, receiver.url))
    ]
    assert all(r.status_code == 202 for r in ordered), [r.text for r in ordered]
    deadline = time.monotonic() + 60
    while metric(lane_stack, "webhook-sender", PARKED % "ordering") == ordered_before:
        assert time.monotonic() < deadline, "the key's second job was not parked behind its first"
        time.sleep(0.2)

    lane_stack.kill("webhook-sender", signal.SIGTERM)  # stopped, its circuit with it
    dead.behaviour.status = 200
    lane_stack.wait_healthy("webhook-sender")  # started again by the stack's supervisor
    ordered_ids = [r.json()["id"] for r in ordered]
    for job_id in [*x_jobs, *ordered_ids]:
        job = wait_for_status(gateway, x, job_id, timeout=90)
        assert job["status"] == "delivered", job
    for job_id in x_jobs:
        assert len(wait_for_status(gateway, x, job_id)["attempts"]) == len(dead.for_job(job_id))
    assert dead.for_job(ordered_ids[0])[-1].at < receiver.for_job(ordered_ids[1])[0].at, "the key's order was kept"
