"""An attempt that keeps its sender busy for longer than the bus's AckWait (a slow receiver, a
wait for a free slot) still runs once: the sender keeps the message in progress from its pull
to its acknowledgement, so JetStream never hands a second copy to run beside the first. The stack
keeps its work stream at limits retention (HERALD_STREAM_RETENTION=limits): what was acknowledged
leaves it by the ledger's purge (herald.bus.acknowledged), messages in progress staying."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import nats
import pytest
from nats.js.api import RetentionPolicy

from herald.cli.stack import Stack
from herald.config import nats_servers
from tests.conftest import start_stack
from tests.support.api import create_tenant, wait_for_status
from tests.support.bus_faults import work_stream
from tests.support.receiver import Receiver

ACK_WAIT_S = 1.5
RECEIVER_DELAY_S = 1.0


@pytest.fixture(scope="module")
def slow_stack(work_dir: Path, infra: dict[str, str]) -> Iterator[Stack]:
    """One delivery slot, AckWait 1.5 s: a job waits up to a second for the slot, then a second
    for the receiver, so its time in hand is well past AckWait."""
    stack = start_stack(
        work_dir / "slow-stack",
        infra,
        prefix_suffix="s",
        HERALD_WEBHOOK_ACK_WAIT_S=str(ACK_WAIT_S),
        HERALD_WEBHOOK_TIMEOUT_S="1.4",
        HERALD_WEBHOOK_CONCURRENCY="1",
        HERALD_STREAM_RETENTION="limits",
        HERALD_WORK_PURGE_INTERVAL_S="0.5",
    )
    yield stack
    stack.stop()


def test_an_attempt_longer_than_ack_wait_is_made_once(
    slow_stack: Stack, receiver: Receiver, infra: dict[str, str]
) -> None:
    gateway = slow_stack.endpoints["gateway_http"]
    token = Path(slow_stack.endpoints["operator_token_file"]).read_text().strip()
    tenant = create_tenant(gateway, token, "slow-receiver")
    receiver.behaviour.delay_path = ("/slow", RECEIVER_DELAY_S)
    stream = work_stream(slow_stack.config.bus_prefix)
    sent = [
        httpx.post(
            f"{gateway}/v1/webhooks",
            json={"url": f"{receiver.url}/slow", "payload": {"n": n}},
            headers=tenant.headers,
            timeout=10,
        )
        for n in range(5)
    ]
    assert all(r.status_code == 202 for r in sent), [r.text for r in sent]
    job_ids = [r.json()["id"] for r in sent]
    jobs = [wait_for_status(gateway, tenant, job_id, timeout=60) for job_id in job_ids]
    assert [job["status"] for job in jobs] == ["delivered"] * 5
    assert [len(job["attempts"]) for job in jobs] == [1] * 5, "each job's one attempt is recorded once"
    assert [len(receiver.for_job(job_id)) for job_id in job_ids] == [1] * 5, "each job reached the receiver once"
    # All acknowledged: the purge leaves the limits-retention stream empty.
    deadline = time.monotonic() + 30
    while (held := stream_messages(infra["nats_url"], stream)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert held == 0, "acknowledged work left the stream"


def stream_messages(nats_url: str, stream: str) -> int:
    async def read() -> int:
        nc = await nats.connect(nats_servers(nats_url))
        try:
            js = nc.jetstream(timeout=5)
            info = await js.stream_info(stream)
            assert info.config.retention == RetentionPolicy.LIMITS
            return int(info.state.messages)
        finally:
            await nc.close()

    return asyncio.run(read())
