"""Deliveries step aside while clients wait on the accept path in numbers (`herald.intake`):
a gateway with many submissions waiting says so on the bus, and a sender that hears it takes
no new job until it stops, for at most `HERALD_INTAKE_HOLD_MAX_S` at a time; nothing is lost,
only started later.

The gateway's side runs on the session's stack. The senders' side runs on a stack of its own,
whose bus the test announces on as a busy gateway would, so that the hold lasts as long as the
test says and no other test's deliveries wait for it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import pytest

from herald.cli.stack import Stack
from herald.intake import ANNOUNCE_EVERY_S, QUIET_S, IntakeHold
from tests.conftest import TEST_ENV
from tests.support.api import TenantKey, create_tenant, wait_for_status
from tests.support.fake_clock import Clock
from tests.support.infra import separate_stack
from tests.support.receiver import Receiver

MAX_HOLD_S = 4.0
BURST = 160


def test_a_sender_holds_while_announcements_come_and_not_past_the_bound() -> None:
    clock = Clock()
    hold = IntakeHold(max_hold_s=2.0, clock=clock)
    assert hold.wait_s() == 0, "nothing announced: take work"
    hold.heard()
    assert hold.wait_s() == pytest.approx(QUIET_S)
    clock.now += QUIET_S
    assert hold.wait_s() == 0, "the announcements stopped: take work again"
    # Announced without a pause: held for the bound, then free for as long whatever is announced.
    held_for = 0.0
    while True:
        hold.heard()
        if hold.wait_s() == 0:
            break
        clock.now += ANNOUNCE_EVERY_S
        held_for += ANNOUNCE_EVERY_S
    assert held_for == pytest.approx(2.0, abs=ANNOUNCE_EVERY_S * 1.5)
    for _ in range(int(2.0 / ANNOUNCE_EVERY_S) - 1):
        hold.heard()
        assert hold.wait_s() == 0, "after a full hold the sender delivers for as long"
        clock.now += ANNOUNCE_EVERY_S
    clock.now += 2 * ANNOUNCE_EVERY_S
    hold.heard()
    assert hold.wait_s() > 0, "and may then hold again"


def test_the_hold_can_be_turned_off() -> None:
    hold = IntakeHold(max_hold_s=0)
    hold.heard()
    assert hold.wait_s() == 0


async def _listen(nats_url: str, subject: str, heard: list[float], ready: asyncio.Event, done: asyncio.Event) -> None:
    nc = await nats.connect(nats_url)
    try:

        async def on_message(_: object) -> None:
            heard.append(time.monotonic())

        await nc.subscribe(subject, cb=on_message)
        await nc.flush()
        ready.set()
        await done.wait()
        await nc.flush()
    finally:
        await nc.close()


def test_a_gateway_with_many_submissions_waiting_says_so(
    gateway: str, tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    async def scenario() -> tuple[int, int, list[str]]:
        heard: list[float] = []
        ready, done = asyncio.Event(), asyncio.Event()
        listener = asyncio.create_task(
            _listen(infra["nats_url"], f"{infra['bus_prefix']}.control.intake", heard, ready, done)
        )
        await ready.wait()
        ids: list[str] = []
        limits = httpx.Limits(max_connections=BURST)
        async with httpx.AsyncClient(headers=tenant.headers, timeout=30, limits=limits) as client:

            async def send(n: int) -> None:
                sent = await client.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": n})
                assert sent.status_code == 202, sent.text
                ids.append(sent.json()["id"])

            for n in range(5):  # one at a time: never busy
                await send(n)
            await asyncio.sleep(ANNOUNCE_EVERY_S * 2)
            quiet = len(heard)
            # Far more than the threshold at once: some are still waiting when the rest arrive.
            await asyncio.gather(*(send(n) for n in range(BURST)))
        await asyncio.sleep(ANNOUNCE_EVERY_S * 2)
        done.set()
        await listener
        return quiet, len(heard), ids

    quiet, busy, ids = asyncio.run(scenario())
    assert quiet == 0, "one request at a time is no reason for deliveries to wait"
    assert busy > 0, f"{BURST} requests sent at once make the gateway say it is busy"
    for job_id in ids:
        assert wait_for_status(gateway, tenant, job_id)["status"] == "delivered"


@pytest.fixture(scope="module")
def held_stack(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    with separate_stack(work_dir, infra, "intake", {**TEST_ENV, "HERALD_INTAKE_HOLD_MAX_S": str(MAX_HOLD_S)}) as stack:
        yield stack


@pytest.fixture(scope="module")
def held_tenant(held_stack: Stack) -> TenantKey:
    token = Path(held_stack.endpoints["operator_token_file"]).read_text().strip()
    return create_tenant(held_stack.endpoints["gateway_http"], token, "intake")


@contextlib.contextmanager
def busy_gateway(nats_url: str, prefix: str) -> Iterator[None]:
    """Announces on the bus as a gateway with many submissions waiting does, until the block ends."""
    stop = threading.Event()

    async def announce() -> None:
        nc = await nats.connect(nats_url)
        try:
            while not stop.is_set():
                await nc.publish(f"{prefix}.control.intake")
                await nc.flush()
                await asyncio.sleep(ANNOUNCE_EVERY_S)
        finally:
            await nc.close()

    thread = threading.Thread(target=lambda: asyncio.run(announce()), daemon=True)
    thread.start()
    time.sleep(0.5)  # heard by the senders
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def send(gateway: str, tenant: TenantKey, receiver: Receiver, payload: int) -> str:
    sent = httpx.post(f"{gateway}/v1/webhooks", json={"url": receiver.url, "payload": payload}, headers=tenant.headers)
    assert sent.status_code == 202, sent.text
    job_id: str = sent.json()["id"]
    return job_id


def test_deliveries_wait_while_the_accept_path_is_busy_and_go_when_it_is_not(
    held_stack: Stack, held_tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    gateway = held_stack.endpoints["gateway_http"]
    with busy_gateway(infra["nats_url"], infra["bus_prefix"] + "intake"):
        # A sender already waiting for a message when the announcements began takes that one.
        send(gateway, held_tenant, receiver, 0)
        time.sleep(0.3)
        job_id = send(gateway, held_tenant, receiver, 1)
        time.sleep(1.0)
        assert receiver.for_job(job_id) == [], "not delivered while the accept path is busy"
        job = httpx.get(f"{gateway}/v1/jobs/{job_id}", headers=held_tenant.headers).json()
        assert job["status"] == "queued" and job["attempt_count"] == 0, "accepted, waiting in the queue"
    assert len(receiver.wait_for(job_id)) == 1, "delivered once the announcements stop"
    assert wait_for_status(gateway, held_tenant, job_id)["status"] == "delivered"


def test_a_busy_accept_path_holds_deliveries_for_the_bound_at_most(
    held_stack: Stack, held_tenant: TenantKey, receiver: Receiver, infra: dict[str, str]
) -> None:
    gateway = held_stack.endpoints["gateway_http"]
    with busy_gateway(infra["nats_url"], infra["bus_prefix"] + "intake"):
        job_ids = [send(gateway, held_tenant, receiver, n) for n in range(3)]
        for job_id in job_ids:
            got = receiver.wait_for(job_id, timeout=MAX_HOLD_S * 4)
            assert len(got) == 1, "delivered while the gateway still says it is busy: the hold is bounded"
